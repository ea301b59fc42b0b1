#!/usr/bin/env python3
"""job-wait.py - `xpcorr job --by wait` (cross-rank blame from the ranks'
summaries alone) against `xpcorr report --by wait` on the same job merged:
4 ranks of tests/gen-run gaps, the last the straggler (its data.py
load_batch 1.6 ms longer a step). Each rank is ingested on its own (which
writes RUN/xpsum.db), the databases are moved away, then:
  - the waits and their total equal the merged job's;
  - every (late rank, cause rank, cause, where) row's share of the wait
    within 2 points of the merged job's, and the first row the same;
  - >= 90% of the wait charged to rank 3's load_batch;
  - csv and text say the same totals; --by rank text honours --top;
  - every view's json says what its csv says;
  - 32 ranks of gen-run job whose rank 0 runs instances ahead of the
    straggler: the late rank's stretch taken from where the waiting rank's
    starts, the rows within 1 point of the merged job's;
  - a summary without the collectives' stretches (an older xpcorr's) is
    refused with one line saying to ingest again.

    job-wait.py XPCORR GEN_RUN FIXTURE_EXE FIXTURE_LIB
"""
import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

xpcorr, gen_run, exe, lib = sys.argv[1:5]
RANKS, STEPS = 4, 20
failed = []


def run(*args, ok=True):
    p = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, COLUMNS=""))
    if ok and p.returncode:
        sys.exit(f"FAIL {' '.join(args[:4])}...: exit {p.returncode}: {p.stderr.strip()[-600:]}")
    return p if not ok else p.stdout


def check(name, ok, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}")
    if not ok:
        failed.append(name)


def shares(b):
    rows = b.get("blame_all_waiting") or b["blame"]
    total = b["total_wait_ns"]
    out = {}
    for r in rows:
        key = (r["late_rank"], r["cause_rank"], r["cause"], r["where"])
        out[key] = out.get(key, 0) + 100.0 * r["ns"] / total
    return out


