#!/bin/bash
# idle-fixture.sh - the step analyses on a real training loop from the H100
# (fixtures/h100-idle: tests/gpu/idle_train.py, a slow Python loader and a
# loss.item() a step, recorded and ingested there by tests/gpu/idle-device.sh,
# with torch.profiler's key_averages of the same program in ops.json):
# tests/gpu/check-idle.py on it (--by idle: the loader among the top idle
# causes, the .item() line the call that drained the queue first; --by op:
# every aten:: op's GPU time within 5% of torch.profiler's), once with its
# NVTX step ranges and once without them, where the steps come from the
# Python loop: 30 steps, the loop's first line idle_train.py:39.
#   idle-fixture.sh XPCORR FIXTURE_DIR TESTS_GPU_DIR
set -eu
xpcorr=$1; fixture=$2; gpu=$3
[ -f "$fixture/device.db.xz" ] || { echo "skip: no fixture $fixture"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/run"
cp "$fixture/meta.json" "$tmp/run/"
xz -dc "$fixture/device.db.xz" > "$tmp/run/xpcorr.db"
steps() {   # DB: steps_from steps loop_line of the device
	"$xpcorr" report --by idle --format json "$1" |
		python3 -c 'import json, sys; d = json.load(sys.stdin)["devices"]; assert len(d) == 1, d
print(d[0]["steps_from"], d[0]["steps"], d[0].get("loop_line", "-"))'
}
echo "== with NVTX step ranges"
python3 "$gpu/check-idle.py" "$xpcorr" "$tmp/run" "$fixture/ops.json" "$gpu/idle_train.py"
got=$(steps "$tmp/run/xpcorr.db")
[ "$got" = "nvtx 30 -" ] || { echo "FAIL steps: $got, want nvtx 30"; exit 1; }
# the warm-up told apart: the first step (cuBLAS and kernel loading) is over
# twice the median step and holds half the idle time; --skip-steps 1 leaves it out
"$xpcorr" report --by idle --format json "$tmp/run/xpcorr.db" | python3 -c 'import json, sys
d = json.load(sys.stdin)["devices"][0]
assert d["warmup_steps"] == 1 and d["warmup_idle_ns"] > 0.4 * d["idle_ns"], d
print("ok   warm-up: step 0, %.1f%% of idle time" % (100 * d["warmup_idle_ns"] / d["idle_ns"]))'
"$xpcorr" report --by idle --skip-steps 1 --format json "$tmp/run/xpcorr.db" | python3 -c 'import json, sys
d = json.load(sys.stdin)["devices"][0]
assert d["steps"] == 29 and d["skipped_steps"] == 1 and d["warmup_steps"] == 0, d
print("ok   --skip-steps 1: 29 steps")'
echo "== without them: steps from the Python loop"
cp "$tmp/run/xpcorr.db" "$tmp/loop.db"
python3 -c 'import sqlite3, sys; d = sqlite3.connect(sys.argv[1]); d.execute("DELETE FROM NVTX_EVENTS")
d.commit()' "$tmp/loop.db"
got=$(steps "$tmp/loop.db")
[ "$got" = "python_loop 30 idle_train.py:39 run" ] || { echo "FAIL steps: $got"; exit 1; }
echo "ok   $got"
python3 "$gpu/check-idle.py" "$xpcorr" "$tmp/loop.db" "$fixture/ops.json" "$gpu/idle_train.py"
