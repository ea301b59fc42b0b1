#!/bin/bash
# gloo-fixture.sh - collectives run on the host on a real job from the H200
# (fixtures/h200-gloo: tests/gpu/straggler_nccl.py --backend gloo, two ranks
# on one GPU, rank 1's loader 6 ms slower a step; its database trimmed by
# tests/gpu/trim-job-db.py): tests/gpu/check-gloo.py on it: --by rank names
# rank 1 for the all-reduce, --by wait charges >= 90% of rank 0's wait to
# rank 1's load_batch, --by idle has rank 0 waiting for rank 1. The same
# of fixtures/cpu-gloo (a CPU-only job, tests/cpu/record-gloo-fixture.sh).
#   gloo-fixture.sh XPCORR FIXTURE_DIR TESTS_GPU_DIR
set -eu
xpcorr=$1; fixture=$2; gpu=$3
[ -f "$fixture/device.db.xz" ] || { echo "skip: no fixture $fixture"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
xz -dc "$fixture/device.db.xz" > "$tmp/xpcorr.db"
python3 "$gpu/check-gloo.py" "$xpcorr" "$tmp/xpcorr.db"