with tempfile.TemporaryDirectory() as tmp:
    runs = [os.path.join(tmp, "rank%d" % r) for r in range(RANKS)]
    for r, d in enumerate(runs):
        run(gen_run, "gaps", exe, lib, d, str(r), str(RANKS), str(STEPS), d + ".json")
        run(xpcorr, "ingest", "-q", d)
    job = os.path.join(tmp, "job")
    run(xpcorr, "merge", "-q", "-o", job, *runs)
    full = json.loads(run(xpcorr, "report", "--by", "wait", "--top", "0", "--format", "json", job))
    for d in runs:
        os.rename(os.path.join(d, "xpcorr.db"), os.path.join(d, "away.db"))
    given = runs[::-1]
    summ = json.loads(run(xpcorr, "job", "-q", "--by", "wait", "--top", "0", "--format", "json", *given))

    check("waits and their total", (summ["waits"], summ["total_wait_ns"]) ==
          (full["waits"], full["total_wait_ns"]) and full["waits"] == (RANKS - 1) * STEPS,
          f"{summ['waits']} waits, {summ['total_wait_ns']} ns; merged {full['waits']}, "
          f"{full['total_wait_ns']} ns")
    check("rows add up to the wait", sum(r["ns"] for r in summ["blame"]) == summ["total_wait_ns"])
    a, b = shares(full), shares(summ)
    far = {k: (round(a.get(k, 0), 2), round(b.get(k, 0), 2)) for k in a.keys() | b.keys()
           if abs(a.get(k, 0) - b.get(k, 0)) > 2.0}
    check("every row's share within 2 points of the merged job's", not far, far)
    top_a, top_b = max(a, key=a.get), max(b, key=b.get)
    check("the same first row", top_a == top_b, f"{top_b}, merged {top_a}")
    got = sum(v for k, v in b.items() if k[:3] == (RANKS - 1, RANKS - 1, "host") and "load_batch" in k[3])
    check(f"rank {RANKS - 1}'s load_batch", got >= 90, f"{got:.1f}% of the wait")

    c = list(csv.DictReader(io.StringIO(run(xpcorr, "job", "-q", "--by", "wait", "--format", "csv",
                                            "--top", "0", *given))))
    check("csv: the waiting ranks' rows add up", sum(int(r["Wait (ns)"]) for r in c if r["Section"] == "rank")
          == summ["total_wait_ns"], f"{len(c)} rows")
    text = run(xpcorr, "job", "-q", "--by", "wait", *given)
    check("text names the line", "data.py:? load_batch" in text and f"{summ['total_wait_ns']} ns in all" in text)

    text = run(xpcorr, "job", "-q", "--by", "rank", "--top", "2", *given)
    table = text[:text.index("  Spread (ns)")]
    shown = [l for l in table.splitlines() if l[:6].strip().isdigit()]
    check("--by rank --top 2: two ranks, the straggler among them, and how many not shown",
          len(shown) == 2 and any(l.split()[0] == str(RANKS - 1) for l in shown)
          and "2 more ranks" in table, table)

    # json for every view, saying what csv says
    for v, key, col, field in (("rank", "ranks_table", "GPU Time (ns)", "gpu_ns"),
                               ("kernel", "kernels", "Total Time (ns)", "total_ns"),
                               ("idle", "devices", "Rank Wait (ns)", "rank_wait_ns"),
                               ("clock", "runs", "Shift (ns)", "shift_ns")):
        # --top 1: ranks and devices all the same (as csv), kernels cut (as csv)
        top = "0" if v == "kernel" else "1"
        j = json.loads(run(xpcorr, "job", "-q", "--by", v, "--format", "json", "--top", top, *given))
        c = [r for r in csv.DictReader(io.StringIO(run(xpcorr, "job", "-q", "--by", v, "--format", "csv",
                                                       "--top", "0", *given)))
             if r.get("Section", "rank" if v == "rank" else "device") in ("rank", "device")]
        check(f"--by {v} json", j.get("job") == v and sorted(r[field] for r in j[key]) ==
              sorted(int(r[col]) for r in c), f"{len(j[key])} rows, csv {len(c)}")
    j = json.loads(run(xpcorr, "job", "-q", "--by", "source", "--format", "json", *given))
    check("--by source json: the sites' kernels add up to the GPU time",
          sum(k["ns"] for s in j["sites"] for k in s["kernels"]) == sum(s["site_ns"] for s in j["sites"]) > 0)

    old = os.path.join(runs[1], "xpsum.db")
    db = sqlite3.connect(old)
    db.execute("DROP TABLE xs_span")
    db.commit()
    db.close()
    p = run(xpcorr, "job", "-q", "--by", "wait", *given, ok=False)
    check("an older summary: refused in one line", p.returncode != 0 and not p.stdout and
          "ingest" in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr.strip())

    # gen-run job, 32 ranks: rank 0 runs ahead of the straggler (rank 31,
    # its compute the longest), its collectives ending after its next ones
    # start, so its stretch before a collective starts instances back; the
    # late rank's must start at the end of the same instance on it
    ahead = [os.path.join(tmp, "ahead%02d" % r) for r in range(32)]
    for r, d in enumerate(ahead):
        run(gen_run, "job", exe, lib, d, str(r), "32", "node-%02d" % r, str(r * 7919000),
            str(r * 733331 % 6000000 - 3000000), "20")
        run(xpcorr, "ingest", "-q", d)
    db = sqlite3.connect(os.path.join(ahead[0], "xpsum.db"))
    back = db.execute("SELECT max(nth - from_nth) FROM xs_span WHERE from_nth >= 0").fetchone()[0]
    db.close()
    check("ahead: rank 0's stretches start instances back", back and back >= 2, f"{back} back")
    merged = os.path.join(tmp, "ahead")
    run(xpcorr, "merge", "-q", "-o", merged, *ahead)
    full = json.loads(run(xpcorr, "report", "--by", "wait", "--top", "0", "--format", "json", merged))
    for d in ahead:
        os.rename(os.path.join(d, "xpcorr.db"), os.path.join(d, "away.db"))
    summ = json.loads(run(xpcorr, "job", "-q", "--by", "wait", "--top", "0", "--format", "json", *ahead))
    a, b = shares(full), shares(summ)
    far = {k: (round(a.get(k, 0), 2), round(b.get(k, 0), 2)) for k in a.keys() | b.keys()
           if abs(a.get(k, 0) - b.get(k, 0)) > 1.0}
    check("ahead: every row within 1 point of the merged job's", not far and
          summ["total_wait_ns"] == full["total_wait_ns"], far)
    got = sum(v for k, v in b.items() if k[:3] == (31, 31, "gpu_compute"))
    check("ahead: rank 31's GPU compute", got >= 90, f"{got:.1f}% of the wait")

if failed:
    sys.exit(f"FAIL: {', '.join(failed)}")
print(f"ok: xpcorr job --by wait on {RANKS} ranks' summaries agrees with the merged job")
