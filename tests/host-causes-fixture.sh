#!/bin/bash
# host-causes-fixture.sh - issue 39 on a real training loop from the H200
# (fixtures/h200-host-causes: tests/gpu/host_causes.py, three host causes the
# program timed itself, recorded as root at the defaults and ingested there
# by tests/gpu/host-causes-device.sh): tests/gpu/check-host-causes.py on it:
# augment() and save_checkpoint() named at their functions within 10% of
# the program's own timings over the steady steps, under 5% of idle time
# left unnamed.
#   host-causes-fixture.sh XPCORR FIXTURE_DIR TESTS_GPU_DIR
set -eu
xpcorr=$1; fixture=$2; gpu=$3
[ -f "$fixture/device.db.xz" ] || { echo "skip: no fixture $fixture"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
xz -dc "$fixture/device.db.xz" > "$tmp/xpcorr.db"
python3 "$gpu/check-host-causes.py" "$xpcorr" "$tmp/xpcorr.db" "$fixture/truth.json"
