#!/bin/bash
# cost-profile-device.sh - on the GPU machine: where the launching thread's
# time goes under xpcap, sampled by xpcap itself (no perf there). Records the
# PyTorch launch loop at a high sampling rate with DWARF stacks twice, with
# xpcap's defaults and with the library's callbacks off (CUPTI's activity
# records only: the floor), and keeps each run's folded CPU stacks of the
# main thread; the library's own split of its time per call; the clock
# source (a clock_gettime that is not in the vDSO is a system call).
#   bash tests/gpu/cost-profile-device.sh     # OUT/cost-*.folded.xz, OUT/cost-profile-device.log
# Then, here: bench/cost-profile --under py::tiny_elementwise OUT/cost-default.folded.xz OUT/cost-floor.folded.xz
. "$(dirname "$(realpath "$0")")/device-env.sh" cost-profile
FREQ=${FREQ:-9999}
STEPS=${STEPS:-4000}
echo "== clock source: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" \
	"(available: $(cat /sys/devices/system/clocksource/clocksource0/available_clocksource))"
grep -m1 -o -w -E "constant_tsc|nonstop_tsc|tsc_known_freq" /proc/cpuinfo | sort -u | tr '\n' ' '; echo
loop() {        # NAME ENV...: one recording of the launch loop
	local name=$1
	shift
	env "$@" "$C/xpcap" record -q -F "$FREQ" --call-graph dwarf,16384 -o "$R/$name" -- \
		taskset -c 2-13 python3 "$G/../../bench/overhead-torch.py" --loops launch \
		--launch-steps "$STEPS" > /dev/null 2> "$R/$name.blocks"
	"$X" ingest --quiet "$R/$name" || echo "ingest $name failed"
	echo "== $name: $(grep -c xpbench-block "$R/$name.blocks") blocks," \
		"median wall us/step $(grep -o 'wall_us=[0-9.]*' "$R/$name.blocks" | cut -d= -f2 |
			sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"
	"$X" dump --type gpu_status "$R/$name" | grep -E "library code|launch stacks taken" | head -3
	# the main thread: the one with the most samples
	tid=$(q "$R/$name/xpcorr.db" "SELECT tid FROM xp_samples GROUP BY tid ORDER BY count(*) DESC LIMIT 1")
	# deep Python stacks make long lines: some hundred MB plain, 2 MB in xz
	"$X" export --format folded --weight cpu --root none --tid "$tid" "$R/$name" > "$R/$name.folded"
	echo "   main thread $tid: $(awk '{n += $NF} END {print n}' "$R/$name.folded") samples"
	xz -6 < "$R/$name.folded" > "$OUT/cost-$name.folded.xz"
}
loop default
loop floor XPCAP_CALLBACKS=none
