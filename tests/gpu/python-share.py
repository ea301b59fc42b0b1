#!/usr/bin/env python3
"""python-share.py XPCORR RUN - share of GPU time whose launching stack
reaches a Python frame (py::), from `xpcorr report --by stack`, and the top
stacks. Run where the run was recorded (its libraries are needed to unwind)."""
import json
import subprocess
import sys


def main():
    xpcorr, run = sys.argv[1], sys.argv[2]
    out = subprocess.run([xpcorr, "report", "--by", "stack", "--format", "json", "--top", "0",
                          "--frames", "60", run], capture_output=True, text=True, check=True).stdout
    rows = json.loads(out)["rows"]
    total = sum(r["total_ns"] for r in rows) or 1
    py = sum(r["total_ns"] for r in rows if "py::" in r["name"])
    print("python_share_pct=%.2f (%d stacks)" % (100.0 * py / total, len(rows)))
    for r in sorted(rows, key=lambda r: -r["total_ns"])[:3]:
        print("  %5.1f%%  %s" % (100.0 * r["total_ns"] / total, r["name"][:400]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
