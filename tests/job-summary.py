#!/usr/bin/env python3
"""job-summary.py - `xpcorr job` (a job's views from its ranks' summaries)
agrees with `xpcorr merge` + `xpcorr report` (one database of every row) on
the same synthetic job: 16 ranks of tests/gen-run job, each host's clocks
off by a known amount (seconds of monotonic offset, milliseconds of NTP
error), the last rank the straggler. Each rank is ingested on its own
(which writes RUN/xpsum.db), then:
  --by rank   the ranks' rows, and each kernel's spread, slowest rank and
              the others' wait, equal to report --by rank's csv;
  --by kernel each kernel's total and instances equal to report --by kernel;
  --by idle   each device's window, compute, communication, rank wait and
              idle within 0.1% of report --by idle's, and the waits charged
              to the straggler;
  --by source the sites' total is the job's GPU time;
  --by clock  every shift within 5 us of the truth;
  --rank N    that rank's own report.
It never opens a rank's database for the views: the databases are moved
away first.

    job-summary.py XPCORR GEN_RUN FIXTURE_EXE FIXTURE_LIB
"""
import csv
import io
import os
import subprocess
import sys
import tempfile

xpcorr, gen_run, exe, lib = sys.argv[1:5]
RANKS, STEPS = 16, 40
failed = []


def run(*args):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"FAIL {' '.join(args[:4])}...: exit {p.returncode}: {p.stderr.strip()[-600:]}")
    return p.stdout


def rows(text):
    return list(csv.DictReader(io.StringIO(text)))


def truth(rank):
    return rank * 1234567891 % 3000000000 - 1500000000


def check(what, ok):
    if not ok:
        failed.append(what)


def near(a, b, rel=0.001):
    return abs(int(a) - int(b)) <= max(1, rel * max(abs(int(a)), abs(int(b))))


