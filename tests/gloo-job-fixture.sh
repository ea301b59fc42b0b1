#!/bin/bash
# gloo-job-fixture.sh - xpcorr job on a real two-rank gloo job recorded
# rank by rank on the H200 (fixtures/h200-gloo-ranks: the ranks' summaries,
# written by tests/gpu/gloo-job-device.sh; rank 1's loader 6 ms slower a
# step): tests/gpu/check-gloo.py on the summaries alone: --by rank names
# rank 1, --by wait charges >= 90% of rank 0's wait to rank 1's load_batch
# (each rank's own start-up, different apart, charged to no other wait).
#   gloo-job-fixture.sh XPCORR FIXTURE_DIR TESTS_GPU_DIR
set -eu
xpcorr=$1; fixture=$2; gpu=$3
[ -f "$fixture/xpsum-rank0.db.xz" ] || { echo "skip: no fixture $fixture"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for r in 0 1; do
	mkdir "$tmp/rank$r"
	xz -dc "$fixture/xpsum-rank$r.db.xz" > "$tmp/rank$r/xpsum.db"
done
python3 "$gpu/check-gloo.py" "$xpcorr" - "$tmp/rank0" "$tmp/rank1"
