#!/usr/bin/env python3
"""offcpu-overhead.py - figures, not a pass/fail test: what --off-cpu adds
per context switch. pingpong bounces a byte between two threads (two
switches per round trip); the median of 5 runs of each configuration.
With the injection library built, also the waits recorded by default
where GPU capture is armed (root: sched_switch, intervals of 50 us or
more; nobody: perf's context-switch records) against --no-off-cpu.

    sudo python3 tests/bench/offcpu-overhead.py build
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROUNDS = "100000"


def per_round(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return float(out.split()[-1])


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    xpcap = os.path.join(build, "bin/xpcap")
    prog = [os.path.join(build, "tests/programs/pingpong"), ROUNDS]
    configs = [
        ("bare", None),
        ("xpcap, no --off-cpu", ["--no-gpu"]),
        ("--off-cpu", ["--no-gpu", "--off-cpu"]),
        ("--off-cpu --off-cpu-min-us 1000", ["--no-gpu", "--off-cpu", "--off-cpu-min-us", "1000"]),
        ("--off-cpu --call-graph dwarf", ["--no-gpu", "--off-cpu", "--call-graph", "dwarf"]),
    ]
    cupti = os.path.join(build, "cupti/libxpcupti.so")
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    if os.path.exists(cupti):
        configs += [
            ("armed, --no-off-cpu", ["--cupti-lib", cupti, "--no-off-cpu"]),
            ("armed, waits by default", ["--cupti-lib", cupti]),
            ("nobody: armed, --no-off-cpu", ["--cupti-lib", cupti, "--no-off-cpu"], nobody),
            ("nobody: armed, waits by default", ["--cupti-lib", cupti], nobody),
        ]
    base = None
    print("pingpong %s round trips, ns per round trip (2 switches), median of 5" % ROUNDS)
    for name, args, *who in configs:
        runs = []
        who = who[0] if who else []
        for _ in range(5):
            if args is None:
                runs.append(per_round(prog))
                continue
            tmp = tempfile.mkdtemp(prefix="xp-bench-")
            os.chmod(tmp, 0o777)
            runs.append(per_round(who + [xpcap, "record", "-q", "-o", os.path.join(tmp, "run")] +
                                  args + ["--"] + prog))
            shutil.rmtree(tmp)
        med = statistics.median(runs)
        base = base or med
        print("  %-34s %8.0f ns  (+%.1f us per switch)" % (name, med, (med - base) / 2000))


if __name__ == "__main__":
    main()
