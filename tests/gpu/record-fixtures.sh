#!/bin/bash
# record-fixtures.sh - on the GPU machine: record the bundled CUDA workload and
# a small PyTorch loop with the real xpcap, ingest them THERE (unwinding and
# symbolization need the machine's own libcuda, libcupti and libtorch), and
# bring back the runs and their databases as fixtures/ for the offline tests.
#   CARRY=.devcarry/e2e OUT=/tmp/out bash tests/gpu/record-fixtures.sh
# CARRY: xpcap (-Dstatic_bpf), libxpcupti.so, xpcorr, workload, and lib/ with
# the shared libraries xpcorr needs that the GPU machine lacks (libdw, ...).
set -u
C=$(realpath "${CARRY:-.devcarry/e2e}")
OUT=${OUT:-/tmp/xp-fixtures-out}
R=/tmp/xp-fixtures
rm -rf "$R"; mkdir -p "$R" "$OUT"
exec > >(tee "$OUT/fixtures.log") 2>&1
xpcorr() { LD_LIBRARY_PATH="$C/lib" "$C/xpcorr" "$@"; }
echo "== versions"; uname -r; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__)'

echo "== workload"
"$C/xpcap" record -q -F 999 -o "$R/h100-workload" -- "$C/workload"; echo "rc=$?"
"$C/workload" --truth > "$R/h100-workload/truth.json"
echo "== torch loop (20 steps), then the same loop under torch.profiler alone"
"$C/xpcap" record -q -F 999 -o "$R/h100-torch" -- python3 tests/gpu/torch_loop.py --steps 20; echo "rc=$?"
python3 tests/gpu/torch_loop.py --steps 20 --profile /tmp/prof.json 2>&1 | grep profiler_cuda_events \
  | tee "$R/h100-torch/torch-profiler-count.txt"

echo "== the same loop on 1024x1024 tensors (the second run of the diff fixture)"
"$C/xpcap" record -q -F 999 -o "$R/h100-torch-1024" -- python3 tests/gpu/torch_loop.py --steps 20 --size 1024; echo "rc=$?"
echo "== launch stack copy sizes: share of GPU time reaching Python"
for sz in 8192 16384 32768 65528; do
  "$C/xpcap" record -q -F 99 --launch-call-graph dwarf,$sz -o "$R/copy-$sz" -- python3 tests/gpu/torch_loop.py --steps 5 >/dev/null
  xpcorr ingest "$R/copy-$sz" >/dev/null 2>&1
  echo "copy $sz: $(python3 tests/gpu/python-share.py "$R/copy-$sz/xpcorr.db" | head -1)"
  du -sh "$R/copy-$sz/cpu.xpr"; rm -rf "$R/copy-$sz"
done

for run in h100-workload h100-torch h100-torch-1024; do
  echo "== $run: ingest, info, report"
  /usr/bin/time -f "ingest: %e s, %M KiB peak" bash -c "LD_LIBRARY_PATH=$C/lib $C/xpcorr ingest $R/$run"
  xpcorr info "$R/$run" | grep -E "symbolization|unwound|lost|records" -A0
  xpcorr report --top 8 --frames 6 "$R/$run" | tee "$R/$run/report.txt"
  xpcorr report --format json --top 0 --frames 12 "$R/$run" > "$R/$run/report.json"
  python3 tests/gpu/python-share.py "$R/$run/xpcorr.db"
  # the fixture: the raw run without the 7 MB kallsyms copy, and the db made here
  mv "$R/$run/xpcorr.db" "$R/$run/device.db"
  rm -f "$R/$run/kallsyms"
  du -sh "$R/$run"
done
tar czf "$OUT/fixtures.tgz" -C "$R" h100-workload h100-torch h100-torch-1024
ls -la "$OUT"
