#!/bin/bash
# inproc-device.sh - on the GPU machine: `xpcap record --launch-stacks inproc`
# on the real thing, checked as the fixtures are. The CUDA workload against
# its ground truth (each kernel's launch stack through the CPU function that
# launched it) and the PyTorch loop against torch.profiler's count and the
# Python-reach floors, both by check-fixture.py on databases ingested here
# (unwinding needs this machine's libcuda and libtorch); outputs and exit
# status unchanged; then the Python reach of the uprobe's and the in-process
# stack copies side by side.
#   CARRY=.devcarry/e2e OUT=/tmp/out bash tests/gpu/inproc-device.sh
# CARRY as for record-fixtures.sh: xpcap, libxpcupti.so, xpcorr + lib/, workload.
set -u
C=$(realpath "${CARRY:-.devcarry/e2e}")
OUT=${OUT:-/tmp/xp-inproc-out}
R=/tmp/xp-inproc
rm -rf "$R"; mkdir -p "$R/ip" "$OUT"
exec > >(tee "$OUT/inproc-device.log") 2>&1
X="$R/xpcorr"   # xpcorr with its libraries, for the scripts too
printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$C/lib" "$C/xpcorr" > "$X"
chmod +x "$X"
IP="--launch-stacks inproc"
same() {   # same NAME: stdout and exit status equal with and without xpcap
  if cmp -s "$R/$1.bare.out" "$R/$1.rec.out"; then echo "ok   $1: output and exit status unchanged"
  else echo "FAIL $1: output differs"; diff "$R/$1.bare.out" "$R/$1.rec.out" | head -5; fi
}
echo "== versions"; uname -r; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

echo "== CUDA workload, launch stacks taken in-process"
W="$R/ip/h100-workload"
"$C/workload" > "$R/wl.bare.out"; echo "rc=$?" >> "$R/wl.bare.out"
"$C/xpcap" record -q -F 999 $IP -o "$W" -- "$C/workload" > "$R/wl.rec.out"; echo "rc=$?" >> "$R/wl.rec.out"
same wl
"$C/workload" --truth > "$W/truth.json"
ls -l "$W" | grep xpr
"$X" ingest "$W" && mv "$W/xpcorr.db" "$W/device.db"
"$X" dump "$W" | grep -o "launch stacks taken.*"
python3 tests/gpu/check-fixture.py "$X" "$W"

echo "== PyTorch loop (20 steps), launch stacks taken in-process"
T="python3 tests/gpu/torch_loop.py --steps 20"
P="$R/ip/h100-torch"
$T > "$R/t.bare.out" 2>/dev/null; echo "rc=$?" >> "$R/t.bare.out"
"$C/xpcap" record -q -F 999 $IP -o "$P" -- $T > "$R/t.rec.out" 2>/dev/null; echo "rc=$?" >> "$R/t.rec.out"
same t
$T --profile /tmp/prof.json 2>&1 | grep profiler_cuda_events > "$P/torch-profiler-count.txt"
ls -l "$P" | grep xpr
"$X" ingest "$P"
"$X" dump "$P" | grep -o "launch stacks taken.*"
"$X" report --top 5 --frames 5 "$P"
mv "$P/xpcorr.db" "$P/device.db"
python3 tests/gpu/check-fixture.py "$X" "$P"

echo "== Python reach, uprobe vs in-process copies, 8 KiB (5 steps each)"
for how in uprobe inproc; do
  "$C/xpcap" record -q --launch-stacks $how -o "$R/reach-$how" -- python3 tests/gpu/torch_loop.py --steps 5 >/dev/null 2>&1
  "$X" ingest -q "$R/reach-$how" 2>/dev/null || "$X" ingest "$R/reach-$how" >/dev/null 2>&1
  echo "$how: $(python3 tests/gpu/python-share.py "$R/reach-$how/xpcorr.db" | head -2 | tr '\n' ' ')"
  du -cb "$R/reach-$how"/*.xpr | tail -1
done
echo "== in-process copy sizes: Python reach, losses, launch-loop step time (3 rounds, paired with bare)"
L="python3 tests/gpu/torch_loop.py --steps 400 --block 20"
for sz in 8192 16384 32768 65528; do
  "$C/xpcap" record -q $IP --launch-call-graph dwarf,$sz -o "$R/size-$sz" -- python3 tests/gpu/torch_loop.py --steps 5 >/dev/null 2>&1
  "$X" ingest "$R/size-$sz" >/dev/null 2>&1
  echo "copy $sz: $(python3 tests/gpu/python-share.py "$R/size-$sz/xpcorr.db" | head -2 | tr '\n' ' ')"
  echo "copy $sz: $("$X" dump "$R/size-$sz" | grep -o "launch stacks taken [0-9]*.*, lost [0-9]*")"
  rm -rf "$R/size-$sz"
done
for i in 1 2 3; do
  echo "round $i bare $($L 2>&1 >/dev/null | sed -n 's/^step_us=//p')"
  for sz in 8192 16384 32768 65528; do
    rm -rf "$R/loop"
    v=$("$C/xpcap" record -q $IP --launch-call-graph dwarf,$sz -o "$R/loop" -- $L 2>&1 >/dev/null | sed -n 's/^step_us=//p')
    echo "round $i copy-$sz $v $("$X" dump "$R/loop" | grep -o "taken [0-9]*, lost [0-9]*")"
  done
done
rm -f "$R"/ip/*/kallsyms
tar czf "$OUT/inproc-runs.tgz" -C "$R/ip" h100-workload h100-torch
