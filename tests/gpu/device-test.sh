#!/bin/bash
# device-test.sh - run the injection library on a GPU machine and check it.
#
#   bash tests/gpu/device-test.sh [DIR]    # results under $OUT (or ./out)
#
# DIR holds libxpcupti.so, workload, xpcorr, check-workload, torch-loop.py
# (tests/gpu/prepare-carry.sh fills it; default .devcarry/cupti). Steps:
#  1. environment (GPU, driver, libraries the carried binaries need)
#  2. workload bare vs under the library: stdout and exit status identical
#  3. the run checked against the workload's ground truth (check-workload)
#  4. NVTX#125: nvtxNameOsThreadA under CUPTI's NVTX injection
#  5. per-launch overhead: tiny-kernel loop and a PyTorch loop, bare vs library
#  6. torch.profiler inside a traced PyTorch program (subscriber conflict)
# Steps never stop the script: each reports and the next runs.
D=${1:-.devcarry/cupti}
D=$(cd "$D" && pwd)
RESULTS=${OUT:-$PWD/out}
OUT=$(mktemp -d /tmp/xpcupti-device.XXXXXX)   # scratch; a few files go to RESULTS
mkdir -p "$RESULTS"
LIB=$D/libxpcupti.so
CUPTI=${CUPTI:-/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcupti.so.13}
W=$D/workload
traced() {   # traced RUN_DIR cmd...: run under $LIB, NVTX through CUPTI
	local run=$1; shift
	mkdir -p "$run"
	CUDA_INJECTION64_PATH=${LIB} XPCAP_RUN_DIR=$run NVTX_INJECTION64_PATH=$CUPTI "$@"
}
exec > >(tee "$RESULTS/device-test.log") 2>&1

echo "== 1. environment"
nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader
ldd --version | head -1
for f in "$LIB" "$W" "$D/xpcorr"; do echo "-- ldd $f"; ldd "$f" | grep -E "not found|cupti|cuda" ; done
python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)' 2>&1 | tail -1

echo "== 2. workload bare vs traced"
"$W" --truth > "$OUT/truth.json"
"$W" > "$OUT/bare.out" 2> "$OUT/bare.err"; echo "bare rc=$?"
traced "$OUT/run1" "$W" > "$OUT/traced.out" 2> "$OUT/traced.err"; echo "traced rc=$?"
cmp "$OUT/bare.out" "$OUT/traced.out" && echo "ok   stdout identical: $(cat "$OUT/bare.out")"
echo "-- traced stderr:"; cat "$OUT/traced.err"
ls -la "$OUT/run1"

echo "-- run dir missing: program unchanged, one line from the library"
CUDA_INJECTION64_PATH=$LIB XPCAP_RUN_DIR=/nonexistent/run "$W" > "$OUT/nodir.out" 2> "$OUT/nodir.err"; echo "rc=$?"
cmp "$OUT/bare.out" "$OUT/nodir.out" && echo "ok   stdout identical"; cat "$OUT/nodir.err"

echo "== 3. ground truth check"
"$D/xpcorr" dump "$OUT/run1" > "$OUT/run1.dump" 2>&1
python3 "$D/check-workload" --xpcorr "$D/xpcorr" "$OUT/run1" "$OUT/truth.json"
echo "check-workload rc=$?"
echo "-- dump lines of no known GPU type (expect none):"
grep -v -E '^(gpu_[a-z]+|lost) ' "$OUT/run1.dump" | head -5
echo "-- SIGKILL 2 s after the work: what the periodic flush saved"
traced "$OUT/run-kill" "$W" --kill-after-work > "$OUT/kill.out" 2>&1; echo "killed rc=$? (137 = SIGKILL)"
python3 "$D/check-workload" --xpcorr "$D/xpcorr" "$OUT/run-kill" "$OUT/truth.json" | grep -E "FAIL|SUMMARY|kernel k_"

echo "== 4. NVTX#125: nvtxNameOsThreadA with NVTX_INJECTION64_PATH=libcupti"
"$W" --nvtx-name-thread > "$OUT/nvtx-bare.out" 2>&1; echo "bare rc=$?"
traced "$OUT/run-nvtx" "$W" --nvtx-name-thread > "$OUT/nvtx-traced.out" 2>&1; echo "traced rc=$?"
cmp "$OUT/nvtx-bare.out" "$OUT/nvtx-traced.out" && echo "ok   nvtxNameOsThreadA under CUPTI NVTX: same output"
tail -3 "$OUT/nvtx-traced.out"

