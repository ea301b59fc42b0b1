#!/usr/bin/env python3
"""Collectives the ranks wait for on their hosts (gloo: each rank's thread
off CPU in c10d::Work::wait, no collective kernel) on a synthetic two-rank
job whose straggler and cause are known (tests/synthgaps.c, gen-run gaps
... gloo, merged): rank 1 loads its batch 1.6 ms longer a step, all of it
in data.py:? load_batch; rank 0 waits for it in the all-reduce.
 - --by rank names rank 1 for the all-reduce (host-side), with how long
   rank 0 waited; its host section counts each rank's waits;
 - --by wait charges >= 90% of rank 0's wait to rank 1's load_batch, the
   rows adding up to the wait;
 - --by idle counts rank 0's idle GPU during its wait for rank 1 as
   "waiting for another rank" (1.6 ms a step), rank 1's as nothing of it;
 - the same as a normal user's waits (the blocked call, then Python
   frames): found by the innermost Python frame, all_reduce;
 - ranks whose waits do not pair up (rank 1 one fewer): nothing matched,
   and --by rank, wait and idle say so;
 - the clocks' error larger than the lateness: too close to call;
 - json as the schema says; the Chrome trace's idle track and blame flows;
 - the same from the ranks' own summaries (xpcorr job, no merge): --by
   rank and --by wait as above, no wait counted as a kernel, a mismatch
   said and not matched."""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

xpcorr, gen_run, exe, lib = sys.argv[1:5]
STEPS = 20
LATE_NS = 1600000               # rank 1's longer load, a step
failed = []


def run(*args, ok=(0,)):
    p = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, COLUMNS=""))
    if p.returncode not in ok:
        sys.exit(f"FAIL {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def check(name, ok, detail):
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}")
    if not ok:
        failed.append(name)


def job(tmp, name, mode):
    dirs = []
    for rank in range(2):
        d = os.path.join(tmp, f"{name}{rank}")
        run(gen_run, "gaps", exe, lib, d, str(rank), "2", str(STEPS),
            os.path.join(tmp, f"{name}{rank}.json"), mode)
        dirs.append(d)
    out = os.path.join(tmp, name)
    run(xpcorr, "merge", "-q", "-o", out, *dirs)
    return out


def report(path, by, fmt="json"):
    text = run(xpcorr, "report", "--by", by, "--top", "0", "--format", fmt, path)
    return json.loads(text) if fmt == "json" else text


