#!/bin/bash
# idle-device.sh - on the GPU machine: the analyses on a real training loop
# (tests/gpu/idle_train.py: a slow Python data loader, a loss.item() per
# step). --by idle must name the loader and the .item() line as top idle
# causes; --by op's GPU time per op within 5% of torch.profiler's
# key_averages (tests/gpu/check-idle.py); the run is kept as a fixture.
#   CARRY=.devcarry/e2e OUT=/tmp/out bash tests/gpu/idle-device.sh
. "$(dirname "$(realpath "$0")")/device-env.sh" idle
run="$R/idle"
"$C/xpcap" record -q -F 999 -o "$run" -- python3 "$G/idle_train.py" --steps 30
python3 "$G/idle_train.py" --steps 30 --profile "$R/ops.json" > /dev/null
"$X" ingest "$run"
for view in idle op launch overlap; do "$X" report --by $view --top 8 "$run"; done
python3 "$G/check-idle.py" "$X" "$run" "$R/ops.json" "$G/idle_train.py"; rc=$?
mkdir -p "$OUT/fixture"
cp "$run/meta.json" "$R/ops.json" "$OUT/fixture/"
xz -9 -c "$run/xpcorr.db" > "$OUT/fixture/device.db.xz"
exit $rc
