#!/bin/sh
# fit-rows.sh - a text row wider than the terminal is cut inside its last
# field, keeping what tells rows apart (issue 43): --by overlap's DDP
# buckets keep their numbers, --by source's kernels their own name, not
# "at::native::(an…"; every line still fits in 120 columns.
#   fit-rows.sh XPCORR FIXTURES_DIR
set -eu
xpcorr=$1 fixtures=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unxz() { python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$@"; }
unxz "$fixtures/h100x2-ddp-nccl/device.db.xz" "$tmp/ddp.db"
unxz "$fixtures/h100-train-backward/device.db.xz" "$tmp/bw.db"
unset COLUMNS
"$xpcorr" report --by overlap "$tmp/ddp.db" > "$tmp/overlap.txt"
"$xpcorr" report --by source "$tmp/bw.db" > "$tmp/source.txt"
python3 - "$tmp/overlap.txt" "$tmp/source.txt" <<'PY'
import re, sys
overlap, source = (open(p, encoding="utf-8").read().splitlines() for p in sys.argv[1:3])
bad = 0
for name, lines in (("overlap", overlap), ("source", source)):
    wide = [l for l in lines if len(l) > 120]
    if wide:
        print("FAIL %s: %d lines over 120 columns" % (name, len(wide)))
        bad = 1
rows = [l for l in overlap if "\u2039 NCCL" in l]
buckets = {m.group(1) for l in rows for m in [re.search(r"bucket (\d+)$", l)] if m}
if len(rows) < 4 or len(buckets) != len(rows):
    print("FAIL overlap: %d DDP rows, bucket numbers seen %s:" % (len(rows), sorted(buckets)))
    print("\n".join(rows))
    bad = 1
else:
    print("ok   overlap: %d DDP rows, buckets %s" % (len(rows), " ".join(sorted(buckets))))
rows = [l for l in source if re.search(r"adam\.py:\d+  ", l)]
rows = [l for l in rows if "::" in l]  # a kernel's name: its own part shown
named = [l for l in rows if re.search(r"::(multi_tens|vectorized_)", l.split("  ")[-1])]
if not rows or len(named) != len(rows):
    print("FAIL source: %d of %d adam.py rows name their kernel, e.g. %r"
          % (len(named), len(rows), rows[0] if rows else None))
    bad = 1
else:
    print("ok   source: %d adam.py rows name their kernel: %s" % (len(rows), rows[0].split("  ")[-1]))
sys.exit(bad)
PY
