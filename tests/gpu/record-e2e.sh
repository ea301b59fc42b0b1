#!/bin/bash
# record-e2e.sh - on the GPU machine: record the bundled CUDA workload and the
# PyTorch loop with the real xpcap (BPF + uprobe + CUPTI), check that the
# programs behave the same with and without it, time the overhead, and bring
# the runs back as one tarball for the offline checks and fixtures.
#   CARRY=.devcarry/e2e OUT=/tmp/out bash tests/gpu/record-e2e.sh
# CARRY holds x86-64 builds made elsewhere: xpcap and xpcorr (-Dstatic_bpf),
# libxpcupti.so next to xpcap, and the workload binary.
set -u
C=${CARRY:-.devcarry/e2e}
OUT=${OUT:-/tmp/xp-e2e-out}
R=/tmp/xp-runs
rm -rf "$R"; mkdir -p "$R" "$OUT"
exec > >(tee "$OUT/e2e.log") 2>&1
echo "== machine"; uname -r; nvidia-smi -L; python3 -V
python3 -c 'import torch; print("torch", torch.__version__)'

same() {   # same NAME: stdout and exit status equal with and without xpcap
  if diff -q "$R/$1.bare.out" "$R/$1.rec.out" >/dev/null; then echo "ok: $1 output and exit status unchanged"
  else echo "FAIL: $1 differs"; diff "$R/$1.bare.out" "$R/$1.rec.out" | head; fi
}

echo "== workload"
"$C/workload" > "$R/wl.bare.out"; echo "rc=$?" >> "$R/wl.bare.out"
"$C/xpcap" record -q -F 999 -o "$R/workload" -- "$C/workload" > "$R/wl.rec.out"; echo "rc=$?" >> "$R/wl.rec.out"
same wl
"$C/workload" --truth > "$R/workload/truth.json"

echo "== torch loop"
T="python3 tests/gpu/torch_loop.py --steps 30"
$T > "$R/t.bare.out" 2> "$R/t.bare.err"; echo "rc=$?" >> "$R/t.bare.out"
"$C/xpcap" record -q -o "$R/torch" -- $T > "$R/t.rec.out" 2> "$R/t.rec.err"; echo "rc=$?" >> "$R/t.rec.out"
same t
echo "== torch loop with torch.profiler inside"
$T --profile /tmp/prof-bare.json > "$R/tp.bare.out" 2> "$R/tp.bare.err"; echo "rc=$?" >> "$R/tp.bare.out"
"$C/xpcap" record -q -o "$R/torchprof" -- $T --profile /tmp/prof-rec.json > "$R/tp.rec.out" 2> "$R/tp.rec.err"
echo "rc=$?" >> "$R/tp.rec.out"
same tp
grep -h profiler_cuda_events "$R/tp.bare.err" "$R/tp.rec.err"
grep -h xpcap-cupti "$R/tp.rec.err" | head -3

echo "== overhead: median step time (us), configurations alternated, 3 rounds"
# launch-heavy: ~107 launches per step; compute: 8192^3 bf16 matmul per step
L="$T --steps 100"
LIBONLY="env CUDA_INJECTION64_PATH=$(realpath "$C/libxpcupti.so") XPCAP_RUN_DIR=/tmp/xp-libonly"
for i in 1 2 3; do
  $L 2>&1 >/dev/null | sed -n 's/^step_us=/launch bare /p'
  rm -rf /tmp/xp-libonly; mkdir -p /tmp/xp-libonly
  $LIBONLY $L 2>&1 >/dev/null | sed -n 's/^step_us=/launch cupti-lib-only /p'
  "$C/xpcap" record -q --launch-call-graph fp -o "$R/o1" -- $L 2>&1 >/dev/null | sed -n 's/^step_us=/launch xpcap-fp /p'
  "$C/xpcap" record -q -o "$R/o2" -- $L 2>&1 >/dev/null | sed -n 's/^step_us=/launch xpcap-dwarf /p'
  "$C/xpcap" record -q -F 999 -o "$R/o3" -- $L 2>&1 >/dev/null | sed -n 's/^step_us=/launch xpcap-dwarf-999Hz /p'
  $L --profile /tmp/p.json 2>&1 >/dev/null | sed -n 's/^step_us=/launch torch.profiler /p'
  rm -rf "$R/o1" "$R/o2" "$R/o3"
done
for i in 1 2; do
  $T --mode compute --steps 20 2>&1 >/dev/null | sed -n 's/^step_us=/compute bare /p'
  "$C/xpcap" record -q -o "$R/oc" -- $T --mode compute --steps 20 2>&1 >/dev/null | sed -n 's/^step_us=/compute xpcap /p'
  $T --mode compute --steps 20 --profile /tmp/p.json 2>&1 >/dev/null | sed -n 's/^step_us=/compute torch.profiler /p'
  rm -rf "$R/oc"
done

echo "== runs"
du -sh "$R"/*/ 2>/dev/null
for d in "$R"/*/; do "$C/xpcorr" dump "$d" 2>&1 | awk '{n[$1]++} END {for (k in n) printf "%s=%d ", k, n[k]; print ""}'; done
rm -f "$R"/*/kallsyms.full 2>/dev/null
tar czf "$OUT/runs.tgz" -C "$R" workload torch torchprof
ls -la "$OUT"
