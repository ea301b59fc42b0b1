#!/bin/bash
# nonroot-device.sh - on the GPU machine: the PyTorch loop recorded by a
# normal user (nobody, through setpriv) with the real xpcap (perf events,
# CUPTI, in-process launch stacks), against torch.profiler's count of the
# same loop and against root's eBPF run: GPU records, exact attribution and
# Python lines alike; --gpu-only too. Runs are ingested here (unwinding
# needs this machine's libcuda and libtorch).
#   CARRY=.devcarry/e2e OUT=/tmp/out bash tests/gpu/nonroot-device.sh
# CARRY as for record-fixtures.sh: xpcap, libxpcupti.so, xpcorr + lib/.
. "$(dirname "$(realpath "$0")")/device-env.sh" nonroot
NB="setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=$R/u"
mkdir -p "$R/u"; chown 65534:65534 "$R/u"; chmod 755 "$R"
# nobody must reach the carried binaries and the scripts
chmod -R a+rX "$C" "$G"
for d in "$C" "$G"; do p=$d; while [ "$p" != / ]; do chmod a+x "$p"; p=$(dirname "$p"); done; done
echo "== versions"; uname -r; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__)'
echo "kernel.perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)"

T="python3 $G/torch_loop.py --steps 20"
gpu_records() {   # RUN: kernels + copies + memsets, as check-fixture.py counts them
  q "$1/xpcorr.db" "SELECT (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL) + (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY) + (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET)"
}

echo "== torch.profiler, as nobody"
$NB $T --profile "$R/u/prof.json" > "$R/prof.out" 2> "$R/prof.err"; echo "rc=$?"
grep profiler_cuda_events "$R/prof.err"

echo "== bare, as nobody (output to compare)"
$NB $T > "$R/bare.out" 2>/dev/null; echo "rc=$?" >> "$R/bare.out"

for who in nobody root; do
  echo "== xpcap record as $who"
  run=$R/u/$who
  if [ $who = nobody ]; then
    $NB "$C/xpcap" record -F 999 -o "$run" -- $T > "$R/$who.out" 2> "$R/$who.err"; echo "rc=$?" >> "$R/$who.out"
  else
    "$C/xpcap" record -F 999 -o "$run" -- $T > "$R/$who.out" 2> "$R/$who.err"; echo "rc=$?" >> "$R/$who.out"
  fi
  cat "$R/$who.err"
  if cmp -s "$R/bare.out" "$R/$who.out"; then echo "ok   output and exit status unchanged"
  else echo "FAIL output differs"; diff "$R/bare.out" "$R/$who.out" | head -5; fi
  python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print('sampler', m.get('sampler'), 'gpu_capture_armed', m['gpu_capture_armed'])" "$run/meta.json"
  ls -l "$run" | awk '{print $3, $5, $9}' | grep -v '^ *$'
  if [ $who = nobody ]; then $NB "$X" ingest "$run" | tail -2; else "$X" ingest "$run" | tail -2; fi
  echo "gpu_records=$(gpu_records "$run") samples=$(q "$run/xpcorr.db" 'SELECT count(*) FROM xp_samples')"
  python3 "$G/python-share.py" "$run/xpcorr.db" | sed -n 1,3p
  "$X" report --by source --top 6 "$run" | sed -n '1,12p'
  "$X" export --format folded "$run" | sort -t' ' -k2 -nr | head -3 | cut -c1-240
done

echo "== --gpu-only as nobody"
$NB "$C/xpcap" record -q --gpu-only -o "$R/u/gpuonly" -- $T > /dev/null 2>&1; echo "rc=$?"
$NB "$X" ingest "$R/u/gpuonly" | tail -1
echo "gpu_records=$(gpu_records "$R/u/gpuonly")"
python3 "$G/python-share.py" "$R/u/gpuonly/xpcorr.db" | sed -n 1,2p
