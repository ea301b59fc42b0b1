#!/usr/bin/env python3
"""chrome-browser.py - the Chrome trace of a real H100 fixture, opened in
headless Chromium: a localhost page (tests/browser/check-trace.html) parses
it with the browser's JSON parser and counts CPU and GPU tracks, slices and
instants per category, bound flow pairs and the first kernel's ns time;
those must equal what SQL counts in the database the trace came from (the
op slices, cpu_op and python_function, by the rules of man xpcorr written
again here in Python: op_slices).

  chrome-browser.py XPCORR FIXTURE_DIR

Without Chromium it skips (exit 77, saying why), unless XP_REQUIRE_BROWSER=1,
where it fails. Chromium: Debian package chromium (scripts/quickstart).
"""
import http.server
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT_S = 25


def find_browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def framework_op(sym):
    """xp_framework_op: "at::_ops::addmm::call(...)" -> "aten::addmm"."""
    if not sym or not sym.startswith("at::_ops::"):
        return None
    name = sym[10:]
    end = name.find("::")
    if end < 0 or not (name[end:].startswith("::call(") or name[end:].startswith("::redispatch(")):
        return None
    under = name.rfind("_", 0, end)
    if under > 0 and "A" <= name[under + 1] <= "Z":
        return "aten::%s.%s" % (name[:under], name[under + 1:end])
    return "aten::" + name[:end]


def pypath_base(path):
    """The file as a frame names it (db/pypath.c xp_pypath_base)."""
    parts = path.rsplit("/", 2)
    if len(parts) > 1 and parts[-1] in ("__init__.py", "__main__.py"):
        return "/".join(parts[-2:])
    return parts[-1]


def op_slices(db):
    """The op slices (chrome_ops.c, man xpcorr) counted by category, by its
    rules written again here: (key, caller node, line) levels of each launch
    stack, root first, up to a backward note; a level goes on where every
    level above does, the key and caller are the same, and a Python line
    did not go back (an op: its launch stack is new to the slice)."""
    nodes = dict((i, (p, f)) for i, p, f in db.execute("SELECT id, parent, frame FROM xp_stacks"))
    frames = dict((i, (s, m, k, ln)) for i, s, m, k, ln in db.execute(
        "SELECT f.id, s.value, m.value, f.kind, f.line FROM xp_frames f"
        " LEFT JOIN StringIds s ON s.id = f.symbol LEFT JOIN StringIds m ON m.id = f.module"))
    paths, counts = {}, {}

    def path(stack):
        if stack in paths:
            return paths[stack]
        levels, at, steps = [], stack, 0     # leaf first: [key, node, line, cat]
        while at and at > 0 and at in nodes and steps < 4096:
            parent, frame = nodes[at]
            sym, module, kind, line = frames.get(frame, (None, None, 0, None))
            steps += 1
            if kind == 8:
                break
            op = framework_op(sym)
            lv = None
            if op:
                lv = [("O", op), at, -1, "cpu_op"]
            elif kind == 6 and sym and module and line is not None and line >= 0:
                # a Python line as data (xp_frames.line; db/pyframe.h)
                lv = [("P", module, pypath_base(module), sym), at, line, "python_function"]
            at = parent
            if not lv:
                continue
            if levels and lv[2] < 0 and levels[-1][2] < 0 and levels[-1][0] == lv[0]:
                levels[-1][1] = lv[1]
                continue
            if len(levels) == 64:
                break
            levels.append(lv)
        levels.reverse()
        out = [(lv[0], levels[i - 1][1] if i else 0, lv[2], lv[3]) for i, lv in enumerate(levels)]
        paths[stack] = out
        return out

    open_, thread = [], None
    for gtid, stack in db.execute(
            "SELECT r.globalTid, (SELECT l.stack_id FROM xp_launches l WHERE l.pid = (r.globalTid >> 24)"
            " AND l.correlation_id = r.correlationId AND +l.tid = (r.globalTid & 16777215) LIMIT 1)"
            " FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.globalTid IS NOT NULL"
            " ORDER BY r.globalTid, r.start, r.rowid"):
        if not stack or stack <= 0:
            continue
        if gtid != thread:
            open_, thread = [], gtid
        lv = path(stack)
        d = 0
        while d < len(lv) and d < len(open_):
            o, (key, caller, line, cat) = open_[d], lv[d]
            if o["key"] != key or o["caller"] != caller or \
                    (stack in o["leaves"] if line < 0 else line < o["line"]):
                break
            d += 1
        del open_[d:]
        for key, caller, line, cat in lv[d:]:
            open_.append({"key": key, "caller": caller, "line": line, "leaves": set()})
            counts[cat] = counts.get(cat, 0) + 1
        for o, (key, caller, line, cat) in zip(open_, lv):
            o["line"] = line
            if line < 0:
                o["leaves"].add(stack)
    return counts


