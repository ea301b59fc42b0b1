#!/bin/bash
# selftime-device.sh - issue 42's question on the GPU machine: the footer's
# "own code per launch call" (3.5-3.8 us on the H200) against the added time
# per launch measured from outside (2.3 us): which is wrong? Records the
# launch-heavy loop (tests/gpu/torch_loop.py) with main's library (a stride
# of 64 picks the timed calls), this one (drawn at random) and this one
# timing every call (XPCAP_BENCH=selftime_all), ROUNDS times interleaved,
# with a bare run in each round: each prints the library's own time per call
# and the loop's median step time.
# CARRY: xpcap, xpcorr (+ lib/), libxpcupti.so, main's as libxpcupti-main.so.
#   CARRY=.devcarry/e2e bash tests/gpu/selftime-device.sh
. "$(dirname "$(realpath "$0")")/device-env.sh" selftime
ROUNDS=${ROUNDS:-4}
loop="$G/torch_loop.py --steps 400 --block 20"
stepus() { grep -o 'step_us=[0-9.]*' "$1" | tail -1 | cut -d= -f2; }
for r in $(seq "$ROUNDS"); do
	taskset -c 2-9 python3 $loop > /dev/null 2> "$R/bare.$r.err"
	echo "round $r bare step_us=$(stepus "$R/bare.$r.err")"
	for v in main random all; do
		lib=$C/libxpcupti.so; envs=""
		[ $v = main ] && lib=$C/libxpcupti-main.so
		[ $v = all ] && envs="XPCAP_BENCH=selftime_all"
		env $envs "$C/xpcap" record -q --force --cupti-lib "$lib" -o "$R/$v.$r" -- \
			taskset -c 2-9 python3 $loop > /dev/null 2> "$R/$v.$r.err"
		own=$("$X" dump --type gpu_status "$R/$v.$r" 2>/dev/null | grep -o "library code per launch-class call [0-9]* ns: [0-9]* at the call[^;]*; [0-9]* calls" | head -1)
		echo "round $r $v step_us=$(stepus "$R/$v.$r.err") $own"
	done
done
"$X" report --top 1 "$R/random.1" | sed -n '/^GPU time attribution/,$p' | grep -i "recording cost"
"$X" report --top 0 --format json "$R/random.1" | python3 -c "import json,sys; d=json.load(sys.stdin); print('launch calls per step:', sum(r['instances'] for r in d['rows'])/400)" 2>/dev/null
