#!/bin/bash
# merge-device.sh - on the GPU machine: a gloo job of 2 ranks on one GPU,
# (1) under torchrun in one xpcap record, (2) as two "hosts": two xpcap
# records started apart, one rank each, the second host's wall clock then
# made wrong by a known amount (its meta.json's realtime readings moved by
# +2.5 ms, as an NTP error would). xpcorr merge must find the 2.5 ms on the
# collectives (gloo's copy back after each all-reduce) within 50 us, and
# report the ranks side by side. Runs and databases come back in $OUT.
#   CARRY=.devcarry/e2e OUT=/tmp/out bash tests/gpu/merge-device.sh
. "$(dirname "$(realpath "$0")")/device-env.sh" merge plain
STEPS=40
if [ "${TORCHRUN:-1}" = 1 ]; then
echo "== torchrun, one record"
"$C/xpcap" record -q -o "$R/torchrun" -- torchrun --nproc-per-node 2 "$G/ddp_gloo.py" --steps $STEPS 2>&1 | grep "^rank"
"$X" ingest -q "$R/torchrun"
"$X" report --by rank "$R/torchrun" | head -14
"$X" report --by thread "$R/torchrun" | head -10
fi
echo "== two hosts: the job bare first (does it end by itself?), then two records started apart"
for rank in 0 1; do
	RANK=$rank LOCAL_RANK=0 WORLD_SIZE=2 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29532 \
	timeout 90 python3 "$G/ddp_gloo.py" --steps $STEPS > "$R/bare$rank.out" 2>&1 &
	bare="${bare:-} $!"
	sleep 1.5
done
wait $bare; echo "bare: $(cat "$R"/bare*.out | grep -c '^rank') ranks printed"
date +%T
# the store in a process of its own, as torchrun's agent holds it
MASTER_PORT=29533 WORLD_SIZE=2 timeout 150 python3 "$G/ddp_gloo.py" --store-server > "$R/store.out" 2>&1 &
sleep 2
for rank in 0 1; do
	# files, not a pipe: a process that outlives the job must not hold the script
	RANK=$rank LOCAL_RANK=0 WORLD_SIZE=2 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29533 \
	timeout 120 "$C/xpcap" record -q -o "$R/host$rank" -- python3 "$G/ddp_gloo.py" --steps $STEPS \
		--store-client > "$R/rec$rank.out" 2>&1 &
	recs="${recs:-} $!"
	sleep 1.5
done
# a hang shows where each process waits before the timeouts end it
( sleep 80; for p in $(pgrep -f "ddp_gloo|xpcap record"); do
	echo "still running at 80 s: $(ps -o pid=,ppid=,stat=,etime=,args= -p "$p" | cut -c1-150)"
	for t in /proc/"$p"/task/*; do echo "  task ${t##*/} $(cat "$t"/comm) $(cat "$t"/wchan)"; done
	head -8 /proc/"$p"/stack 2>/dev/null | sed 's/^/    /'
done ) > "$R/watchdog.out" 2>&1 &
wd=$!
wait $recs; cat "$R"/rec*.out "$R"/store.out; kill $wd 2>/dev/null; cat "$R/watchdog.out"
date +%T
timeout 200 "$X" ingest -q "$R/host0" & i0=$!; timeout 200 "$X" ingest -q "$R/host1"; wait $i0
date +%T
# the skewed host: the same run, its wall-clock readings 2.5 ms ahead (in
# meta.json and in the database ingest made of it, which stays fresh)
cp -a "$R/host1" "$R/host1-skewed"
python3 - "$R/host1-skewed" <<'PY'
import json, sqlite3, sys
m = json.load(open(sys.argv[1] + "/meta.json"))
for k in ("start_realtime_ns", "stop_realtime_ns"):
    m[k] += 2500000                  # this host's wall clock runs 2.5 ms ahead
json.dump(m, open(sys.argv[1] + "/meta.json", "w"), indent=2)
d = sqlite3.connect(sys.argv[1] + "/xpcorr.db")
d.execute("UPDATE META_DATA_EXPORT SET value = CAST(value AS INTEGER) + 2500000"
          " WHERE name IN ('meta.start_realtime_ns', 'meta.stop_realtime_ns')")
d.commit()
PY
check() {   # check JOB WANT_REFINE_NS
	local line refine method
	line=$(q "$R/$1/xpcorr.db" "SELECT refine_ns, method, matched, spread_ns, markers FROM xp_job_runs WHERE run = 1")
	refine=${line%%|*}; method=$(echo "$line" | cut -d'|' -f2)
	echo "$1: refine|method|matched|spread|markers = $line"
	err=$((refine - $2)); [ $err -lt 0 ] && err=$((-err))
	if [ "$method" = collectives ] && [ $err -le 50000 ]; then
		echo "ok   $1: clock offset measured $refine ns, known $2 ns: $err ns off"
	else
		echo "FAIL $1: clock offset measured $refine ns ($method), known $2 ns"
	fi
}
"$X" merge -o "$R/job" "$R/host0" "$R/host1"
check job 0
"$X" merge -o "$R/job-skewed" "$R/host0" "$R/host1-skewed"
check job-skewed -2500000
"$X" report --by rank "$R/job-skewed" | head -16
"$X" report --by thread "$R/job-skewed" | head -8
"$X" report --top 4 --stacks 2 "$R/job-skewed" | head -30
date +%T
"$X" export --format chrome -o "$OUT/job-skewed.json" "$R/job-skewed"
"$X" diff "$R/torchrun" "$R/job-skewed" | head -20
# the collectives once aligned: their ends within how much of each other
q "$R/job-skewed/xpcorr.db" "SELECT run, host, shift_ns, wall_ns, refine_ns, spread_ns, matched, markers FROM xp_job_runs"
tar -C "$R" -czf "$OUT/merge-runs.tgz" torchrun host0 host1 host1-skewed job job-skewed
