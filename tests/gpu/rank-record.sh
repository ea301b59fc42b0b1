#!/bin/bash
# rank-record.sh ARGS - one rank of straggler-device.sh's MERGE=1 job: torchrun
# --no-python starts this with RANK set; it records the rank in a run of its own
# (PROG: the program in tests/gpu, default straggler_nccl.py).
exec "$C/xpcap" record -q -F 999 -o "$R/rank$RANK" -- python3 "$G/${PROG:-straggler_nccl.py}" "$@"
