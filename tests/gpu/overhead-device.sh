#!/bin/bash
# overhead-device.sh - one device call of issue 20's measurements on the GPU
# machine, results under OUT (one call each, about 9 minutes):
#   bash tests/gpu/overhead-device.sh parts      # each part of xpcap's cost (launch loop)
#   bash tests/gpu/overhead-device.sh targets    # bare, torch.profiler [with_stack], floor, xpcap
#   bash tests/gpu/overhead-device.sh callbacks  # CUPTI's callback layers
#   bash tests/gpu/overhead-device.sh reuse      # xpcap with and without --reuse-stacks
# Each first records the PyTorch launch loop once with xpcap and prints the
# report's footer (its "Recording cost" line: xpcap's own code per launch
# call, measured in the run), then runs bench/gpu-overhead on that group
# (its defaults: blocks on the fastest CPU, a table of full-speed blocks).
# Copy OUT/overhead-GROUP.{txt,raw} into bench/results/ with the date.
GROUP=${1:?usage: overhead-device.sh parts|targets|callbacks}
. "$(dirname "$(realpath "$0")")/device-env.sh" "overhead-$GROUP"
case $GROUP in
	targets|reuse) LOOPS=${LOOPS:-launch,compute} ;;
	*) LOOPS=${LOOPS:-launch} ;;
esac
echo "== xpcap record of the launch loop: the report's footer"
"$C/xpcap" record -q -o "$R/run" -- python3 "$G/torch_loop.py" --steps 200 --block 20 > /dev/null
"$X" report --top 1 "$R/run" | sed -n '/^GPU time attribution/,$p'
"$X" dump --type gpu_status "$R/run" | grep -E "library code|launch stacks taken"
q "$R/run/xpcorr.db" "SELECT name, value FROM META_DATA_EXPORT WHERE name LIKE 'xp.%borrow%'
 OR name LIKE 'xp.stack_check%'"
echo "== bench/gpu-overhead CONFIGS=$GROUP LOOPS=$LOOPS"
CARRY="$C" OUT="$R/bench" CONFIGS=$GROUP LOOPS=$LOOPS BUDGET_S=${BUDGET_S:-480} \
	timeout $(( ${BUDGET_S:-480} + 40 )) bash "$G/../../bench/gpu-overhead" 40
echo "harness rc=$?"
cp "$R/bench/overhead.raw" "$OUT/overhead-$GROUP.raw" 2>/dev/null
cp "$R/bench/overhead.txt" "$OUT/overhead-$GROUP.txt" 2>/dev/null
cat "$OUT/overhead-$GROUP.txt" 2>/dev/null || tail -20 "$R/bench/overhead.log"