with tempfile.TemporaryDirectory() as tmp:
    two = job(tmp, "gloo", "gloo")
    want = STEPS * LATE_NS

    r = report(two, "rank")
    host = [s for s in r["spread"] if s.get("host_side")]
    check("rank: one host-side collective, named", len(host) == 1 and
          host[0]["kernel"].startswith("all_reduce") and host[0]["collective"],
          [s["kernel"] for s in host])
    check("rank: its Slowest is the late rank, 1", host and host[0]["slowest_rank"] == 1,
          host and host[0]["slowest_rank"])
    check("rank: the others waited 1.6 ms a step, all for rank 1",
          host and host[0]["waited_ns"] == want and host[0]["waited_for_slowest_ns"] == want,
          host and (host[0]["waited_ns"], host[0]["waited_for_slowest_ns"], want))
    hc = {h["rank"]: h for h in r.get("host_collectives", [])}
    check("rank: each rank's waits", set(hc) == {0, 1} and
          all(h["waits"] == STEPS for h in hc.values()) and hc[0]["waited_ns"] == want and
          hc[1]["waited_ns"] == 0 and hc[1]["last_entries"] == STEPS and hc[0]["last_entries"] == 0,
          [(h["rank"], h["waits"], h["waited_ns"], h["last_entries"]) for h in hc.values()])
    text = report(two, "rank", "text")
    check("rank text: the host-side section and row", "Host-side collectives" in text and
          "all_reduce (host-side" in text and "100.0% of it for rank 1" in text, "")

    b = report(two, "wait")
    rows, total = b["blame"], b["total_wait_ns"]
    check("wait: every step's wait", b["waits"] == STEPS and total == want, (b["waits"], total))
    check("wait: rows add up to the wait", sum(x["ns"] for x in rows) == total,
          sum(x["ns"] for x in rows))
    lb = sum(x["ns"] for x in rows if x["waiting_rank"] == 0 and x["late_rank"] == 1 and
             x["cause_rank"] == 1 and x["cause"] == "host" and "load_batch" in x["where"])
    check("wait: rank 1's load_batch", total and 100 * lb / total >= 90,
          f"{lb} ns, {100 * lb / total if total else 0:.1f}% of the wait")
    check("wait text names the line", "data.py:? load_batch" in report(two, "wait", "text"), "")

    i = {d["rank"]: d for d in report(two, "idle")["devices"]}
    c0 = [c for c in i[0]["causes"] if c["cause"] == "rank"]
    check("idle: rank 0 waits 1.6 ms a step for rank 1", i[0]["rank_wait_ns"] == want and
          len(c0) == 1 and c0[0]["where"].startswith("rank 1") and c0[0]["ns"] == want,
          (i[0]["rank_wait_ns"], [(c["where"], c["ns"]) for c in c0]))
    check("idle: rank 1 waits for nobody", i[1]["rank_wait_ns"] == 0, i[1]["rank_wait_ns"])

    # a normal user's waits: no native frame under the Python ones but the
    # blocked call; the innermost Python frame, all_reduce, says the wait
    user = job(tmp, "user", "gloo-user")
    host = [s for s in report(user, "rank")["spread"] if s.get("host_side")]
    b = report(user, "wait")
    lb = sum(x["ns"] for x in b["blame"] if x["late_rank"] == 1 and x["cause"] == "host" and
             "load_batch" in x["where"])
    check("user: all_reduce found by its Python frame, rank 1 named, its load_batch blamed",
          len(host) == 1 and host[0]["kernel"].startswith("all_reduce (host-side") and
          host[0]["slowest_rank"] == 1 and host[0]["waited_ns"] == want and
          b["total_wait_ns"] == want and 100 * lb >= 90 * want,
          (host, b["total_wait_ns"], lb))

    short = job(tmp, "short", "gloo-short")
    r = report(short, "rank")
    check("mismatch: no host-side row", not [s for s in r["spread"] if s.get("host_side")] and
          not r.get("host_collectives"), r.get("host_collectives"))
    check("mismatch: said", "not matched across ranks: rank 0 waited 20 times, rank 1 19" in
          " ".join(report(short, "rank", "text").split()), "")
    p = subprocess.run([xpcorr, "report", "--by", "wait", short], capture_output=True, text=True,
                       env=dict(os.environ, COLUMNS=""))
    check("mismatch: no wait to charge, said", "nothing to show" in p.stderr and
          "not matched across ranks, not charged: rank 0 waited 20 times, rank 1 19" in
          " ".join(p.stdout.split()), "")
    check("mismatch: --by idle says so too", "not matched across ranks, no wait for a rank in"
          " them: rank 0 waited 20 times, rank 1 19" in " ".join(report(short, "idle", "text").split()),
          "")

    close = os.path.join(tmp, "close")
    shutil.copytree(two, close)
    db = sqlite3.connect(os.path.join(close, "xpcorr.db"))
    db.execute("UPDATE xp_job_runs SET spread_ns = 5000000")
    db.commit()
    db.close()
    b = report(close, "wait")
    check("within the clock error: too close to call",
          [x["cause"] for x in b["blame"]] == ["too_close"] and b["blame"][0]["ns"] == want,
          [(x["cause"], x["ns"]) for x in b["blame"]])
    r = report(close, "rank")
    host = [s for s in r["spread"] if s.get("host_side")]
    check("within the clock error: no rank named", host and host[0]["slowest_rank"] is None and
          host[0]["waited_within_clock_error_ns"] == want, host)

    # the Chrome trace: rank 0's GPU waiting for rank 1 each step, a blame
    # flow from each such wait to rank 1 (but the first: rank 1's late
    # stretch there starts before its track, at its first GPU work)
    trace = os.path.join(tmp, "gloo.json")
    run(xpcorr, "export", "--format", "chrome", "-o", trace, two)
    with open(trace) as f:
        ev = json.load(f)["traceEvents"]
    waits = [e for e in ev if e.get("name") == "waiting for rank 1"]
    track = lambda e: (e["pid"], e["tid"])
    starts = {e["id"]: e for e in ev if e.get("cat") == "blame" and e["ph"] == "s"}
    ends = [e for e in ev if e.get("cat") == "blame" and e["ph"] == "f" and e["id"] in starts]
    check("chrome: rank 0 waiting for rank 1 each step, a flow to rank 1 from each",
          len(waits) == STEPS and len(ends) == STEPS - 1 and
          all(track(starts[e["id"]]) == track(waits[0]) != track(e) for e in ends),
          (len(waits), len(ends)))

    # the same jobs from the ranks' own summaries (xpcorr job), no merge
    def job_view(name, by, fmt="json"):
        dirs = [os.path.join(tmp, f"{name}{rank}") for rank in range(2)]
        for d in dirs:
            run(xpcorr, "ingest", "-q", d)
        text = run(xpcorr, "job", "-q", "--by", by, "--top", "0", "--format", fmt, *dirs)
        return json.loads(text) if fmt == "json" else text

    host = [s for s in job_view("gloo", "rank")["spread"] if s.get("host_side")]
    check("job rank: one host-side collective, rank 1 the slowest, the others' wait",
          len(host) == 1 and host[0]["name"].startswith("all_reduce") and
          host[0]["slowest_rank"] == 1 and host[0]["waited_ns"] == want and
          not host[0]["not_matched"], host)
    b = job_view("gloo", "wait")
    lb = sum(x["ns"] for x in b["blame"] if x["waiting_rank"] == 0 and x["late_rank"] == 1 and
             x["cause_rank"] == 1 and x["cause"] == "host" and "load_batch" in x["where"])
    check("job wait: every step's wait, >= 90% at rank 1's load_batch",
          b["waits"] == STEPS and b["total_wait_ns"] == want and 100 * lb >= 90 * want,
          (b["waits"], b["total_wait_ns"], lb))
    check("job kernel: no host-side wait counted as a kernel",
          not [k for k in job_view("gloo", "kernel")["kernels"] if "host-side" in k["name"]], "")
    text = job_view("short", "rank", "text")
    host = [s for s in job_view("short", "rank")["spread"] if s.get("host_side")]
    check("job mismatch: not matched, no wait, said",
          len(host) == 1 and host[0]["not_matched"] and host[0]["waited_ns"] == 0 and
          "not matched across ranks: rank 0 waited 20 times, rank 1 19" in " ".join(text.split()),
          host)

    here = os.path.dirname(os.path.abspath(__file__))
    for by in ("rank", "wait", "idle"):
        out = os.path.join(tmp, f"{by}.json")
        with open(out, "w") as f:
            f.write(run(xpcorr, "report", "--by", by, "--format", "json", two))
        run(sys.executable, os.path.join(here, "check-report-json.py"),
            os.path.join(here, "report-schema.json"), out)
    print("ok   json schema")

if failed:
    sys.exit(f"FAIL: {', '.join(failed)}")
