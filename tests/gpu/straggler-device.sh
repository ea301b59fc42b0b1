#!/bin/bash
# straggler-device.sh - on the two- or four-GPU machine: an NCCL job whose
# rank 1 loads 6 ms slower a step (tests/gpu/straggler_nccl.py), NPROC ranks
# (default 2), STEPS steps (default 100).
#   - NPROC=2: in one xpcap record under torchrun;
#   - MERGE=1: each rank in an xpcap record of its own (torchrun --no-python
#     starts the recorder), ingested apart and merged by xpcorr merge, which
#     aligns the ranks' clocks on their collectives.
# The databases and meta.json come back in OUT/straggler-NPROC.tar (with
# MERGE=1 every rank's run and the merged job); --by idle and --by overlap
# and --by wait are checked where they are read (tests/gpu/check-straggler.py).
#   CARRY=.devcarry/e2e OUT=/tmp/out NPROC=4 MERGE=1 bash tests/gpu/straggler-device.sh
NPROC=${NPROC:-2}; STEPS=${STEPS:-100}
. "$(dirname "$(realpath "$0")")/device-env.sh" straggler-$NPROC
export C R G
mkdir -p "$R/back"
if [ "${MERGE:-0}" = 1 ]; then
	torchrun --nproc-per-node "$NPROC" --no-python bash "$G/rank-record.sh" --steps "$STEPS"
	runs=""
	for ((r = 0; r < NPROC; r++)); do
		"$X" ingest -q "$R/rank$r" & pids="${pids:-} $!"; runs="$runs $R/rank$r"
	done
	wait $pids
	"$X" merge -q -o "$R/job" $runs
	for ((r = 0; r < NPROC; r++)); do
		mkdir -p "$R/back/rank$r"; cp "$R/rank$r/meta.json" "$R/back/rank$r/"
		xz -6 -T4 -c "$R/rank$r/xpcorr.db" > "$R/back/rank$r/device.db.xz"
	done
else
	"$C/xpcap" record -q -F 999 -o "$R/job" -- torchrun --nproc-per-node "$NPROC" \
		"$G/straggler_nccl.py" --steps "$STEPS"
	"$X" ingest -q "$R/job"
fi
for view in idle overlap wait; do "$X" report --by $view --top 6 "$R/job"; done
mkdir -p "$R/back/job"; cp "$R/job/meta.json" "$R/back/job/"
xz -6 -T4 -c "$R/job/xpcorr.db" > "$R/back/job/device.db.xz"
ls -lR "$R/back"
tar -C "$R/back" -cf "$OUT/straggler-$NPROC.tar" .
