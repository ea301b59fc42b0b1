#!/usr/bin/env python3
"""record-overhead.py - figures for `xpcap record`, not a pass/fail test:
wall time of a CPU-bound program bare and under xpcap at several
frequencies, xpcap's peak RSS, samples and bytes written.

    sudo python3 tests/bench/record-overhead.py build
"""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def run(cmd):
    t0 = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - t0


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    xpcap = os.path.join(build, "bin/xpcap")
    prog = [os.path.join(build, "tests/programs/threads"), "3"]
    print("threads 3: 4 threads of 3 s CPU time each, on %d CPUs" % os.cpu_count())
    print("  bare: %.2f s" % run(prog))
    for freq in (99, 999, 4999):
        tmp = tempfile.mkdtemp(prefix="xp-bench-")
        runlog = os.path.join(tmp, "run")
        wall = run([xpcap, "record", "-q", "--no-gpu", "-F", str(freq), "-o", runlog, "--"] + prog)
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        with open(os.path.join(runlog, "meta.json")) as f:
            md = json.load(f)
        print("  -F %5d: %.2f s, %6d samples, cpu.xpr %7.1f KiB, %.0f B/sample, "
              "max RSS so far %d MiB" %
              (freq, wall, md["records"]["sample"]["written"],
               md["streams"]["cpu.xpr"]["bytes"] / 1024,
               md["streams"]["cpu.xpr"]["bytes"] / max(1, md["records"]["sample"]["written"]),
               rss // 1024))
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
