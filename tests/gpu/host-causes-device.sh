#!/bin/bash
# host-causes-device.sh - issue 39 on the GPU machine: tests/gpu/host_causes.py
# (a training loop with three host causes it times itself) recorded at the
# defaults as root (eBPF) and as a normal user (nobody: perf events), each
# ingested here and checked by check-host-causes.py against the program's own
# timings; root's run comes back as the fixture (meta.json, truth.json,
# device.db.xz) in OUT/host-causes.tar.
#   CARRY=.devcarry/e2e OUT=/tmp/out bash tests/gpu/host-causes-device.sh
. "$(dirname "$(realpath "$0")")/device-env.sh" host-causes
NB="setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=$R/u"
mkdir -p "$R/u"; chown 65534:65534 "$R/u"; chmod 755 "$R"
chmod -R a+rX "$C" "$G"
for d in "$C" "$G"; do p=$d; while [ "$p" != / ]; do chmod a+x "$p"; p=$(dirname "$p"); done; done
STEPS=${STEPS:-40}
rc=0
echo "== root (eBPF)"
"$C/xpcap" record -q -o "$R/root" -- python3 "$G/host_causes.py" --steps "$STEPS" --truth "$R/root-truth.json"
"$X" ingest --quiet "$R/root"
"$X" info "$R/root" | grep -E "^python in|^off_cpu|^ +[0-9]+ Python" | head -8
"$X" report --by idle --top 12 --skip-steps 8 "$R/root"
python3 "$G/check-host-causes.py" "$X" "$R/root" "$R/root-truth.json" || rc=1
echo "== nobody (perf events)"
$NB "$C/xpcap" record -q -o "$R/u/run" -- python3 "$G/host_causes.py" --steps "$STEPS" --truth "$R/u/truth.json"
$NB "$X" ingest --quiet "$R/u/run"
$NB "$X" info "$R/u/run" | grep -E "^python in|^off_cpu|^ +[0-9]+ Python" | head -8
python3 "$G/check-host-causes.py" "$X" "$R/u/run" "$R/u/truth.json" || rc=1
mkdir -p "$R/fixture"
cp "$R/root/meta.json" "$R/fixture/"; cp "$R/root-truth.json" "$R/fixture/truth.json"
xz -9 -c "$R/root/xpcorr.db" > "$R/fixture/device.db.xz"
ls -l "$R/fixture"
tar -C "$R" -cf "$OUT/host-causes.tar" fixture
exit $rc
