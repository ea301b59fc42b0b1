#!/bin/sh
# views-device.sh - the analyses' speed at 10M samples on a quiet machine
# (the device machine of tests/gpu; no GPU needed): bench/views-ab of two
# xpcorr builds (A: the baseline, B: the change) on one 10M-sample run,
# first on all the machine's cores, then on two (taskset, as CI's machine
# has), then bench/scale-bench's 10M row of B on two cores.
#
#   CARRY=.devcarry/views OUT=$OUT sh bench/views-device.sh
#
# CARRY holds base/xpcorr (A), new/ (B's build tree: bin/xpcorr,
# tests/gen-run, tests/xptarget, tests/libxptarget.so,
# bench/baseline-insert, bench/correlate-bench-run) and lib/ (the shared
# libraries the binaries need). Figures land in OUT/views.
set -e
C=$(cd "$CARRY" && pwd)
B=$(dirname "$0")
O=$OUT/views
mkdir -p "$O"
export LD_LIBRARY_PATH="$C/lib"
W=$(mktemp -d /tmp/views-XXXXXX)
{ nproc; uptime; } > "$O/machine.txt"
"$C/new/tests/gen-run" scale "$C/new/tests/xptarget" "$C/new/tests/libxptarget.so" "$W/run" 10000000 42 \
	> /dev/null
"$C/new/bin/xpcorr" ingest --quiet "$W/run"
python3 "$B/views-ab" --repeat 5 "$C/base/xpcorr" "$C/new/bin/xpcorr" "$W/run" \
	> "$O/views-ab-all-cores.txt" 2>&1
taskset -c 0,1 python3 "$B/views-ab" --repeat 5 "$C/base/xpcorr" "$C/new/bin/xpcorr" "$W/run" \
	> "$O/views-ab-2-cores.txt" 2>&1
rm -rf "$W"
taskset -c 0,1 python3 "$B/scale-bench" --sizes 10M --repeat 3 --build "$C/new" \
	> "$O/scale-bench-10M-2-cores.txt" 2>&1 || echo "scale-bench failed: $?" >> "$O/machine.txt"
