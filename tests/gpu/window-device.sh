#!/bin/bash
# window-device.sh - issue 30 on the GPU machine, one device call (~7 min):
#  1. --capture-range cudaProfilerApi and nvtx:NAME (first 2 ranges) on
#     window_prog.py, kernels counted against torch.profiler over the same
#     phases (ground truth), and no kernel of an outside phase (sin, add);
#  2. a CUDA program recorded with the injection library missing (a copied
#     xpcap alone) and with CUPTI already taken (torch.profiler first):
#     xpcap's first and last lines, xpcorr info's GPU part, report's warning;
#  3. the cost outside the window on the launch-heavy loop:
#     bench/gpu-overhead CONFIGS=window (bare, outside the window, no window).
#   CARRY=.devcarry/gpu-window bash tests/gpu/window-device.sh [1|3]   # a part alone; results in OUT
PART=${1:-all}
. "$(dirname "$(realpath "$0")")/device-env.sh" window-$PART
P="$G/window_prog.py"
kernels() {   # RUN: kernels, of them sin (outside), cos (inside); launch records; windows
	"$X" ingest -q "$1" >/dev/null 2>&1 || "$X" ingest "$1" 2>&1 | tail -2
	q "$1/xpcorr.db" "SELECT (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL),
	 (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName
	  WHERE s.value LIKE '%sin%'),
	 (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName
	  WHERE s.value LIKE '%cos%'),
	 (SELECT count(*) FROM xp_launches),
	 (SELECT count(*) FROM xp_gpu_status WHERE code = 9 AND detail = 1)"
}
if [ "$PART" != 3 ]; then
echo "== 1. truth: torch.profiler over each marked phase"
timeout 150 python3 "$P" --truth | tee "$R/truth.txt"
echo "== xpcap --capture-range cudaProfilerApi (first range): kernels|sin|cos|launches|opened"
timeout 150 "$C/xpcap" record -q -o "$R/prof" --capture-range cudaProfilerApi -- python3 "$P" --mark profiler
kernels "$R/prof"
"$X" dump --type gpu_status "$R/prof" | grep -i window
echo "== xpcap --capture-range nvtx:window --capture-range-count 2"
timeout 150 "$C/xpcap" record -q -o "$R/nvtx" --capture-range nvtx:window --capture-range-count 2 -- \
	python3 "$P" --mark nvtx
kernels "$R/nvtx"
echo "== CPU samples of the nvtx run: all | inside a window (status records code 9)"
q "$R/nvtx/xpcorr.db" "WITH o AS (SELECT ts, (SELECT min(c.ts) FROM xp_gpu_status c WHERE c.code = 9
 AND c.detail = 0 AND c.ts > s.ts) AS e FROM xp_gpu_status s WHERE s.code = 9 AND s.detail = 1)
 SELECT (SELECT count(*) FROM xp_samples), (SELECT count(*) FROM xp_samples x WHERE EXISTS
 (SELECT 1 FROM o WHERE x.ts >= o.ts - 1000000 AND x.ts <= o.e + 1000000))"
echo "== xpcap, no window, --mark none (every phase)"
timeout 150 "$C/xpcap" record -q -o "$R/all" -- python3 "$P" --mark none
kernels "$R/all"
echo "== --delay 1000 (past the program's end): nothing"
timeout 150 "$C/xpcap" record -q -o "$R/late" --delay 1000 -- python3 "$P" --mark none
kernels "$R/late"
echo "== 2. injection library missing: a copied xpcap alone"
mkdir -p "$R/alone"; cp "$C/xpcap" "$R/alone/"
timeout 150 "$R/alone/xpcap" record -o "$R/miss" -- python3 "$P" --mark none
"$X" ingest -q "$R/miss" >/dev/null 2>&1
"$X" info "$R/miss" | sed -n '/^gpu:/,/^processes/p'
"$X" report "$R/miss" 2>&1 | tail -3
echo "== 2. CUPTI taken: torch.profiler holds it before CUDA starts"
cat > "$R/taken.py" <<'PY'
import torch
p = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA])
p.__enter__()
x = torch.ones(1 << 16, device="cuda")
for _ in range(50):
    x = torch.sin(x)
torch.cuda.synchronize()
p.__exit__(None, None, None)
print("torch.profiler saw", sum(e.device_type == torch.autograd.DeviceType.CUDA for e in p.events()), "CUDA events")
PY
timeout 150 "$C/xpcap" record -o "$R/taken" -- python3 "$R/taken.py"
"$X" ingest -q "$R/taken" >/dev/null 2>&1
"$X" info "$R/taken" | sed -n '/^gpu:/,/^processes/p'
"$X" report "$R/taken" 2>&1 | tail -3
python3 -c "import json; m = json.load(open('$R/taken/meta.json')); print('meta gpu_problem:', m.get('gpu_problem'))"
fi
[ "$PART" = 1 ] && exit 0
echo "== 2b. CUPTI taken before CUDA starts: the program subscribes to CUPTI itself first"
cat > "$R/taken2.py" <<'PY'
import ctypes, glob, os, torch
lib = glob.glob(os.path.join(os.path.dirname(torch.__file__), "..", "nvidia", "*", "lib", "libcupti.so.13"))
cupti = ctypes.CDLL(lib[0] if lib else "libcupti.so.13")
h = ctypes.c_void_p()
print("own cuptiSubscribe:", cupti.cuptiSubscribe(ctypes.byref(h), None, None))
x = torch.ones(1 << 16, device="cuda")
for _ in range(50):
    x = torch.sin(x)
torch.cuda.synchronize()
PY
timeout 150 "$C/xpcap" record -o "$R/taken2" -- python3 "$R/taken2.py"
"$X" ingest -q "$R/taken2" >/dev/null 2>&1
"$X" info "$R/taken2" | sed -n '/^gpu:/,/^processes/p'
"$X" report "$R/taken2" 2>&1 | tail -3
echo "== 3. cost outside the window: bench/gpu-overhead CONFIGS=window"
CARRY="$C" OUT="$R/bench" CONFIGS=window LOOPS=launch BUDGET_S=${BUDGET_S:-230} \
	timeout $(( ${BUDGET_S:-230} + 40 )) bash "$G/../../bench/gpu-overhead" 30
cp "$R/bench/overhead.raw" "$OUT/overhead-window.raw" 2>/dev/null
cp "$R/bench/overhead.txt" "$OUT/overhead-window.txt" 2>/dev/null
cat "$OUT/overhead-window.txt" 2>/dev/null || tail -20 "$R/bench/overhead.log"