def expected(db_path):
    """What the trace must hold, counted by SQL from the database."""
    db = sqlite3.connect(db_path)

    def one(sql):
        return db.execute(sql).fetchone()[0]
    timed = "(xp_flags & 1) = 0"
    gpu_rows = " UNION ALL ".join("SELECT deviceId, globalPid, contextId, streamId, rowid AS r, '%s' AS t, start"
                                  " FROM CUPTI_ACTIVITY_KIND_%s WHERE %s" % (t, t, timed)
                                  for t in ("KERNEL", "MEMCPY", "MEMSET"))
    slices = {
        "cuda_runtime": one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass = 0"),
        "cuda_driver": one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass = 1"),
        "kernel": one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE " + timed),
        "gpu_memcpy": one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE " + timed),
        "gpu_memset": one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE " + timed),
        "user_annotation": one("SELECT count(*) FROM NVTX_EVENTS WHERE eventType != 34 AND end IS NOT NULL"),
        # one slice per CUDA graph replay, around its kernels
        "cuda_graph": one("SELECT count(*) FROM (SELECT DISTINCT globalPid, graphId, correlationId"
                          " FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphId > 0 AND " + timed + ")"),
    }
    instants = {
        "cpu_sample": one("SELECT count(*) FROM xp_samples"),
        "user_annotation": one("SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 34 OR end IS NULL"),
    }
    # GPU idle (chrome_idle.c): per process and device, the stretches of 10 us
    # or more when none of its work ran, each a slice on one more track
    idle, idle_tracks, last = 0, set(), {}
    for gp, dev, start, end in db.execute(
            " UNION ALL ".join("SELECT globalPid, deviceId, start, end FROM CUPTI_ACTIVITY_KIND_%s"
                               " WHERE %s AND end >= start" % (t, timed) for t in ("KERNEL", "MEMCPY", "MEMSET"))
            + " ORDER BY 1, 2, 3, 4"):
        if (gp, dev) in last and start - last[gp, dev] >= 10000:
            idle += 1
            idle_tracks.add((gp, dev))
        last[gp, dev] = max(end, last.get((gp, dev), end))
    slices["gpu_idle"] = idle
    slices.update(op_slices(db))
    return {
        "cpu_tracks": one("SELECT count(*) FROM (SELECT globalTid >> 24, globalTid & 16777215 FROM"
                          " CUPTI_ACTIVITY_KIND_RUNTIME UNION SELECT globalTid >> 24, globalTid & 16777215"
                          " FROM NVTX_EVENTS UNION SELECT pid, tid FROM xp_samples)"),
        "gpu_tracks": one("SELECT count(*) FROM (SELECT DISTINCT deviceId, globalPid, contextId, streamId"
                          " FROM (%s))" % gpu_rows) + len(idle_tracks),
        "slices": {k: v for k, v in slices.items() if v},
        "instants": {k: v for k, v in instants.items() if v},
        "flows": one("SELECT count(*) FROM (%s) g JOIN xp_attribution a ON a.gpu_table = g.t AND"
                     " a.gpu_rowid = g.r WHERE a.api_rowid IS NOT NULL" % gpu_rows),
        "unbound": 0,
        # the trace counts from the run's start (baseTimeNanoseconds), as Kineto
        "first_kernel_ns": str(one("SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE " + timed)
                               - one("SELECT ifnull((SELECT CAST(value AS INTEGER) FROM META_DATA_EXPORT"
                                     " WHERE name = 'meta.start_monotonic_ns'), 0)")),
    }


def serve(root, results):
    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=root, **kw)

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(204)
            self.end_headers()
            results.append(json.loads(body))
            done.set()

        def log_message(self, *a):
            pass
    done = threading.Event()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, done


def main():
    xpcorr, fixture = sys.argv[1], sys.argv[2]
    browser = find_browser()
    if not browser:
        if os.environ.get("XP_REQUIRE_BROWSER") == "1":
            print("FAIL chromium not found and XP_REQUIRE_BROWSER=1 (apt-get install chromium)")
            return 1
        print("SKIP chromium not found (apt-get install chromium; XP_REQUIRE_BROWSER=1 makes this fail)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        run, www = os.path.join(tmp, "run"), os.path.join(tmp, "www")
        os.mkdir(run)
        os.mkdir(www)
        for f in os.listdir(fixture):
            if f.endswith(".xpr") or f == "meta.json" or f.startswith("perf-"):
                shutil.copy(os.path.join(fixture, f), run)
        subprocess.run([xpcorr, "ingest", "--quiet", run], check=True)
        subprocess.run([xpcorr, "export", "--format", "chrome", "-o", os.path.join(www, "trace.json"), run],
                       check=True)
        want = expected(os.path.join(run, "xpcorr.db"))
        with open(os.path.join(www, "expected.json"), "w") as f:
            json.dump(want, f)
        shutil.copy(os.path.join(HERE, "browser", "check-trace.html"), www)
        results = []
        httpd, done = serve(www, results)
        url = "http://127.0.0.1:%d/check-trace.html" % httpd.server_address[1]
        profile = os.path.join(tmp, "profile")
        proc = subprocess.Popen([browser, "--headless", "--no-sandbox", "--disable-gpu",
                                 "--disable-background-networking", "--disable-component-update",
                                 "--disable-sync", "--no-first-run", "--user-data-dir=" + profile, url],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        done.wait(TIMEOUT_S)
        proc.terminate()
        try:
            _, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        httpd.shutdown()
        if not results:
            print("FAIL the page posted no result in %d s; chromium said:\n%s"
                  % (TIMEOUT_S, err.decode(errors="replace")[-2000:]))
            return 1
        r = results[0]
        print("browser: %s" % r.get("userAgent", "?"))
        print("in the browser: %s" % json.dumps(r.get("got"), sort_keys=True))
        print("from the database: %s" % json.dumps(want, sort_keys=True))
        for b in r.get("bad", []):
            print("FAIL " + b)
        if r.get("ok"):
            print("ok   tracks, slices per category, flows and ns times agree in the browser")
        return 0 if r.get("ok") else 1


sys.exit(main())
