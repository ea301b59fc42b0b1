#!/bin/bash
# faults-device.sh - on the GPU machine: the faults of the reliability issue
# that need real CUDA, each recorded with the real xpcap and checked with
# xpcorr there. Prints "ok"/"FAIL" lines; the log goes to $OUT.
#   CARRY=.devcarry/e2e OUT=/tmp/out bash tests/gpu/faults-device.sh
#  1. the PyTorch loop SIGKILLed mid-run: xpcap reports 137, the run ingests
#     with what the periodic flush saved, info says what was not flushed
#  2. torch.profiler inside a recorded program (two CUPTI subscribers): same
#     output and exit status as without xpcap; who got CUPTI is said
#  3. no GPU visible (CUDA_VISIBLE_DEVICES=""): the program runs unchanged,
#     the run says why it holds no GPU data
#  4. the driver version reaches the database when libcuda is loaded RTLD_LOCAL
set -u
C=$(realpath "${CARRY:-.devcarry/e2e}")
OUT=${OUT:-/tmp/xp-faults-out}
R=/tmp/xp-faults
rm -rf "$R"; mkdir -p "$R" "$OUT"
exec > >(tee "$OUT/faults.log") 2>&1
T="python3 tests/gpu/torch_loop.py"
xpcorr() { LD_LIBRARY_PATH="$C/lib" "$C/xpcorr" "$@"; }
fails=0
check() {   # check COND_STATUS WHAT
  if [ "$1" = 0 ]; then echo "ok   $2"; else echo "FAIL $2"; fails=$((fails + 1)); fi
}

echo "== 1. SIGKILL of the recorded program"
"$C/xpcap" record -q -o "$R/killed" -- $T --steps 1000000 --warmup 0 > "$R/killed.out" 2>&1 &
xp=$!
pid=
for _ in $(seq 120); do                  # the program itself, not xpcap (whose argv holds it too)
  pid=$(pgrep -P "$xp" -f torch_loop.py | head -1)
  [ -n "$pid" ] && [ -e "$R/killed/gpu-$pid.xpr" ] && break
  sleep 0.25
done
sleep 1                                   # let it launch for a while (~80k launches/s)
echo "killing $pid ($(tr '\0' ' ' < /proc/$pid/cmdline))"
kill -9 "$pid"
wait $xp; rc=$?
check $([ "$rc" = 137 ]; echo $?) "xpcap exits 137 like the killed program (rc=$rc)"
xpcorr ingest --quiet "$R/killed" 2> "$R/killed.ingest"; cat "$R/killed.ingest"
xpcorr info "$R/killed" > "$R/killed.info"; sed -n '/^records:/,/^lost/p;/^warnings/,$p' "$R/killed.info"
kernels=$(sqlite3 "$R/killed/xpcorr.db" 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL' 2>/dev/null ||
  python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0])' "$R/killed/xpcorr.db")
check $([ "${kernels:-0}" -gt 100 ]; echo $?) "the flushed GPU records ingest: $kernels kernels"
check $(grep -q "no clean end" "$R/killed.info"; echo $?) "info says the tail was not flushed"
xpcorr report --top 3 "$R/killed" | head -12

echo "== 2. torch.profiler inside a recorded program"
$T --steps 20 --profile "$R/p-bare.json" > "$R/prof.bare.out" 2> "$R/prof.bare.err"; echo "rc=$?" >> "$R/prof.bare.out"
"$C/xpcap" record -q -o "$R/prof" -- $T --steps 20 --profile "$R/p-rec.json" > "$R/prof.rec.out" 2> "$R/prof.rec.err"
echo "rc=$?" >> "$R/prof.rec.out"
diff "$R/prof.bare.out" "$R/prof.rec.out"
check $? "stdout and exit status unchanged: $(tr '\n' ' ' < "$R/prof.bare.out")"
echo "-- torch.profiler without xpcap: $(grep profiler_cuda_events "$R/prof.bare.err")"
echo "-- torch.profiler under xpcap:   $(grep profiler_cuda_events "$R/prof.rec.err")"
grep -i "cupti\|subscriber" "$R/prof.rec.err" | head -3
xpcorr ingest --quiet "$R/prof"
xpcorr report --top 3 "$R/prof" | head -8
sqlite3 "$R/prof/xpcorr.db" "SELECT code, severity, text FROM xp_gpu_status" 2>/dev/null

echo "== 3. no GPU visible"
P="import torch; print('cuda available', torch.cuda.is_available())"
CUDA_VISIBLE_DEVICES= python3 -c "$P" > "$R/nodev.bare.out" 2>&1; echo "rc=$?" >> "$R/nodev.bare.out"
CUDA_VISIBLE_DEVICES= "$C/xpcap" record -q -o "$R/nodev" -- python3 -c "$P" > "$R/nodev.rec.out" 2> "$R/nodev.rec.err"
echo "rc=$?" >> "$R/nodev.rec.out"
diff "$R/nodev.bare.out" "$R/nodev.rec.out"
check $? "stdout and exit status unchanged: $(tr '\n' ' ' < "$R/nodev.bare.out")"
cat "$R/nodev.rec.err"
ls "$R/nodev"
xpcorr ingest --quiet "$R/nodev"
xpcorr report "$R/nodev" | tail -4
xpcorr info "$R/nodev" | sed -n '/^warnings/,$p'

echo "== 4. driver version with libcuda loaded RTLD_LOCAL (PyTorch)"
xpcorr ls "$R/prof" | tail -1
sqlite3 "$R/prof/xpcorr.db" "SELECT pid, driver_version, cuda_version FROM xp_gpu_processes" 2>/dev/null
drv=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT max(driver_version) FROM xp_gpu_processes").fetchone()[0])' "$R/prof/xpcorr.db")
check $([ "${drv:-0}" -gt 0 ]; echo $?) "driver version recorded: $drv"

echo "SUMMARY: $fails failed check(s)"
