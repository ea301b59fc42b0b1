#!/bin/sh
# op-calls.sh - `xpcorr report --by op` counts calls of each op as
# torch.profiler's key_averages does (one call of aten::addmm may make two
# CUDA calls), and the CUDA calls in their own column: on the H100 idle
# fixture, every aten:: op's calls equal ops.json's count (issue 43).
#   op-calls.sh XPCORR FIXTURES_DIR
set -eu
xpcorr=$1 fixtures=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
	"$fixtures/h100-idle/device.db.xz" "$tmp/idle.db"
"$xpcorr" report --by op --format json --top 0 "$tmp/idle.db" > "$tmp/op.json"
python3 - "$tmp/op.json" "$fixtures/h100-idle/ops.json" <<'PY'
import json, sys
ours = json.load(open(sys.argv[1]))["ops"]
truth = json.load(open(sys.argv[2]))
by_base = {}
for r in ours:      # "aten::sum_dim.IntList" is key_averages' "aten::sum"
    base = r["op"].split(".")[0]
    by_base.setdefault(base, [0, 0])
    by_base[base][0] += r["calls"]
    by_base[base][1] += r.get("cuda_calls", r["calls"])
bad = checked = 0
for name, t in sorted(truth.items()):
    if not name.startswith("aten::") or name not in by_base:
        continue
    checked += 1
    calls, cuda = by_base[name]
    ok = calls == t["count"]
    bad += not ok
    print("%s %-34s calls %4d  torch.profiler %4d  (CUDA calls %d)"
          % ("ok  " if ok else "FAIL", name, calls, t["count"], cuda))
if checked < 8:
    print("FAIL only %d aten:: ops to compare" % checked)
    sys.exit(1)
sys.exit(1 if bad else 0)
PY
