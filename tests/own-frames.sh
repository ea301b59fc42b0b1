#!/bin/sh
# own-frames.sh - the recorder's own frames (libxpcupti's under CUPTI's
# callback) are cut from users' stacks: at ingest (a raw run ingested here)
# and when reading a database made before (the H100 backward fixture), in
# --by stack, --format json frame lists and the GPU flame graph's lines.
#   own-frames.sh XPCORR FIXTURES_DIR
set -eu
xpcorr=$1 fixtures=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
ours='xpc_stack_take|xpc_api_callback|libxpcupti|libcupti\.so'
python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
	"$fixtures/h100-train-backward/device.db.xz" "$tmp/bw.db"
# the fixture holds them: 1 + 7 frames at the leaf of each launch stack
python3 -c 'import sqlite3, sys
n = sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM xp_frames f JOIN StringIds s"
    " ON s.id = f.symbol WHERE s.value = \"xpc_stack_take\"").fetchone()[0]
sys.exit(0 if n else 1)' "$tmp/bw.db" || { echo "SKIP the fixture has no xpc_stack_take frame"; exit 77; }
"$xpcorr" report --by stack --top 0 --stacks 4 "$tmp/bw.db" > "$tmp/stack.txt"
"$xpcorr" report --by kernel --format json --top 0 --stacks 2 "$tmp/bw.db" > "$tmp/kernel.json"
"$xpcorr" export --format folded --weight gpu "$tmp/bw.db" > "$tmp/gpu.folded"
for f in stack.txt kernel.json gpu.folded; do
	if n=$(grep -cE "$ours" "$tmp/$f"); then
		echo "FAIL $f: $n lines with the recorder's own frames, e.g.:"
		grep -oE ".{0,60}($ours).{0,40}" "$tmp/$f" | head -1
		status=1
	else
		echo "ok   $f: no frame of ours"
	fi
done
# a raw run (CUPTI in process, no symbols here): none of its launch stacks
# has our frames left after ingest
mkdir "$tmp/wl" "$tmp/nosym"
cp "$fixtures/h100-workload"/*.xpr "$fixtures/h100-workload/meta.json" "$tmp/wl/"
"$xpcorr" ingest --quiet --symfs "$tmp/nosym" "$tmp/wl"
python3 - "$tmp/wl/xpcorr.db" <<'PY' || status=1
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
parent = dict(db.execute("SELECT id, parent FROM xp_stacks"))
frame = dict(db.execute("SELECT id, frame FROM xp_stacks"))
name = dict(db.execute("SELECT f.id, s.value || ' ' || ifnull(m.value, '') FROM xp_frames f"
                       " JOIN StringIds s ON s.id = f.symbol LEFT JOIN StringIds m ON m.id = f.module"))
bad = total = 0
for (sid,) in db.execute("SELECT DISTINCT stack_id FROM xp_launches WHERE stack_id > 0"):
    total += 1
    n, seen = sid, []
    while n and len(seen) < 512:
        seen.append(name.get(frame.get(n), ""))
        n = parent.get(n, 0)
    if any("libxpcupti" in s for s in seen):
        bad += 1
        if bad == 1:
            print("FAIL ingest kept our frames, e.g. leaf first:", seen[:4])
if total == 0:
    print("FAIL no launch stack ingested")
    sys.exit(1)
if bad:
    print("FAIL %d of %d launch stacks hold libxpcupti frames" % (bad, total))
    sys.exit(1)
print("ok   ingest: %d launch stacks, none with a frame of libxpcupti" % total)
PY
exit $status
