#!/usr/bin/env python3
"""record-size.py - figures, not a pass/fail test: bytes per record and
xpcap's own CPU time with --compress none and zstd, for frame-pointer and
dwarf-mode samples, dwarf-mode launches and off-CPU intervals.

    sudo python3 tests/bench/record-size.py build
"""
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile


# a CPython workload with varied, deep stacks (the interpreter has no frame
# pointers before 3.12's perf support: dwarf mode is what unwinds it)
PY_WORK = '''
import json, random, time
def walk(d, n):
    return sum(walk(d - 1, i) for i in range(2)) if d else len(json.dumps([n] * 50))
end = time.time() + 2
while time.time() < end:
    sorted(random.random() for _ in range(2000)); walk(random.randint(3, 9), 1)
'''


def record(xpcap, run, args, cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([xpcap, "record", "-q", "-o", run] + args + ["--"] + cmd, check=True,
                   stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(os.path.join(run, "meta.json")) as f:
        md = json.load(f)
    # the command's CPU time is in RUSAGE_CHILDREN too; the difference
    # between two modes on the same command is xpcap's
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return md, cpu


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    xpcap = os.path.join(build, "bin/xpcap")
    progs = os.path.join(build, "tests/programs")
    marker = os.path.join(build, "tests/marker")
    hot = [os.path.join(progs, "hotspots"), os.path.realpath(os.path.join(progs, "libhotlib.so")), "2"]
    cases = [
        ("samples fp 999 Hz", ["--no-gpu", "-F", "999"], hot, "sample"),
        ("samples dwarf,8192 999 Hz", ["--no-gpu", "-F", "999", "--call-graph", "dwarf"], hot, "sample"),
        ("launches dwarf,8192", ["--gpu-only", "--cupti-lib",
                                 os.path.join(marker, "libxpmarker-test.so")],
         [os.path.join(marker, "marker-caller"), "20000"], "launch"),
        ("launches fp", ["--gpu-only", "--launch-call-graph", "fp", "--cupti-lib",
                         os.path.join(marker, "libxpmarker-test.so")],
         [os.path.join(marker, "marker-caller"), "20000"], "launch"),
        ("python3 samples dwarf,8192", ["--no-gpu", "-F", "999", "--call-graph", "dwarf"],
         [sys.executable, "-c", PY_WORK], "sample"),
        ("off-cpu dwarf,8192", ["--no-gpu", "--off-cpu", "--call-graph", "dwarf", "-F", "999"],
         [os.path.join(progs, "blocker"), "/dev/null"], "switch"),
    ]
    for name, args, cmd, kind in cases:
        row = []
        for comp in ("none", "zstd"):
            tmp = tempfile.mkdtemp(prefix="xp-bench-")
            run = os.path.join(tmp, "run")
            md, cpu = record(xpcap, run, args + ["--compress", comp], cmd)
            s = md["streams"]["cpu.xpr"]
            n = md["records"][kind]["written"]
            row.append((comp, s["bytes"], s["raw_bytes"], n, cpu))
            shutil.rmtree(tmp)
        (_, b0, _, n0, c0), (_, b1, r1, n1, c1) = row
        print("%-28s %6d %-7s none %9d B (%6.0f B/rec)  zstd %9d B (%6.0f B/rec)  ratio %5.1fx"
              "  cpu none %.2f s zstd %.2f s" %
              (name, n1, kind, b0, b0 / max(n0, 1), b1, b1 / max(n1, 1), r1 / max(b1, 1), c0, c1))


if __name__ == "__main__":
    main()
