#!/bin/bash
# pylines-device.sh - on the GPU machine, at xpcap's default settings: are the
# Python lines of launch stacks there, and right? For the PyTorch test loop and
# a library's model (tests/gpu/hf_model.py: transformers GPT-2 generate and a
# LLaMA forward): outputs unchanged under xpcap, kernel counts against
# torch.profiler's, the share of GPU time with a Python line, and the lines
# against the ground truth of pylines-truth.py (check-pylines.py); the walk's
# counts from `xpcorr info`. Databases are ingested here.
#   CARRY=.devcarry/e2e OUT=/tmp/out bash tests/gpu/pylines-device.sh
#   ONLY=torch ...      the PyTorch loop alone
. "$(dirname "$(realpath "$0")")/device-env.sh" pylines
echo "== versions"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c 'import torch, transformers, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "transformers", transformers.__version__)'

one() {   # one NAME SCRIPT ARGS...: record at the defaults, ingest, check
  local name=$1; shift
  local run="$R/$name"
  python3 "$@" > "$R/$name.bare.out" 2>/dev/null; echo "rc=$?" >> "$R/$name.bare.out"
  "$C/xpcap" record -q -o "$run" -- python3 "$@" > "$R/$name.rec.out" 2>/dev/null; echo "rc=$?" >> "$R/$name.rec.out"
  if cmp -s "$R/$name.bare.out" "$R/$name.rec.out"; then echo "ok   $name: output and exit status unchanged"
  else echo "FAIL $name: output differs"; diff "$R/$name.bare.out" "$R/$name.rec.out" | head -5; fi
  python3 "$@" --profile /tmp/prof.json 2>&1 >/dev/null | grep profiler_cuda_events > "$run/torch-profiler-count.txt"
  /usr/bin/time -f "ingest: %e s, %M KiB peak" "$X" ingest "$run"
  ours=$(sqlite3 "$run/xpcorr.db" "SELECT (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL)+(SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY)+(SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET)" 2>/dev/null \
    || python3 -c "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); print(sum(d.execute('SELECT count(*) FROM '+t).fetchone()[0] for t in ('CUPTI_ACTIVITY_KIND_KERNEL','CUPTI_ACTIVITY_KIND_MEMCPY','CUPTI_ACTIVITY_KIND_MEMSET')))" "$run/xpcorr.db")
  theirs=$(sed -n 's/.*profiler_cuda_events=//p' "$run/torch-profiler-count.txt")
  if [ "$ours" = "$theirs" ]; then echo "ok   $name: $ours GPU activities, as torch.profiler counts"
  else echo "FAIL $name: $ours GPU activities, torch.profiler $theirs"; fi
  "$X" info "$run" | grep -i -A6 "python"
  python3 "$G/pylines-truth.py" "$run/truth-lines.json" "$@" >/dev/null 2>&1
  python3 "$G/check-pylines.py" "$X" "$run" "$run/truth-lines.json" 99 || echo "FAIL $name: Python lines"
  "$X" report --top 4 --frames 4 "$run" | head -40
}

echo "== PyTorch loop (20 steps)"
one torch "$G/torch_loop.py" --steps 20
[ "${ONLY:-}" = torch ] && exit 0        # the loop alone (ONLY=torch)
echo "== transformers GPT-2 generate + LLaMA forward"
one hf "$G/hf_model.py" --tokens 16
echo "== the same with --python-lines off: no Python lines expected"
"$C/xpcap" record -q --python-lines off -o "$R/torch-nolines" -- python3 "$G/torch_loop.py" --steps 5 >/dev/null 2>&1
"$X" ingest "$R/torch-nolines" >/dev/null 2>&1
if python3 "$G/check-pylines.py" "$X" "$R/torch-nolines" "$R/torch/truth-lines.json" 1 >/dev/null; then
  echo "FAIL --python-lines off: Python lines were recorded"
else echo "ok   --python-lines off: no Python lines"; fi
for r in torch hf; do rm -f "$R/$r/kallsyms"; mv "$R/$r/xpcorr.db" "$R/$r/device.db"; done
tar czf "$OUT/pylines-runs.tgz" -C "$R" torch hf
