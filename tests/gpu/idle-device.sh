#!/bin/bash
# idle-device.sh - on the GPU machine: the analyses on a real training loop
# (tests/gpu/idle_train.py: a slow Python data loader, a loss.item() per
# step). --by idle must name the loader and the .item() line as top idle
# causes; --by op's GPU time per op within 5% of torch.profiler's
# key_averages (tests/gpu/check-idle.py); the run comes back as the fixture
# fixtures/h100-idle (meta.json, device.db.xz, ops.json) in OUT/idle.tar.
#   CARRY=.devcarry/e2e OUT=/tmp/out bash tests/gpu/idle-device.sh
. "$(dirname "$(realpath "$0")")/device-env.sh" idle
run="$R/idle"
"$C/xpcap" record -q -F 999 -o "$run" -- python3 "$G/idle_train.py" --steps 30
python3 "$G/idle_train.py" --steps 30 --profile "$R/ops.json" > /dev/null
"$X" ingest "$run"
for view in idle op; do "$X" report --by $view --top 8 "$run"; done
python3 "$G/check-idle.py" "$X" "$run" "$R/ops.json" "$G/idle_train.py"; rc=$?
mkdir -p "$R/fixture"
cp "$run/meta.json" "$R/ops.json" "$R/fixture/"
xz -9 -c "$run/xpcorr.db" > "$R/fixture/device.db.xz"
ls -l "$R/fixture"
tar -C "$R" -cf "$OUT/idle.tar" fixture
exit $rc
