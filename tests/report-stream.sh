#!/bin/sh
# report-stream.sh - `xpcorr report --by stream` on the two-GPU tensor-parallel
# H100 fixture: golden text, csv and json, and the figures checked against the
# database's own rows (each stream's kernels, copies and GPU ns summed here
# apart from the view), the json against report-schema.json.
#   report-stream.sh XPCORR FIXTURES_DIR GOLDEN_DIR [--regenerate]
set -eu
xpcorr=$1 fixtures=$2 golden=$3 mode=${4:-compare}
here=$(cd "$(dirname "$0")" && pwd)
golden=$(cd "$golden" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
	"$fixtures/h100x2-tp/device.db.xz" "$tmp/tp2.db"
cd "$tmp"
mkdir out
unset COLUMNS
for fmt in text csv json; do
	"$xpcorr" report --by stream --format $fmt --top 0 tp2.db > out/tp2-stream.$fmt 2> /dev/null
done
"$xpcorr" report --by stream --top 3 tp2.db > out/tp2-stream-top3.text
COLUMNS=40 "$xpcorr" report --by stream --top 2 tp2.db > out/tp2-stream-40.text
if [ "$mode" = --regenerate ]; then
	cp out/* "$golden/"
	exit 0
fi
for f in out/*; do
	cmp "$f" "$golden/$(basename "$f")" || { diff "$golden/$(basename "$f")" "$f" | head -20; exit 1; }
done
python3 "$here/check-report-json.py" "$here/report-schema.json" out/tp2-stream.json
python3 - <<'PY'
import csv, json, sqlite3
db = sqlite3.connect("tp2.db")
want = {}
for table, kind in (("KERNEL", 0), ("MEMCPY", 1), ("MEMSET", 1)):
    for gp, dev, stream, ns in db.execute(
            f"SELECT globalPid, deviceId, streamId, end - start FROM CUPTI_ACTIVITY_KIND_{table}"):
        k = want.setdefault(((gp >> 24) & ((1 << 22) - 1), dev, stream), [0, 0, 0])
        k[kind] += 1
        k[2] += ns
doc = json.load(open("out/tp2-stream.json"))
got = {(r["pid"], r["device"], r["stream"]): [r["kernels"], r["copies"], r["gpu_ns"]]
       for r in doc["streams"]}
assert got == want, (got, want)
total = sum(v[2] for v in want.values())
for r in doc["streams"]:
    assert abs(r["share_pct"] - 100.0 * r["gpu_ns"] / total) < 0.051, r
ns = [r["gpu_ns"] for r in doc["streams"]]
assert ns == sorted(ns, reverse=True), ns
rows = list(csv.reader(open("out/tp2-stream.csv")))
assert rows[0] == ["Time (%)", "Total Time (ns)", "Kernels", "Copies", "Device", "Stream", "Pid"]
assert len(rows) - 1 == len(doc["streams"]) == len(want)
top3 = open("out/tp2-stream-top3.text").read()
assert f"({len(want) - 3} more rows; --top 0 shows all)" in top3, top3
PY
echo "ok   --by stream: $(grep -c '' out/tp2-stream.csv) csv lines, figures as the database's"
