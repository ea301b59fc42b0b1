#!/bin/bash
# copy-device.sh - on the GPU machine: why --by op's aten::copy_ differed from
# torch.profiler's key_averages by +5.3% on tests/gpu/idle_train.py
# (h100-2026-11-26-rerun), where every other op agreed within 1%. Runs the
# program alternately under torch.profiler (tests/gpu/copy_truth.py: its
# own run-to-run spread) and under xpcap (-F 999 as idle-device.sh, then
# the default rate), each run's copies kept copy by copy; check-copy.py
# prints the table. Results as they come: OUT/copy/*.
#   CARRY=.devcarry/views OUT=/tmp/out bash tests/gpu/copy-device.sh
. "$(dirname "$(realpath "$0")")/device-env.sh" copy
mkdir -p "$OUT/copy"
P=$C/py          # the programs travel in the carry (the device has main's tree)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
truth() { python3 "$P/copy_truth.py" "$OUT/copy/$1.json" && echo "$1 done"; }
ours() {
	local run="$R/$1"; shift
	"$C/xpcap" record -q "$@" -o "$run" -- python3 "$P/idle_train.py" --steps 30 > /dev/null &&
	"$X" ingest "$run" &&
	"$X" report --by op --format json --top 0 "$run" > "$OUT/copy/$(basename "$run")-op.json" &&
	q "$run/xpcorr.db" "SELECT m.start, m.end, m.bytes, m.copyKind, m.srcKind, m.dstKind
		FROM CUPTI_ACTIVITY_KIND_MEMCPY m ORDER BY m.start" > "$OUT/copy/$(basename "$run")-copies.txt" &&
	echo "$(basename "$run") done"
}
truth t1; ours x1 -F 999; truth t2; ours x2 -F 999; truth t3; ours x3
python3 "$P/check-copy.py" "$OUT/copy"
