#!/bin/bash
# straggler-device.sh - on the two-GPU machine: a 2-rank NCCL job whose rank 1
# loads slower (tests/gpu/straggler_nccl.py) in one xpcap record under
# torchrun. --by idle: rank 0 waits for rank 1 in its all-reduces and rank
# 1's top idle cause is its loader; --by overlap: both ranks' all-reduce ran
# partly under the side matmuls. The run comes back as a fixture.
#   CARRY=.devcarry/e2e OUT=/tmp/out bash tests/gpu/straggler-device.sh
. "$(dirname "$(realpath "$0")")/device-env.sh" straggler
run="$R/job"
"$C/xpcap" record -q -F 999 -o "$run" -- torchrun --nproc-per-node 2 "$G/straggler_nccl.py" --steps 30
"$X" ingest -q "$run"
for view in idle overlap launch op; do "$X" report --by $view --top 6 "$run"; done
"$X" report --by idle --format json --top 0 "$run" > "$R/idle.json"
"$X" report --by overlap --format json "$run" > "$R/overlap.json"
python3 - "$R/idle.json" "$R/overlap.json" <<'PY'
import json, sys
idle = {d["rank"]: d for d in json.load(open(sys.argv[1]))["devices"]}
over = {d["rank"]: d for d in json.load(open(sys.argv[2]))["devices"]}
bad = 0
def say(ok, what):
    global bad
    bad += not ok
    print(("ok   " if ok else "FAIL ") + what)
w0 = sum(c["ns"] for c in idle[0]["causes"] if c["cause"] == "rank" and "rank 1" in c["where"])
say(w0 > 0.5 * 30 * 6e6 * 0.5, f"rank 0 waited {w0} ns for rank 1 (about 6 ms a step)")
top1 = idle[1]["causes"][0]
say(top1["cause"] == "host" and "load_batch" in top1["where"], f"rank 1's top idle cause: {top1}")
for r in (0, 1):
    say(over[r]["overlapped_ns"] > 0, f"rank {r}: {over[r]['overlapped_ns']} ns of "
        f"{over[r]['communication_ns']} ns communication under compute, {over[r]['exposed_ns']} exposed")
sys.exit(1 if bad else 0)
PY
rc=$?
mkdir -p "$OUT/fixture"
cp "$run/meta.json" "$OUT/fixture/"
xz -9 -c "$run/xpcorr.db" > "$OUT/fixture/device.db.xz"
exit $rc
