#!/usr/bin/env python3
"""chrome-check.py - checks a Chrome trace written by `xpcorr export --format
chrome` against the database it came from, by SQL of its own: events per
category, GPU slices at their exact ns times, flow pairs, tracks, stack frames.

  chrome-check.py trace DB TRACE.json [SINCE UNTIL]   # the whole trace or a window
  chrome-check.py pid DB TRACE.json PID               # a trace cut with --pid
"""
import collections
import decimal
import json
import sqlite3
import sys

failures = []


def check(ok, what):
    if not ok:
        print("FAIL " + what)
        failures.append(what)


def ns(us):
    """Chrome trace microseconds (exact decimals) back to integer ns."""
    return int(us * 1000)


def load(path):
    with open(path) as f:
        return json.load(f, parse_float=decimal.Decimal)


def expected(db, since, until, pid):
    """Events per category from the database, with the export's filters."""
    def win(col):
        w = " AND %s >= %d" % (col, since)
        if until:
            w += " AND %s < %d" % (col, until)
        return w

    def one(sql):
        return db.execute(sql).fetchone()[0]
    p = "" if pid is None else " AND %s = %d"
    want = {
        "cuda_runtime": one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass = 0"
                            + win("start") + (p % ("globalTid >> 24", pid) if p else "")),
        "cuda_driver": one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass = 1"
                           + win("start") + (p % ("globalTid >> 24", pid) if p else "")),
        "user_annotation": one("SELECT count(*) FROM NVTX_EVENTS WHERE 1" + win("start")
                               + (p % ("globalTid >> 24", pid) if p else "")),
        "cpu_sample": one("SELECT count(*) FROM xp_samples WHERE 1" + win("ts")
                          + (p % ("pid", pid) if p else "")),
    }
    # one slice per CUDA graph replay (its first kernel's start in the window)
    want["cuda_graph"] = one("SELECT count(*) FROM (SELECT min(start) AS start, globalPid FROM"
                             " CUPTI_ACTIVITY_KIND_KERNEL WHERE graphId > 0 AND (xp_flags & 1) = 0"
                             " GROUP BY globalPid, graphId, correlationId) WHERE 1" + win("start")
                             + (p % ("globalPid >> 24", pid) if p else ""))
    gpu = {}
    flows = 0
    for table, cat in (("KERNEL", "kernel"), ("MEMCPY", "gpu_memcpy"), ("MEMSET", "gpu_memset")):
        where = "(g.xp_flags & 1) = 0" + win("g.start") + (p % ("g.globalPid >> 24", pid) if p else "")
        rows = db.execute("SELECT g.start, g.end FROM CUPTI_ACTIVITY_KIND_%s g WHERE %s" % (table, where)).fetchall()
        want[cat] = len(rows)
        gpu[cat] = collections.Counter(rows)
        flows += one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_%s g JOIN xp_attribution a ON a.gpu_table = '%s'"
                     " AND a.gpu_rowid = g.rowid JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.rowid = a.api_rowid"
                     " WHERE %s %s" % (table, table, where, win("r.start")))
    tracks = one("SELECT count(*) FROM (SELECT DISTINCT deviceId, globalPid, contextId, streamId FROM ("
                 + " UNION ALL ".join("SELECT deviceId, globalPid, contextId, streamId FROM CUPTI_ACTIVITY_KIND_%s g"
                                      " WHERE (g.xp_flags & 1) = 0 %s %s" % (t, win("g.start"),
                                                                               p % ("g.globalPid >> 24", pid) if p else "")
                                      for t in ("KERNEL", "MEMCPY", "MEMSET")) + "))")
    return want, gpu, flows, tracks


