#!/usr/bin/env python3
"""report --by wait (cross-rank blame) on synthetic jobs whose straggler and
its cause are known (tests/synthgaps.c through gen-run gaps, merged):
 - two ranks: rank 1 loads its batch 1.6 ms longer a step, all of it in
   data.py:? load_batch; rank 0 waits for it in the all-reduce: >= 90% of the
   wait is charged to rank 1's load_batch, and the rows add up to the wait;
 - three ranks ("chain"): rank 2's loader is slow, rank 1 waits for it in an
   all-gather and only then launches the all-reduce rank 0 waits in: rank 0's
   wait for rank 1 is charged through rank 1 to rank 2's load_batch (>= 90%),
   and rank 2's own wait for rank 1 (which waited for rank 2) is a cycle;
 - the same two-rank job with a clock error larger than the lateness:
   every wait "too close to call", none charged to a cause;
 - json as the schema says, csv and text agree on the totals."""
import csv
import io
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

xpcorr, gen_run, exe, lib = sys.argv[1:5]
STEPS = 20
failed = []


def run(*args):
    p = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, COLUMNS=""))
    if p.returncode:
        sys.exit(f"FAIL {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def check(name, ok, detail):
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}")
    if not ok:
        failed.append(name)


def job(tmp, name, world, mode=None):
    dirs = []
    for rank in range(world):
        d = os.path.join(tmp, f"{name}{rank}")
        extra = [mode] if mode else []
        run(gen_run, "gaps", exe, lib, d, str(rank), str(world), str(STEPS),
            os.path.join(tmp, f"{name}{rank}.json"), *extra)
        dirs.append(d)
    out = os.path.join(tmp, name)
    run(xpcorr, "merge", "-q", "-o", out, *dirs)
    return out


def blame(path, fmt="json"):
    text = run(xpcorr, "report", "--by", "wait", "--top", "0", "--format", fmt, path)
    return json.loads(text) if fmt == "json" else text


def share(rows, total, **want):
    got = sum(r["ns"] for r in rows if all(r[k] == v if k != "where" else v in r[k]
                                            for k, v in want.items()))
    return got, 100.0 * got / total if total else 0


