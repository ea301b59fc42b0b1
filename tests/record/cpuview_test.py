#!/usr/bin/env python3
"""cpuview_test.py - a CPU-only run is first-class (issue 39): the real
hotspots program recorded as root (eBPF) or as nobody (perf events), as
`prog` and as its copy `prog2`; then `xpcorr report` shows the CPU view by
default with each function's share of samples near its known share of CPU
time, `--by source` counts samples, and `xpcorr diff` compares the two runs'
samples by default, matching prog's functions to prog2's row by row.

    XPCAP=build/bin/xpcap XPCORR=build/bin/xpcorr \
    PROGDIR=build/tests/programs python3 tests/record/cpuview_test.py root|nobody

The truth: hotspots runs hot_a and hot_b for S seconds of its CPU time,
hot_a doing 3 times hot_b's work, then lib_spin (libhotlib.so) for 0.5 s
of CPU time: with S = 1, hot_a 1/2, hot_b 1/6, lib_spin 1/3 of those three.
"""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import record_test as rt  # noqa: E402
from record_test import check, Failure  # noqa: E402

NOBODY = 65534
AS_NOBODY = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups"]
TRUTH = {"hot_a": 0.5, "hot_b": 1 / 6, "lib_spin": 1 / 3}
POINTS = 4          # share of samples within 4 points of the share of CPU time


def xpcorr(who, args):
    p = subprocess.run((AS_NOBODY if who == "nobody" else []) + [rt.XPCORR] + args,
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "xpcorr %s exits 0 (rc %d: %s)" % (" ".join(args[:-1]),
                                                                p.returncode, p.stderr.strip()[-300:]))
    return p.stdout


def record(who, tmp, name):
    """hotspots copied to tmp/name, recorded there: the run's directory."""
    exe = os.path.join(tmp, name)
    shutil.copy(rt.prog("hotspots"), exe)
    os.chmod(exe, 0o755)
    lib = os.path.realpath(rt.prog("libhotlib.so"))
    run = os.path.join(tmp, "run-" + name)
    args = ["-F", "999", "--no-gpu"]
    if who == "nobody":
        p = subprocess.run(AS_NOBODY + [rt.XPCAP, "record", "-q", "-o", run] + args +
                           ["--", exe, lib, "1"], capture_output=True, text=True, timeout=120)
        rc, err = p.returncode, p.stderr
    else:
        rc, err = rt.record(run, ["-q"] + args, [exe, lib, "1"])
    check(rc == 0, "%s: xpcap record of %s exits 0 (%s)" % (who, name, err.strip()[-200:]))
    return run


def check_report(who, run, name):
    doc = json.loads(xpcorr(who, ["report", "--format", "json", run]))
    check(doc["report"] == "cpu", "%s: a run without GPU work reports --by cpu by default" % name)
    funcs = {f["name"]: f for f in doc["cpu_functions"]}
    want = {"hot_a": "hot_a (%s)" % name, "hot_b": "hot_b (%s)" % name,
            "lib_spin": "lib_spin (libhotlib.so)"}
    for fn, key in want.items():
        check(key in funcs, "%s: %s among the functions" % (name, key))
    check(doc["cpu_functions"][0]["name"] == want["hot_a"],
          "%s: hot_a first by self samples (%s)" % (name, doc["cpu_functions"][0]["name"]))
    three = sum(funcs[k]["self_samples"] for k in want.values())
    check(three > 0.8 * doc["cpu"]["samples"], "%s: the three hold most samples (%d of %d)" % (
        name, three, doc["cpu"]["samples"]))
    for fn, key in want.items():
        share = funcs[key]["self_samples"] / three
        print("%s %s: %.1f%% of the three (truth %.1f%%)" % (name, fn, 100 * share, 100 * TRUTH[fn]))
        check(abs(share - TRUTH[fn]) * 100 <= POINTS, "%s: %s's share %.1f%% within %d points"
              " of %.1f%%" % (name, fn, 100 * share, POINTS, 100 * TRUTH[fn]))
    main = funcs.get("main (%s)" % name)
    check(main and main["total_samples"] >= funcs[want["lib_spin"]]["total_samples"] and
          main["self_samples"] < main["total_samples"],
          "%s: main's total holds what it calls (lib_spin), more than its self" % name)
    # the text view: the same first row, shares as printed
    text = xpcorr(who, ["report", "--top", "3", run])
    rows = [l for l in text.splitlines() if l.strip().endswith(")") and l[:9].strip()[:1].isdigit()]
    check(rows and rows[0].split()[-2:] == ["hot_a", "(%s)" % name],
          "%s: the text report's first row is hot_a (%s)" % (name, rows[:1]))
    # --by source counts samples too: per function, self and total
    src = list(csv.reader(io.StringIO(xpcorr(who, ["report", "--by", "source", "--format",
                                                   "csv", run]))))
    check(src[0][:6] == ["Level", "File", "Function", "Line", "Self (samples)", "Total (samples)"],
          "%s: --by source on CPU samples, in samples (%s)" % (name, src[0]))
    check(src[1][1:3] == [name, "hot_a"] and int(src[1][4]) == funcs[want["hot_a"]]["self_samples"],
          "%s: --by source's first function is hot_a, with the same samples (%s)" % (name, src[1]))


