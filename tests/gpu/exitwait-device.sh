#!/bin/bash
# exitwait-device.sh - issue 38 on the GPU machine, with libxpcupti.so under
# CUDA_INJECTION64_PATH (no xpcap, so no BPF needed), main's library and
# this one side by side where they differ:
#  1. exit() inside a dlopen that loads libtorch_cpu (tests/marker fakes),
#     CUDA initialized, in-process launch stacks on: status 3, how fast
#  2. the workload bare and traced: output, status and exit time
#  3. cudaProfilerApi window toggled from two threads, kernels inside: no hang
#  4. a PyTorch program that turns non-dumpable halfway: which of its
#     functions' code names and launches reach the run
# The run folders come back in OUT/runs.tgz (dump them where xpcorr is).
# CARRY: libxpcupti.so, main's as libxpcupti-main.so, workload, and
# tests/marker's libexit-ctor.so and libtorch_cpu.so. Not yet run on a device
# (2026-11-28: the device tool sends the session's checkout, not a worktree).
#   CARRY=.devcarry/sec bash tests/gpu/exitwait-device.sh
set -u
C=$(realpath "${CARRY:-.devcarry/sec}")
OUT=${OUT:-/tmp/xp-exitwait-out}
R=/tmp/xp-exitwait
G=$(dirname "$(realpath "$0")")
rm -rf "$R"; mkdir -p "$R" "$OUT"
exec > >(tee "$OUT/exitwait-device.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__)'
# traced LIB RUN cmd...: under LIB, in-process launch stacks; prints status and ms
traced() {
	local lib=$1 run=$2; shift 2
	mkdir -p "$run"
	local t0=$(date +%s%N)
	CUDA_INJECTION64_PATH=$lib XPCAP_RUN_DIR=$run XPCAP_LAUNCH_STACKS=inproc \
		XPCAP_LAUNCH_COPY=8192 timeout ${T:-60} "$@" > "$run.out" 2>&1
	local rc=$?
	echo "rc=$rc in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
	tail -3 "$run.out"
}
for v in main new; do
	lib=$C/libxpcupti.so; [ $v = main ] && lib=$C/libxpcupti-main.so
	echo "== 1. $v: exit inside the dlopen of libtorch_cpu"
	T=20 LD_LIBRARY_PATH=$C traced "$lib" "$R/$v-dlexit" python3 "$G/exitwait_prog.py" dlopen-exit "$C/libexit-ctor.so"
	echo "== 2. $v: workload traced (bare first)"
	[ $v = main ] && { t0=$(date +%s%N); "$C/workload" > "$R/bare.out"; echo "bare rc=$? in $(( ($(date +%s%N) - t0) / 1000000 )) ms"; }
	traced "$lib" "$R/$v-workload" "$C/workload"
	cmp -s "$R/bare.out" "$R/$v-workload.out" && echo "ok   output identical"
	echo "== 3. $v: cudaProfilerApi window, 2 x 300 start/stop pairs from two threads"
	XPCAP_CAPTURE_RANGE=cudaProfilerApi XPCAP_CAPTURE_RANGE_COUNT=1000000 \
		traced "$lib" "$R/$v-toggle" python3 "$G/exitwait_prog.py" toggle 300
	echo "== 4. $v: non-dumpable halfway"
	traced "$lib" "$R/$v-nodump" python3 "$G/exitwait_prog.py" nodump
	ls -l "$R/$v-nodump"
	grep -l xpsecret_after "$R/$v-nodump"/* 2>/dev/null | sed 's/^/plain text in: /'
done
tar czf "$OUT/runs.tgz" -C "$R" .