with tempfile.TemporaryDirectory() as tmp:
    two = job(tmp, "two", 2)
    b = blame(two)
    rows, total = b["blame"], b["total_wait_ns"]
    check("two ranks: waits", b["waits"] == STEPS and total > 0, f"{b['waits']} waits, {total} ns")
    check("two ranks: rows add up to the wait", sum(r["ns"] for r in rows) == total,
          f"{sum(r['ns'] for r in rows)} of {total} ns")
    ns, pct = share(rows, total, waiting_rank=0, late_rank=1, cause_rank=1, cause="host",
                    where="load_batch")
    check("two ranks: rank 1's load_batch", pct >= 90, f"{ns} ns, {pct:.1f}% of the wait")

    # csv and text say the same
    c = list(csv.DictReader(io.StringIO(blame(two, "csv").split("\nGPU time")[0])))
    check("csv rows", sum(int(r["Wait (ns)"]) for r in c if r["Section"] == "rank") == total,
          f"{len(c)} rows")
    text = blame(two, "text")
    check("text names the line", "data.py:? load_batch" in text and f"{total} ns in all" in text,
          text.splitlines()[2] if len(text.splitlines()) > 2 else text)

    chain = job(tmp, "chain", 3, "chain")
    b = blame(chain)
    rows = b["blame"]
    to1 = sum(r["ns"] for r in rows if r["waiting_rank"] == 0 and r["late_rank"] == 1)
    ns, pct = share(rows, to1, waiting_rank=0, late_rank=1, cause_rank=2, cause="host",
                    where="load_batch")
    check("chain: rank 0's wait for rank 1 is rank 2's load_batch", to1 > 0 and pct >= 90,
          f"{ns} of {to1} ns, {pct:.1f}%")
    for w in (0, 1):
        to2 = sum(r["ns"] for r in rows if r["waiting_rank"] == w and r["late_rank"] == 2)
        ns, pct = share(rows, to2, waiting_rank=w, late_rank=2, cause_rank=2, where="load_batch")
        check(f"chain: rank {w}'s wait for rank 2 is its load_batch", to2 > 0 and pct >= 90,
              f"{ns} of {to2} ns, {pct:.1f}%")
    every = b["blame_all_waiting"]
    check("chain: the totals over all waiting ranks add up, by late rank",
          sum(r["ns"] for r in every) == b["total_wait_ns"] and
          {r["late_rank"]: 0 for r in every} == {1: 0, 2: 0} and
          sum(r["waits"] for r in every if r["late_rank"] == 2 and "load_batch" in r["where"]) == 2 * STEPS,
          [(r["late_rank"], r["cause_rank"], r["where"], r["ns"]) for r in every[:3]])
    cyc = [r for r in rows if r["waiting_rank"] == 2 and r["cause"] == "rank_cycle"]
    check("chain: rank 2 waiting for rank 1 waiting for rank 2 is a cycle",
          len(cyc) == 1 and cyc[0]["where"] == "rank 2", cyc)

    # the clocks' error larger than any lateness: nobody to blame
    close = os.path.join(tmp, "close")
    shutil.copytree(two, close)
    db = sqlite3.connect(os.path.join(close, "xpcorr.db"))
    db.execute("UPDATE xp_job_runs SET spread_ns = 5000000")
    db.commit()
    db.close()
    b = blame(close)
    check("within the clock error: too close to call",
          [r["cause"] for r in b["blame"]] == ["too_close"] and b["blame"][0]["ns"] == b["total_wait_ns"],
          [(r["cause"], r["ns"]) for r in b["blame"]])
    check("text says so", "too close to call" in blame(close, "text"), "")

    # the Chrome trace: a flow from each wait to rank 1's GPU idle slice
    # before its entry (step 0's is before rank 1's first work: no slice)
    trace = os.path.join(tmp, "two-trace.json")
    run(xpcorr, "export", "--format", "chrome", "-o", trace, two)
    ev = json.load(open(trace))["traceEvents"]
    idle = [e for e in ev if e.get("cat") == "gpu_idle"]
    flows = [e for e in ev if e.get("cat") == "blame"]

    def slice_at(e):
        return [s["name"] for s in idle if (s["pid"], s["tid"]) == (e["pid"], e["tid"])
                and s["ts"] <= e["ts"] < s["ts"] + s["dur"]]
    starts = [e for e in flows if e["ph"] == "s"]
    check("chrome: a blame flow per wait", len(starts) == STEPS - 1, f"{len(starts)} flows")
    check("chrome: from 'waiting for rank 1' to a GPU idle slice",
          all(slice_at(e) == (["waiting for rank 1"] if e["ph"] == "s" else ["GPU idle"]) for e in flows),
          [(e["ph"], slice_at(e)) for e in flows[:2]])
    # the chain: rank 0's wait for rank 1 points at rank 1's own wait for
    # rank 2 (which points at rank 2's loader gap); every flow ends on the
    # rank its slice names
    run(xpcorr, "export", "--format", "chrome", "-o", trace, chain)
    ev = json.load(open(trace))["traceEvents"]
    idle = [e for e in ev if e.get("cat") == "gpu_idle"]
    # the GPUs' processes are named for their host, node-RANK here
    rank_of = {e["pid"]: int(re.search(r"node-(\d+)", e["args"]["name"]).group(1)) for e in ev
               if e["ph"] == "M" and e["name"] == "process_name" and "node-" in e["args"]["name"]}
    pairs = {}
    for e in ev:
        if e.get("cat") == "blame":
            pairs.setdefault(e["id"], {})[e["ph"]] = e
    ends = [(rank_of.get(p["s"]["pid"]), slice_at(p["s"]), rank_of.get(p["f"]["pid"]), slice_at(p["f"]))
            for p in pairs.values()]
    via = [x for x in ends if x[0] == 0 and x[1] == ["waiting for rank 1"] and x[3] == ["waiting for rank 2"]]
    check("chrome chain: rank 0's waits for rank 1 point at rank 1's waits for rank 2",
          len(via) == STEPS, f"{len(via)} of {len(ends)} flows")
    check("chrome chain: each flow ends on the rank its slice names",
          all(x[1] and x[1][0] == f"waiting for rank {x[2]}" for x in ends), ends[:3])
    plain = os.path.join(tmp, "plain")
    run(gen_run, "gaps", exe, lib, plain, "0", "1", str(STEPS), os.path.join(tmp, "plain.json"))
    run(xpcorr, "export", "--format", "chrome", "-o", trace, plain)
    check("chrome: no blame flow without ranks to wait for",
          '"blame"' not in open(trace).read(), "")

    here = os.path.dirname(os.path.abspath(__file__))
    for name, path in (("two", two), ("chain", chain)):
        out = os.path.join(tmp, f"{name}.json")
        with open(out, "w") as f:
            f.write(run(xpcorr, "report", "--by", "wait", "--format", "json", path))
        run(sys.executable, os.path.join(here, "check-report-json.py"),
            os.path.join(here, "report-schema.json"), out)
    print("ok   json schema")

if failed:
    sys.exit(f"FAIL: {', '.join(failed)}")