def check_diff(who, a, b):
    doc = json.loads(xpcorr(who, ["diff", "--format", "json", a, b]))
    sections = [t["section"] for t in doc["tables"]]
    check(sections == ["cpu_self", "cpu_total", "cpu_stack"],
          "diff of two CPU-only runs compares CPU samples by default (%s)" % sections)
    rows = {r["name"]: r for r in doc["tables"][0]["rows"]}
    for fn in ("hot_a", "hot_b", "lib_spin (libhotlib.so)"):
        r = rows.get(fn)
        check(r and r["base_ns"] > 50 and r["new_ns"] > 50 and abs(r["diff_pct"]) < 40,
              "diff: %s matched in prog and prog2 (%s)" % (fn, r))
    stacks = doc["tables"][2]["rows"]
    top = max(stacks, key=lambda r: r["base_ns"])
    check(top["base_ns"] > 0 and top["new_ns"] > 0 and top["name"].startswith("hot_a"),
          "diff: the hottest stack is matched on both sides (%s)" % top["name"])
    check(not any("(prog" in r["name"] for t in doc["tables"] for r in t["rows"]),
          "diff: no row named after the program (prog / prog2)")
    folded = xpcorr(who, ["diff", "--format", "folded", a, b])
    hot = [l for l in folded.splitlines() if l.rsplit(" ", 2)[0].endswith(";hot_a")]
    check(hot and all(int(x) > 0 for x in hot[0].rsplit(" ", 2)[1:]),
          "diff --format folded: hot_a's stack with samples on both sides (%s)" % hot[:1])


def t_root(tmp):
    rt.require_bpf()
    a, b = record("root", tmp, "prog"), record("root", tmp, "prog2")
    check_report("root", a, "prog")
    check_report("root", b, "prog2")
    check_diff("root", a, b)


def t_nobody(tmp):
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        rt.skip_or_fail("needs root and setpriv to run xpcap as nobody")
    with open("/proc/sys/kernel/perf_event_paranoid") as f:
        if int(f.read()) > 2:
            rt.skip_or_fail("kernel.perf_event_paranoid > 2: a normal user has no perf events")
    if subprocess.run(AS_NOBODY + ["test", "-x", rt.XPCAP]).returncode:
        rt.skip_or_fail("%s is not executable by nobody" % rt.XPCAP)
    os.chown(tmp, NOBODY, NOBODY)
    a, b = record("nobody", tmp, "prog"), record("nobody", tmp, "prog2")
    check(rt.meta(a)["sampler"] == "perf", "nobody's run sampled by perf events")
    check_report("nobody", a, "prog")
    check_diff("nobody", a, b)


TESTS = {name[2:]: fn for name, fn in globals().items() if name.startswith("t_")}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in TESTS:
        print("usage: cpuview_test.py " + "|".join(sorted(TESTS)))
        return 2
    tmp = tempfile.mkdtemp(prefix="xp-cpuview-")
    os.chmod(tmp, 0o755)
    try:
        TESTS[sys.argv[1]](tmp)
    except Failure as e:
        print("FAIL:", e)
        print("(runs left in %s)" % tmp)
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