with tempfile.TemporaryDirectory() as tmp:
    runs = [os.path.join(tmp, "rank%02d" % r) for r in range(RANKS)]
    for r, d in enumerate(runs):
        run(gen_run, "job", exe, lib, d, str(r), str(RANKS), "node-%02d" % r, str(truth(r)),
            str(r * 733331 % 6000000 - 3000000), str(STEPS))
        run(xpcorr, "ingest", "-q", d)
        check(f"ingest wrote no summary in {d}", os.path.exists(os.path.join(d, "xpsum.db")))
    job = os.path.join(tmp, "job")
    run(xpcorr, "merge", "-q", "-o", job, *runs)
    full = {v: run(xpcorr, "report", "--by", v, "--format", "csv", "--top", "0", job)
            for v in ("rank", "kernel", "idle")}
    full_text = run(xpcorr, "report", "--by", "rank", "--top", "0", job)
    # the views read the summaries alone: the ranks' databases are away
    for d in runs:
        os.rename(os.path.join(d, "xpcorr.db"), os.path.join(d, "away.db"))
    # the runs in another order: the reference is still rank 0's
    given = runs[::-1]
    summ = {v: run(xpcorr, "job", "-q", "--by", v, "--format", "csv", "--top", "0", *given)
            for v in ("rank", "kernel", "idle", "source", "clock")}

    summ_text = run(xpcorr, "job", "-q", "--by", "rank", "--top", "0", *given)

    def spread_lines(text):
        lines = text[text.index("  Spread (ns)"):].splitlines()
        return [l for l in lines if l.strip() and not l.startswith("  (a collective's")
                and not l.startswith(("GPU time", "  exact", "Losses", "Clock skew"))]

    check("--by rank text: the spread table (kernels, slowest, waits, sites) differs:\n"
          + "\n".join(spread_lines(summ_text)) + "\nmerged:\n" + "\n".join(spread_lines(full_text)),
          len(spread_lines(full_text)) >= 6 and spread_lines(full_text) == spread_lines(summ_text))
    a, b = rows(full["rank"]), rows(summ["rank"])
    check(f"--by rank: {len(b)} rows, the merged job's {len(a)}", len(a) == len(b) and len(a) > RANKS)
    for x, y in zip(a, b):
        check(f"--by rank: {dict(y)} != merged {dict(x)}", x == y)
    spread = [x for x in b if x["Section"] == "spread"]
    coll = [x for x in spread if x["Name"].startswith("nccl")]
    check(f"--by rank names rank {coll and coll[0]['Slowest Rank']} for the all-reduce, not "
          f"{RANKS - 1}", coll and coll[0]["Slowest Rank"] == str(RANKS - 1))
    check("--by rank: the others waited nothing", coll and int(coll[0]["Waited (ns)"]) > 0)

    a = {x["Name"]: x for x in rows(full["kernel"])}
    b = {x["Name"]: x for x in rows(summ["kernel"])}
    check(f"--by kernel: kernels {sorted(b)} != {sorted(a)}", sorted(a) == sorted(b))
    for name in a.keys() & b.keys():
        check(f"--by kernel {name}: {b[name]['Total Time (ns)']} ns in {b[name]['Instances']},"
              f" merged {a[name]['Total Time (ns)']} in {a[name]['Instances']}",
              a[name]["Total Time (ns)"] == b[name]["Total Time (ns)"]
              and a[name]["Instances"] == b[name]["Instances"])
    gpu = sum(int(x["Total Time (ns)"]) for x in a.values())

    a = {x["Rank"]: x for x in rows(full["idle"]) if x["Section"] == "device"}
    b = {x["Rank"]: x for x in rows(summ["idle"]) if x["Section"] == "device"}
    check(f"--by idle: {len(b)} devices, merged {len(a)}", len(a) == len(b) == RANKS)
    for rank in a.keys() & b.keys():
        for col in ("Window (ns)", "Compute (ns)", "Communication (ns)", "Rank Wait (ns)", "Idle (ns)"):
            check(f"--by idle rank {rank} {col}: {b[rank][col]}, merged {a[rank][col]}",
                  near(a[rank][col], b[rank][col]))
    waits = [x for x in rows(summ["idle"]) if x["Section"] == "cause" and x["Cause"] == "rank"]
    check(f"--by idle: the waits charged to {[x['Where'] for x in waits]}, not rank {RANKS - 1}",
          len(waits) == 1 and waits[0]["Where"].startswith(f"rank {RANKS - 1} "))

    sites = rows(summ["source"])
    check(f"--by source: {sum(int(x['GPU Time (ns)']) for x in sites)} ns, the job's {gpu}",
          sites and sum(int(x["GPU Time (ns)"]) for x in sites) == gpu)

    for x in rows(summ["clock"]):
        r = int(os.path.basename(x["Path"])[4:])
        err = int(x["Shift (ns)"]) + truth(r) - truth(0)
        check(f"--by clock: {x['Path']} off the truth by {err} ns", abs(err) <= 5000)
    check("--by clock: the reference is not rank 0's run",
          rows(summ["clock"])[0]["Path"] == runs[0])

    p = subprocess.run([xpcorr, "job", "-q", *runs, runs[5] + "/"], capture_output=True, text=True)
    check(f"a run given twice: exit {p.returncode}, {p.stderr.strip()!r}",
          p.returncode != 0 and "given twice" in p.stderr and not p.stdout)

    os.rename(os.path.join(runs[3], "away.db"), os.path.join(runs[3], "xpcorr.db"))
    mine = run(xpcorr, "job", "-q", "--rank", "3", "--by", "kernel", "--format", "csv", *given)
    own = run(xpcorr, "report", "--by", "kernel", "--format", "csv", "--rank", "3", runs[3])
    check("--rank 3 is not rank 3's own report", mine == own and "gemm" in own)

for f in failed:
    print("FAIL", f)
if failed:
    sys.exit(1)
print(f"ok: xpcorr job on {RANKS} ranks' summaries agrees with the merged job")