def check_trace(db, trace, since=0, until=0, pid=None):
    t = load(trace)
    ev = t["traceEvents"]
    base = int(t.get("baseTimeNanoseconds", 0))     # "ts" counts from the run's start
    at = lambda us: ns(us) + base
    want, gpu, flows, tracks = expected(db, since, until, pid)
    got = collections.Counter(e.get("cat") for e in ev if e["ph"] in ("X", "i"))
    for cat, n in sorted(want.items()):
        check(got[cat] == n, "%s: %d events in the trace, %d in the database" % (cat, got[cat], n))
    for cat, rows in gpu.items():
        times = collections.Counter((at(e["ts"]), at(e["ts"] + e["dur"])) for e in ev if e.get("cat") == cat)
        check(times == rows, "%s: start and end in the trace are the database's to the ns" % cat)
    starts = collections.Counter(e["id"] for e in ev if e["ph"] == "s")
    ends = collections.Counter(e["id"] for e in ev if e["ph"] == "f")
    check(starts == ends and all(n == 1 for n in starts.values()),
          "flow ids: one s and one f each (%d s, %d f)" % (sum(starts.values()), sum(ends.values())))
    launch_flows = {e["id"] for e in ev if e["ph"] == "s" and e.get("cat") == "ac2g"}
    check(len(launch_flows) == flows, "flows: %d in the trace, %d launch->GPU pairs in the database" % (len(launch_flows), flows))
    check(all(e.get("bp") == "e" and e["cat"] in ("ac2g", "blame") for e in ev if e["ph"] == "f"), "flow ends bind to the enclosing slice")
    # a job's blame flows: from a "waiting for rank N" slice to a GPU idle
    # slice, or to the late rank's own wait for another
    idle = [e for e in ev if e.get("cat") == "gpu_idle"]
    inside = lambda e: [s["name"] for s in idle if (s["pid"], s["tid"]) == (e["pid"], e["tid"])
                        and s["ts"] <= e["ts"] < s["ts"] + s["dur"]]
    blame = [e for e in ev if e.get("cat") == "blame"]
    check(all(len(inside(e)) == 1 and (inside(e)[0].startswith("waiting for rank") or
                                       (e["ph"] == "f" and inside(e) == ["GPU idle"])) for e in blame),
          "blame flows: %d, each from a rank wait to a GPU idle slice or a rank wait" % len(blame))
    gpu_pids = {e["pid"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"
                and str(e["args"]["name"]).startswith("GPU ")}
    gpu_tracks = {(e["pid"], e["tid"]) for e in ev if e.get("cat") in gpu}
    check(all(p in gpu_pids for p, _ in gpu_tracks), "every GPU slice is in a process named GPU N")
    check(len(gpu_tracks) == tracks, "GPU tracks: %d in the trace, %d (device, process, stream) in the database"
          % (len(gpu_tracks), tracks))
    for e in ev:
        if e["ph"] != "M" and not (since <= at(e["ts"]) and (not until or at(e["ts"]) < until)):
            check(False, "event outside [%d, %d): %s" % (since, until, e))
            break
    check(all(e["dur"] >= 0 for e in ev if e["ph"] == "X"), "no negative durations")
    # every launch and its GPU work name their site in args (Perfetto shows args, not "sf")
    launched = [e for e in ev if e.get("sf") and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset",
                                                                  "cuda_runtime", "cuda_driver")]
    check(all(e["args"].get("launch_site") for e in launched),
          "launch_site in the args of every event with a launch stack (%d)" % len(launched))
    check(all(0 <= e["pid"] < 2 ** 32 and 0 <= e["tid"] < 2 ** 32 for e in ev),
          "pid and tid fit in 32 bits (Perfetto's JSON importer reads them as uint32)")
    check(all(e["args"]["sort_index"] < 2 ** 31 for e in ev if e["name"].endswith("_sort_index")),
          "sort indexes fit in 31 bits")
    frames = t["stackFrames"]
    check(all(str(e["sf"]) in frames for e in ev if "sf" in e), "every sf names a stack frame")
    check(all(f.get("parent", k) in frames for k, f in frames.items()), "every stack frame's parent exists")
    return ev


def main():
    mode, db, trace = sys.argv[1], sqlite3.connect(sys.argv[2]), sys.argv[3]
    if mode == "trace":
        since, until = (int(sys.argv[4]), int(sys.argv[5])) if len(sys.argv) > 5 else (0, 0)
        check_trace(db, trace, since, until)
    else:
        pid = int(sys.argv[4])
        ev = check_trace(db, trace, pid=pid)
        gpu_pids = {e["pid"] for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")}
        cpu_pids = {e["pid"] for e in ev if e["ph"] != "M"} - gpu_pids
        check(cpu_pids == {pid}, "--pid %d: CPU events of pids %s" % (pid, sorted(cpu_pids)))
    name = "%s %s" % (mode, trace.rsplit("/", 1)[-1])
    print(("FAIL " if failures else "ok   ") + name)
    sys.exit(1 if failures else 0)


main()
