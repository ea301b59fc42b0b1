#!/usr/bin/env python3
"""check-wait-lines.py XPCORR WAIT_LINES_DB JAX.db [FILE:LINE] [MIN_PCT] - does
ingest's waiting-line pass (ingest/waitlines.h) put a JAX run's compile-time
GPU time, launched by XLA's threads, at the program's line? On a copy of a
database ingested without the pass (jax-device.sh's, an older xpcorr's):
--by source's own-code share of FILE:LINE (default jax_train.py:59, the
first call of the jitted train step) before and after tests/wait-lines-db
runs the pass and the correlation again; after, it must hold at least
MIN_PCT (default 90) % of GPU time, the footer must count the placed time
apart ("waited_pct") and the footer's shares must still add up to 100%.
Exit 1 on a failed check, 77 when JAX.db is not there."""
import json
import os
import shutil
import subprocess
import sys
import tempfile


def source(xpcorr, db, where):
    out = subprocess.run([xpcorr, "report", "--by", "source", "--format", "json", "--top", "0", db],
                         check=True, capture_output=True, text=True).stdout
    rep = json.loads(out)
    total = rep["total_ns"] or 1
    file, line = where.rsplit(":", 1)
    mine = sum(r["gpu_ns"] for r in rep.get("own_code_lines", [])
               if r["file"] == file and r["line"] == int(line))
    return 100.0 * mine / total, rep


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    xpcorr, placer, db = sys.argv[1:4]
    where = sys.argv[4] if len(sys.argv) > 4 else "jax_train.py:59"
    min_pct = float(sys.argv[5]) if len(sys.argv) > 5 else 90.0
    if not os.path.exists(db):
        print(f"SKIP {db} is not here (a JAX run ingested on the GPU machine)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "jax.db")
        shutil.copyfile(db, copy)
        before, _ = source(xpcorr, copy, where)
        placed = subprocess.run([placer, copy], check=True, capture_output=True, text=True).stdout
        after, rep = source(xpcorr, copy, where)
    py = rep["python"]
    rest = sum(r["pct"] for r in rep.get("not_python", []))
    print(f"{where}: {before:.1f}% of GPU time before, {after:.1f}% after ({placed.strip()})")
    print(f"footer: {py['line_pct']}% with its Python line, {py.get('waited_pct', 0)}% at a"
          f" waiting line, {rest:.1f}% without Python")
    fail = 0
    if after < min_pct:
        print(f"FAIL {where} holds {after:.1f}% < {min_pct}%"); fail = 1
    if not py.get("waited_gpu_ns"):
        print("FAIL the footer does not count the placed GPU time apart"); fail = 1
    if abs(py["pct"] + py.get("waited_pct", 0) + rest - 100.0) > 0.5:
        print("FAIL the footer's shares do not add up to 100%"); fail = 1
    return fail


if __name__ == "__main__":
    sys.exit(main())
