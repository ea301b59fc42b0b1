#!/usr/bin/env python3
"""check-gloo.py XPCORR DB - what a two-rank job over gloo must show
(tests/gpu/straggler_nccl.py --backend gloo --device 0: rank 1 loads 6 ms
slower a step; gloo's all-reduce runs on the host, each rank's thread
waiting in c10d::Work::wait, no collective kernel), on its database or on
fixtures/h200-gloo (tests/gloo-fixture.sh); the same of a CPU-only job
(fixtures/cpu-gloo, tests/cpu/straggler_gloo.py: no GPU, each rank's
timeline its host's alone):
 - --by rank: the all-reduce, host-side, names rank 1, >= 90% of the others'
   wait for it; both ranks waited as many times;
 - --by wait: >= 90% of rank 0's wait charged to rank 1's load_batch (the
   share at its line 24 printed);
 - --by idle: rank 0's GPU waiting for rank 1 at least half of rank 0's
   wait (its GPU ran its own work for the rest), rank 1's at most a tenth;
 - the Chrome trace: a blame flow from rank 0's wait to rank 1 in >= 90%
   of the instances rank 1 entered last;
 - xpcorr job on the ranks' runs given (else on DB's run, where DB is a
   run's xpcorr.db): --by rank and --by wait as above.
  python3 tests/gpu/check-gloo.py build/bin/xpcorr job/xpcorr.db [RANK_RUN...]
(RANK_RUN: each rank's own run, ingested: xpcorr job reads their summaries;
DB "-": those alone, no merged job)"""
import json
import os
import subprocess
import sys
import tempfile

xpcorr, db = sys.argv[1:3]
runs = sys.argv[3:]             # the ranks' own runs, for xpcorr job; else db's run
bad = 0


def say(ok, what):
    global bad
    bad += not ok
    print(("ok   " if ok else "FAIL ") + what)


def report(by):
    p = subprocess.run([xpcorr, "report", "--by", by, "--format", "json", "--top", "0", db],
                       capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


def check_report():
    """The merged job's report and Chrome trace."""
    r = report("rank")
    host = [s for s in r["spread"] if s.get("host_side")]
    hc = {h["rank"]: h for h in r.get("host_collectives", [])}
    say(len(host) == 1 and host[0]["kernel"].startswith("all_reduce"),
        f"rank: one host-side collective: {[s['kernel'] for s in host]}")
    say(host and host[0]["slowest_rank"] == 1 and
        host[0]["waited_for_slowest_ns"] >= 0.9 * host[0]["waited_ns"],
        "rank: all_reduce's Slowest is rank 1: " +
        (f"{host[0]['waited_for_slowest_ns']} of {host[0]['waited_ns']} ns" if host else "none"))
    say(set(hc) == {0, 1} and hc[0]["waits"] == hc[1]["waits"] > 0,
        f"rank: waits {[(h['rank'], h['waits']) for h in hc.values()]}")
    wait0 = hc[0]["waited_ns"] if 0 in hc else 0

    b = report("wait")
    rows = [x for x in b["blame"] if x["waiting_rank"] == 0]
    total = sum(x["ns"] for x in rows)
    lb = sum(x["ns"] for x in rows if x["late_rank"] == 1 and x["cause_rank"] == 1 and
             x["cause"] == "host" and x["where"].endswith(" load_batch"))
    l24 = sum(x["ns"] for x in rows if x["late_rank"] == 1 and x["cause"] == "host" and
              ":24 load_batch" in x["where"])
    say(total == wait0 and total > 0 and lb >= 0.9 * total,
        f"wait: rank 0 waited {total} ns, {100 * lb / max(total, 1):.1f}% at rank 1's load_batch"
        f" ({100 * l24 / max(total, 1):.1f}% at its line 24)")

    i = {d["rank"]: d for d in report("idle")["devices"]}
    say(i[0]["rank_wait_ns"] >= 0.5 * wait0 and
        any(c["cause"] == "rank" and c["where"].startswith("rank 1") for c in i[0]["causes"]),
        f"idle: rank 0 waiting for rank 1 {i[0]['rank_wait_ns']} ns of its {wait0} ns wait")
    say(i[1]["rank_wait_ns"] <= 0.1 * max(i[0]["rank_wait_ns"], 1),
        f"idle: rank 1 waiting {i[1]['rank_wait_ns']} ns")

    # the Chrome trace: a blame flow from rank 0's wait to rank 1 in most of
    # the instances rank 1 entered last
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        subprocess.run([xpcorr, "export", "--format", "chrome", "-o", trace, db], check=True,
                       capture_output=True)
        with open(trace) as f:
            ev = json.load(f)["traceEvents"]
    waits = [e for e in ev if e.get("name") == "waiting for rank 1"]
    track = lambda e: (e["pid"], e["tid"])     # two ranks on one GPU: one pid, a track each
    starts = {e["id"]: e for e in ev if e.get("cat") == "blame" and e["ph"] == "s"}
    flows = [e for e in ev if e.get("cat") == "blame" and e["ph"] == "f" and e["id"] in starts and
             waits and track(starts[e["id"]]) == track(waits[0]) != track(e)]
    late1 = hc[1]["last_entries"] if 1 in hc else 0
    say(late1 > 0 and len(flows) >= 0.9 * late1,
        f"chrome: {len(flows)} blame flows from rank 0's waits to rank 1, which entered {late1}"
        " instances last")


if db != "-":
    check_report()

# the same from the job's own summary (xpcorr job: what a job of many
# ranks' runs reads), where the database is a run's
if runs or (db != "-" and os.path.basename(db) == "xpcorr.db"):
    def job(by):
        p = subprocess.run([xpcorr, "job", "-q", "--by", by, "--format", "json", "--top", "0"] +
                           (runs or [os.path.dirname(db) or "."]), capture_output=True, text=True,
                           check=True)
        return json.loads(p.stdout)

    js = [s for s in job("rank")["spread"] if s.get("host_side")]
    say(len(js) == 1 and js[0]["slowest_rank"] == 1 and
        js[0]["waited_for_slowest_ns"] >= 0.9 * js[0]["waited_ns"] > 0,
        "job rank: all_reduce's Slowest is rank 1: " +
        (f"{js[0]['waited_for_slowest_ns']} of {js[0]['waited_ns']} ns" if js else "none"))
    rows = [x for x in job("wait")["blame"] if x["waiting_rank"] == 0]
    jt = sum(x["ns"] for x in rows)
    jl = sum(x["ns"] for x in rows if x["late_rank"] == 1 and x["cause_rank"] == 1 and
             x["cause"] == "host" and x["where"].endswith(" load_batch"))
    say(jt > 0 and jl >= 0.9 * jt,
        f"job wait: rank 0 waited {jt} ns, {100 * jl / max(jt, 1):.1f}% at rank 1's load_batch")
sys.exit(1 if bad else 0)
