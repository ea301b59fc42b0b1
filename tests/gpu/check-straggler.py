#!/usr/bin/env python3
"""check-straggler.py XPCORR STEPS DB... - what straggler-device.sh's jobs must
show (tests/gpu/straggler_nccl.py: rank 1 loads 6 ms slower a step), on each
job database (one xpcap record under torchrun, or ranks recorded apart and
merged by xpcorr merge), with its NVTX step ranges and again without them
(steps from the Python loop): every rank has STEPS steps; rank 1's top idle
cause is its loader (load_batch); every other rank waited for rank 1 in its
all-reduces (a quarter of 6 ms a step at least); --by overlap: every rank's
communication partly under compute, the straggler's least exposed; --by
wait: >= 90% of the others' wait charged to rank 1's load_batch line.
  python3 tests/gpu/check-straggler.py build/bin/xpcorr 150 job/xpcorr.db"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

xpcorr, steps, dbs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
bad = 0


def say(ok, what):
    global bad
    bad += not ok
    print(("ok   " if ok else "FAIL ") + what)


def report(view, db):
    p = subprocess.run([xpcorr, "report", "--by", view, "--format", "json", "--top", "0", db],
                       capture_output=True, text=True, check=True)
    return {d["rank"]: d for d in json.loads(p.stdout)["devices"]}


def blame(db, label):
    p = subprocess.run([xpcorr, "report", "--by", "wait", "--format", "json", "--top", "0", db],
                       capture_output=True, text=True, check=True)
    b = json.loads(p.stdout)
    rows = [r for r in b["blame"] if r["waiting_rank"] != 1]
    waited = sum(r["ns"] for r in rows)
    loader = sum(r["ns"] for r in rows if r["cause_rank"] == 1 and r["cause"] in ("host", "host_native")
                 and "load_batch" in r["where"])
    top = sorted(rows, key=lambda r: -r["ns"])[:3]
    print(f"  --by wait: the others waited {waited / 1e6:.1f} ms, {100 * loader / max(waited, 1):.1f}%"
          f" charged to rank 1's load_batch; top: " +
          "; ".join(f"{r['share_percent']:.1f}% rank {r['cause_rank']} {r['cause']} {r['where'][:50]}" for r in top))
    say(waited > 0 and loader >= 0.9 * waited, f"{label}: blame charges >= 90% of the others' wait to"
        " rank 1's load_batch")


def check(db, label, want_from):
    idle, over = report("idle", db), report("overlap", db)
    print(f"== {label}: ranks {sorted(idle)}")
    for r, d in sorted(idle.items()):
        top = d["causes"][0]
        wait = sum(c["ns"] for c in d["causes"] if c["cause"] == "rank" and "rank 1 " in c["where"])
        o = over[r]
        print(f"  rank {r}: {d['steps']} steps ({d['steps_from']}), idle {d['idle_ns'] / 1e6:.1f} ms,"
              f" waited for rank 1 {wait / 1e6:.1f} ms; top cause {top['share_percent']:.1f}%"
              f" {top['cause']} {top['where'][:60]}; communication {o['communication_ns'] / 1e6:.1f} ms,"
              f" {o['overlapped_ns'] / 1e6:.1f} under compute, {o['exposed_ns'] / 1e6:.1f} exposed")
        say(d["steps"] == steps and d["steps_from"] == want_from, f"rank {r}: {steps} steps of {want_from}")
        if r == 1:
            say(top["cause"] == "host" and "load_batch" in top["where"], "rank 1's top idle cause is its loader")
        else:
            say(wait >= steps * 6e6 / 4, f"rank {r} waited for rank 1 ({wait / steps / 1e6:.2f} ms a step)")
        say(o["overlapped_ns"] > 0, f"rank {r}: communication partly under compute")
    say(all(over[1]["exposed_ns"] < o["exposed_ns"] for r, o in over.items() if r != 1),
        "the straggler's communication is the least exposed")
    blame(db, label)


with tempfile.TemporaryDirectory() as tmp:
    for i, db in enumerate(dbs):
        check(db, db, "nvtx")
        loop = os.path.join(tmp, f"loop{i}.db")
        shutil.copy(db, loop)
        with sqlite3.connect(loop) as c:
            c.execute("DELETE FROM NVTX_EVENTS")
        check(loop, f"{db} without NVTX ranges", "python_loop")
sys.exit(1 if bad else 0)
