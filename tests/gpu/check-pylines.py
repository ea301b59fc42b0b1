#!/usr/bin/env python3
"""check-pylines.py XPCORR RUN TRUTH.json [MIN_PCT] - are the recorded Python
lines right? Reads the GPU-weighted folded stacks of an ingested run (GPU
time by launching stack) and, for each stack, its innermost Python-line frame
(`file.py:LINE qualname`). Checks that at least MIN_PCT (default 99) % of GPU
time has one, and that the lines carrying at least MIN_PCT % of that time are
lines that pylines-truth.py saw call into CUDA work. Prints the top lines and
every line it could not confirm; exit 1 on a failed check."""
import collections
import json
import os
import re
import subprocess
import sys

LINE = re.compile(r"([^;]*?\.py):(\d+)(?: |$)")


def innermost_line(stack):
    """(basename, line) of the leaf-most Python-line frame, or None."""
    found = None
    for frame in stack.split(";"):
        m = LINE.match(frame.strip())
        if m:
            found = (os.path.basename(m.group(1)), int(m.group(2)))
    return found


def line_shares(folded, truth_path):
    """(total GPU ns, ns with a Python line, ns on lines the truth confirms,
    Counter of ns by (file, line)) of folded GPU stacks against truth.json."""
    truth = {(os.path.basename(k.rsplit(":", 1)[0]), int(k.rsplit(":", 1)[1]))
             for k in json.load(open(truth_path))["sites"]}
    total = with_line = confirmed = 0
    by_line = collections.Counter()
    for row in folded.splitlines():
        stack, _, weight = row.rpartition(" ")
        w = int(weight)
        total += w
        site = innermost_line(stack)
        if site:
            with_line += w
            by_line[site] += w
            confirmed += w if site in truth else 0
    return total, with_line, confirmed, by_line, truth


def check_lines(xpcorr, run, truth_path, floor):
    """Prints the top lines, the unconfirmed ones and ok/FAIL lines; True if both pass."""
    folded = subprocess.run([xpcorr, "export", "--format", "folded", "--weight", "gpu", run],
                            check=True, capture_output=True, text=True).stdout
    total, with_line, confirmed, by_line, truth = line_shares(folded, truth_path)
    ok = bool(total)
    share = 100.0 * with_line / total if total else 0.0
    right = 100.0 * confirmed / with_line if with_line else 0.0
    for (f, ln), w in by_line.most_common(8):
        print(f"  {100.0 * w / total:5.1f}%  {f}:{ln}{'' if (f, ln) in truth else '  (not in truth)'}")
    for (f, ln), w in by_line.items():
        if (f, ln) not in truth:
            print(f"  unconfirmed: {f}:{ln} {100.0 * w / total:.2f}% of GPU time")
    for what, pct in (("GPU time with a Python line", share), ("of it on lines the truth confirms", right)):
        good = pct >= floor
        ok &= good
        print(f"{'ok  ' if good else 'FAIL'} {what}: {pct:.2f}% (floor {floor}%)")
    return ok


def main():
    xpcorr, run, truth_path = sys.argv[1:4]
    floor = float(sys.argv[4]) if len(sys.argv) > 4 else 99.0
    sys.exit(0 if check_lines(xpcorr, run, truth_path, floor) else 1)


if __name__ == "__main__":
    main()
