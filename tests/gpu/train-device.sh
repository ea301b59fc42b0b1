#!/bin/bash
# train-device.sh - on the GPU machine: a training loop (tests/gpu/train_loop.py)
# at xpcap's default settings. Its backward runs on autograd's engine threads,
# where no Python frame exists: are those launches named for the autograd
# node, does the footer give that reason, and do counts equal torch.profiler's?
#   CARRY=.devcarry/e2e OUT=/tmp/out bash tests/gpu/train-device.sh
. "$(dirname "$(realpath "$0")")/device-env.sh" train
run="$R/train"
python3 "$G/train_loop.py" > "$R/bare.out" 2>/dev/null; echo "rc=$?" >> "$R/bare.out"
"$C/xpcap" record -q -o "$run" -- python3 "$G/train_loop.py" > "$R/rec.out" 2>/dev/null; echo "rc=$?" >> "$R/rec.out"
if cmp -s "$R/bare.out" "$R/rec.out"; then echo "ok   train: output and exit status unchanged"
else echo "FAIL train: output differs"; diff "$R/bare.out" "$R/rec.out" | head -5; fi
python3 "$G/train_loop.py" --profile /tmp/prof.json 2>&1 >/dev/null | grep profiler_cuda_events > "$run/torch-profiler-count.txt"
cp /tmp/prof.json.names.json "$OUT/torch-profiler-names.json" 2>/dev/null
"$X" ingest "$run"
ours=$(python3 -c "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); print(sum(d.execute('SELECT count(*) FROM '+t).fetchone()[0] for t in ('CUPTI_ACTIVITY_KIND_KERNEL','CUPTI_ACTIVITY_KIND_MEMCPY','CUPTI_ACTIVITY_KIND_MEMSET')))" "$run/xpcorr.db")
theirs=$(sed -n 's/.*profiler_cuda_events=//p' "$run/torch-profiler-count.txt")
if [ "$ours" = "$theirs" ]; then echo "ok   train: $ours GPU activities, as torch.profiler counts"
else echo "FAIL train: $ours GPU activities, torch.profiler $theirs"; fi
"$X" report --top 8 --stacks 2 "$run"
"$X" report --by source --top 6 "$run"
"$X" report --format json "$run" > "$OUT/train-report.json"
python3 - "$OUT/train-report.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
auto = [w for w in d.get("not_python", []) if w["reason"] == "autograd"]
named = sum(1 for r in d["rows"] for s in r.get("stacks", []) if s["frames"].startswith("autograd backward: "))
print("autograd share:", auto[0]["pct"] if auto else 0, "% of exact GPU time; rows named for the node:", named)
print("ok   train: backward named for autograd" if auto and named else "FAIL train: backward not named")
PY
mkdir -p "$OUT/fixture"
cp "$run/meta.json" "$run/torch-profiler-count.txt" "$OUT/fixture/"
xz -9 -c "$run/xpcorr.db" > "$OUT/fixture/device.db.xz"
ls -la "$OUT/fixture"