echo "== 5. overhead per launch (interleaved; marker called, no uprobe attached)"
# Each line: label value; summarized as medians and the median of pairwise
# differences (runs are interleaved so drift hits both sides alike).
: > "$OUT/bench.txt"
for i in 1 2 3 4 5 6 7; do
	echo "bare $("$W" --bench 200000 | sed 's/.*ns_per_launch=//')" >> "$OUT/bench.txt"
	echo "lib $(traced "$OUT/run-bench-$i" "$W" --bench 200000 | sed 's/.*ns_per_launch=//')" >> "$OUT/bench.txt"
	echo "lib+apitrace $(XPCAP_API_TRACE=1 traced "$OUT/run-api-$i" "$W" --bench 200000 | sed 's/.*ns_per_launch=//')" >> "$OUT/bench.txt"
	echo "torch-bare $(python3 "$D/torch-loop.py" bench 500 2>/dev/null | sed 's/.*us_per_op=//')" >> "$OUT/bench.txt"
	echo "torch-lib $(traced "$OUT/run-torch-$i" python3 "$D/torch-loop.py" bench 500 2>/dev/null | sed 's/.*us_per_op=//')" >> "$OUT/bench.txt"
	if [ -f "$D/libxpcupti-prev.so" ]; then   # optional A/B against an older build
		echo "lib-prev $(LIB=$D/libxpcupti-prev.so traced "$OUT/run-prev-$i" "$W" --bench 200000 | sed 's/.*ns_per_launch=//')" >> "$OUT/bench.txt"
		echo "torch-lib-prev $(LIB=$D/libxpcupti-prev.so traced "$OUT/run-tprev-$i" python3 "$D/torch-loop.py" bench 500 2>/dev/null | sed 's/.*us_per_op=//')" >> "$OUT/bench.txt"
		rm -rf "$OUT"/run-prev-$i "$OUT"/run-tprev-$i
	fi
	rm -rf "$OUT"/run-bench-$i "$OUT"/run-api-$i
done
python3 - "$OUT/bench.txt" <<'PY'
import statistics, sys
v = {}
for line in open(sys.argv[1]):
    k, x = line.split()
    v.setdefault(k, []).append(float(x))
for k, xs in v.items():
    print(f"{k:14s} median {statistics.median(xs):9.1f}  all {' '.join(f'{x:.1f}' for x in xs)}")
def diff(a, b, unit):
    d = [y - x for x, y in zip(v[a], v[b])]
    print(f"added per launch, {b} vs {a}: median {statistics.median(d):.2f} {unit} (pairs: {' '.join(f'{x:.2f}' for x in d)})")
diff("bare", "lib", "ns")
diff("bare", "lib+apitrace", "ns")
diff("torch-bare", "torch-lib", "us")
if "lib-prev" in v:
    diff("bare", "lib-prev", "ns")
    diff("torch-bare", "torch-lib-prev", "us")
PY
"$D/xpcorr" dump "$OUT/run-torch-1" | awk '{print $1}' | sort | uniq -c
"$D/xpcorr" dump --type lost "$OUT/run-torch-1"
echo "== 6. torch.profiler inside a traced program"
python3 "$D/torch-loop.py" profiler > "$OUT/prof-bare.out" 2> "$OUT/prof-bare.err"; echo "bare rc=$?"
traced "$OUT/run-prof" python3 "$D/torch-loop.py" profiler > "$OUT/prof-traced.out" 2> "$OUT/prof-traced.err"; echo "traced rc=$?"
cmp "$OUT/prof-bare.out" "$OUT/prof-traced.out" && echo "ok   stdout identical: $(cat "$OUT/prof-bare.out")"
echo "-- bare stderr:"; grep -v "^$" "$OUT/prof-bare.err" | tail -5
echo "-- traced stderr:"; grep -v "^$" "$OUT/prof-traced.err" | tail -8
"$D/xpcorr" dump --type gpu_status "$OUT/run-prof"
"$D/xpcorr" dump "$OUT/run-prof" | awk '{print $1}' | sort | uniq -c
echo "-- profiler started before CUDA is initialized:"
traced "$OUT/run-prof-first" python3 "$D/torch-loop.py" profiler-first > "$OUT/pf.out" 2> "$OUT/pf.err"; echo "traced rc=$?"
cmp "$OUT/prof-bare.out" "$OUT/pf.out" && echo "ok   stdout identical"
grep -v -E "^$|_warn_once|UserWarning" "$OUT/pf.err" | tail -8
"$D/xpcorr" dump --type gpu_status "$OUT/run-prof-first"
# Bring back the log (tee'd), the truth and the main run's dump.
cp "$OUT/truth.json" "$OUT/run1.dump" "$RESULTS/"
"$D/xpcorr" dump "$OUT/run-kill" > "$RESULTS/run-kill.dump" 2>&1
rm -rf "$OUT"
echo "== done"
