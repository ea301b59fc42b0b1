#!/usr/bin/env python3
"""crafted-db.py - the crafted-database sweep (issue 38). Databases are made
from a real run's ingest by rules read off its own schema, not listed per
table: every column NULL, at the int64 limits, -1, text where a number goes
(a blob where text goes), one row at an id of 2^31; a table's numbers all
small (times far from the run's, still ordered); an empty table given such
rows; each column made a generated one, or declared with another type;
every `parent` column a cycle. Every xpcorr command that reads a database
(report by each view, export in each format and weight, info, diff, ls,
dump, merge) runs on them under limits, and must either refuse in one line
(exit 1, no "out of memory") or finish (exit 0), within 2 s of CPU and
100 MB of resident memory, with no crash and no sanitizer report.

Under a sanitizer (XP_SANITIZE, meson's b_sanitize) the limits are 3x: 6 s
of CPU and 300 MB. ASan+UBSan run the same code 3-5x slower (the heaviest
command here: 0.07 s plain, 0.35 s under them) and hold shadow memory and a
quarantine of freed blocks (16 MB here) on top of the program's (61 MB at
most here, 24 MB plain).

    crafted-db.py XPCORR RUN_DIR

RUN_DIR: a real recorded run (fixtures/h100-workload), ingested here. The
findings of issue 38 are fixed cases run every time, each with what it must
give; the other (database, command) pairs are drawn with a fixed seed:
XP_SWEEP_PAIRS=N (default 600, 200 under a sanitizer) or 'all' (every pair,
about 40 minutes on 2 cores), XP_SWEEP_SEED (default 38); XP_SWEEP_ONLY=REGEX
keeps the pairs whose "case: command" it matches (one case again: its name
as a failure gives it, with XP_SWEEP_PAIRS=all).
"""
import concurrent.futures
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

XPCORR, RUN = sys.argv[1:3]
SANITIZED = os.environ.get("XP_SANITIZE", "none") not in ("", "none")
CPU_LIMIT = 6.0 if SANITIZED else 2.0           # seconds of CPU, user + system
RSS_LIMIT = (300 if SANITIZED else 100) << 20   # bytes resident at the peak
WALL_GUARD = 180 if SANITIZED else 60           # a hang: killed, and a failure
INT64_MAX, INT64_MIN = (1 << 63) - 1, -(1 << 63)
HUGE_ID = 2147483000
failures = []


def fail(what):
    print("FAIL " + what, flush=True)
    failures.append(what)


# ---- the databases -------------------------------------------------------

def connect(path):
    return sqlite3.connect(path, isolation_level=None)


def set_table_sql(path, table, sql):
    """A table's CREATE text replaced in place (writable_schema): the rows
    stay as they are, read under the new definition."""
    d = connect(path)
    d.execute("PRAGMA writable_schema = ON")
    d.execute("UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?", (sql, table))
    v = d.execute("PRAGMA schema_version").fetchone()[0]
    d.execute("PRAGMA schema_version = %d" % (v + 1))
    d.close()


def relaxed(path, table, sql, fn):
    """fn(connection) run with the table's NOT NULL constraints lifted, then
    the table's own definition put back: a database with our exact schema
    and rows no ingest writes (SQLite checks NOT NULL on writes only)."""
    set_table_sql(path, table, re.sub(r"\s+NOT\s+NULL", "", sql, flags=re.I))
    d = connect(path)
    try:
        fn(d)
    finally:
        d.close()
        set_table_sql(path, table, sql)


class Table:
    def __init__(self, d, name, sql):
        self.name, self.sql = name, sql
        self.cols = d.execute("SELECT name, upper(type), pk FROM pragma_table_xinfo(?)",
                              (name,)).fetchall()
        self.rows = d.execute('SELECT count(*) FROM "%s"' % name).fetchone()[0]
        self.rowid = "WITHOUT ROWID" not in sql.upper()
        pks = [c for c in self.cols if c[2]]
        # the INTEGER PRIMARY KEY of a rowid table is the rowid itself
        self.alias = pks[0][0] if self.rowid and len(pks) == 1 and pks[0][1] == "INTEGER" else None
        self.key = self.alias or ("rowid" if self.rowid else pks[0][0])


def schema(db):
    d = connect(db)
    tables = [Table(d, n, s) for n, s in d.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        " ORDER BY name").fetchall()]
    d.close()
    return tables


def q(name):
    return '"%s"' % name


def update_all(t, col, expr):
    """col = expr on every row, or on one row where a unique key refuses."""
    def fn(d):
        try:
            d.execute("UPDATE %s SET %s = %s" % (q(t.name), q(col), expr))
        except sqlite3.IntegrityError:
            one_row(t, col, expr)(d)
    return fn


def one_row(t, col, expr):
    def fn(d):
        d.execute("UPDATE %s SET %s = %s WHERE %s = (SELECT max(%s) FROM %s)" %
                  (q(t.name), q(col), expr, q(t.key), q(t.key), q(t.name)))
    return fn


def insert_rows(t, values, count=1):
    """count rows of an empty table, each column at values(type) (keys
    numbered so that they stay unique)."""
    def fn(d):
        for i in range(count):
            names, vals = [], []
            for name, typ, pk in t.cols:
                if name == t.alias:
                    continue
                names.append(q(name))
                vals.append(str(i + 1) if pk else values(typ))
            d.execute("INSERT INTO %s(%s) VALUES (%s)" % (q(t.name), ", ".join(names), ", ".join(vals)))
    return fn


def is_int(typ):
    return "INT" in typ or typ == ""


def generated(t, col, typ):
    """col becomes a virtual generated column whose every read builds a
    100 MB string; the stored value is read as col_0 (a virtual column
    takes no place in the record, so the rows read as before)."""
    heavy = "printf('%.*c', 100000000, 'x')"
    expr = ("%s_0 + length(%s)" if is_int(typ) else "%s_0 || %s") % (col, heavy)
    head, cols = t.sql.split("(", 1)
    m = re.search(r"\b%s\b" % re.escape(col), cols)
    at, depth = m.end(), 0          # the end of the column's definition
    while depth or cols[at] not in ",)":
        depth += {"(": 1, ")": -1}.get(cols[at], 0)
        at += 1
    return "%s(%s_0%s, %s %s GENERATED ALWAYS AS (%s)%s" % (
        head, cols[:m.start()] + col, cols[m.end():at], col, typ, expr, cols[at:])


def retyped(t, col, typ):
    other = "TEXT" if is_int(typ) else "INTEGER"
    head, cols = t.sql.split("(", 1)
    return head + "(" + re.sub(r"\b(%s)\s+%s\b" % (re.escape(col), re.escape(typ)), r"\1 " + other,
                               cols, count=1, flags=re.I)


def cases_of(tables):
    """{name: ((how, table, what make() applies), the refusal a reader
    must give or None)}, from the schema alone."""
    cases = {}
    for t in tables:
        if not t.rows:
            def val(v):
                return lambda typ: v if is_int(typ) else ("'crafted'" if v != "NULL" else "NULL")
            for what, values, n in (("null", val("NULL"), 1), ("max", val(str(INT64_MAX)), 1),
                                    ("max-twice", val(str(INT64_MAX)), 2),
                                    ("min", val(str(INT64_MIN)), 1),
                                    ("min-twice", val(str(INT64_MIN)), 2)):
                cases["%s:insert-%s" % (t.name, what)] = (("relax", t, insert_rows(t, values, n)), None)
            continue
        # every number of every row small and in column order (start 1, end
        # 2, ...): times far from the rest of the run, but ordered
        small = ["%s = %d" % (q(n), k + 1) for k, (n, typ, pk) in enumerate(t.cols)
                 if is_int(typ) and not pk]
        if small:
            cases[t.name + ":small"] = (("plain", t, lambda d, t=t, small=small: d.execute(
                "UPDATE OR IGNORE %s SET %s" % (q(t.name), ", ".join(small)))), None)
        for name, typ, pk in t.cols:
            c = "%s.%s" % (t.name, name)
            if name == t.alias:
                cases[c + "=2^31"] = (("plain", t, one_row(t, name, str(HUGE_ID))), None)
                cases[c + "=max"] = (("plain", t, one_row(t, name, str(INT64_MAX))), None)
                continue
            for what, expr in (("null", "NULL"), ("max", str(INT64_MAX)), ("min", str(INT64_MIN)),
                               ("-1", "-1"),
                               ("text", "'x' || ifnull(%s, '')" % q(name) if is_int(typ) else
                                "X'ff00fe'")):
                cases["%s=%s" % (c, what)] = (("relax", t, update_all(t, name, expr)), None)
            if is_int(typ):
                cases[c + "=2^31@1"] = (("relax", t, one_row(t, name, str(HUGE_ID))), None)
            if name == "parent":
                cases[c + "=self"] = (("plain", t, update_all(t, name, q(t.key))), None)
                cases[c + "=pair"] = (("plain", t, update_all(
                    t, name, "CASE %s %% 2 WHEN 0 THEN %s + 1 ELSE %s - 1 END" %
                    (q(t.key), q(t.key), q(t.key)))), None)
            if not pk:
                cases[c + ":generated"] = (("sql", t, generated(t, name, typ)), "is generated")
                if typ and retyped(t, name, typ) != t.sql:
                    cases[c + ":retyped"] = (("sql", t, retyped(t, name, typ)), "is declared")
    return cases


def make(case, good, path):
    (how, t, arg), _ = case
    shutil.copy(good, path)
    if how == "sql":
        set_table_sql(path, t.name, arg)
    elif how == "relax":
        relaxed(path, t.name, t.sql, arg)
    else:
        d = connect(path)
        arg(d)
        d.close()


# ---- the commands --------------------------------------------------------

def choices(args, pattern):
    """The values a usage text lists after pattern (VIEW: a|b|c)."""
    p = subprocess.run([XPCORR, *args, "--help"], capture_output=True, text=True)
    m = re.search(pattern + r"\s*([a-z|]+)", p.stdout + p.stderr)
    return m.group(1).split("|") if m else []


def commands():
    """Argument lists with D (the database), G (the good one), DIR (the
    database's directory) and OUT (a fresh output path); the views,
    formats and weights as xpcorr's own usage lists them."""
    views = choices(["report"], r"VIEW:")
    formats = choices(["export"], r"--format")
    weights = choices(["export"], r"--weight")
    if len(views) < 10 or "chrome" not in formats or "gpu" not in weights:
        fail("cannot read the views, formats and weights from xpcorr's usage: %s %s %s" %
             (views, formats, weights))
    cmds = [["info", "D"], ["report", "--format", "json", "D"], ["ls", "DIR"], ["dump", "D"],
            ["diff", "G", "D"], ["diff", "--format", "folded", "D", "G"],
            ["merge", "-q", "-o", "OUT", "D"]]
    cmds += [["report", "--by", v, "D"] for v in views]
    cmds += [["export", "--format", f, "D"] for f in formats if f != "folded"]
    cmds += [["export", "--format", "folded", "--weight", w, "D"] for w in weights]
    return cmds


def limited(argv):
    """argv under ulimit: CPU time past the limit is a kill; without a
    sanitizer (ASan reserves terabytes of address space for its shadow) 4 GB
    of address space at most, so that a runaway stops there (a lower bound
    would hide the 2 GB of finding 4: the allocation that fails is skipped,
    and nothing measured shows it). (The peak RSS
    that wait4 gives is at least this Python's, ~25 MB, which the child's
    image had before its exec: a floor far below the limit.)"""
    lim = "ulimit -c 0 && ulimit -t %d" % (int(CPU_LIMIT) + 2)
    if not SANITIZED:
        lim += " && ulimit -v %d" % (4 << 20)
    return ["/bin/sh", "-c", lim + ' && exec "$0" "$@"', XPCORR, *argv]


def sanitizer_options(name, ours):
    """Ours after the environment's own (the later setting wins)."""
    return ":".join(o for o in (os.environ.get(name, ""), ours) if o)


ENV = dict(os.environ,
           UBSAN_OPTIONS=sanitizer_options("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1"),
           ASAN_OPTIONS=sanitizer_options(
               "ASAN_OPTIONS", "allocator_may_return_null=1:quarantine_size_mb=16:hard_rss_limit_mb=2048"))
ENV.pop("XPCORR_MAX_DB_WORK", None)


def run(argv, errfile):
    """(exit status or -signal, CPU seconds, peak RSS bytes, stderr lines)."""
    with open(errfile, "w+") as err:
        p = subprocess.Popen(limited(argv), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=err, env=ENV)
        deadline = time.monotonic() + WALL_GUARD
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                os.kill(p.pid, signal.SIGKILL)
            time.sleep(0.005)
        p.returncode = rc = os.waitstatus_to_exitcode(status)
        err.seek(0)
        lines = [l for l in err.read().splitlines() if l]
    return rc, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024, lines


def judge(label, argv, rc, cpu, rss, err, expect):
    """None when the command refused cleanly or finished within the limits,
    else why not. expect: the refusal a database reader must give (dump
    reads no database: it refuses the file as a record stream)."""
    if argv[0] == "dump":
        expect = None
    shown = "%s: %s: exit %s, %.2f s CPU, %.0f MB" % (label, " ".join(argv), rc, cpu, rss / 2**20)
    errors = [l for l in err if not l.startswith("xpcorr: warning: ")]
    if cpu > CPU_LIMIT or rss > RSS_LIMIT:
        return shown + ": past the limits (%s)" % err[-1:]
    if any("out of memory" in l.lower() or "cannot allocate memory" in l.lower() for l in err):
        return shown + ": ran out of memory: %s" % err[-1:]
    if rc == 0 and all(l.startswith("xpcorr") for l in err):
        if expect:
            return shown + ": not refused (wanted '%s')" % expect
        return None
    if rc == 1 and len(errors) == 1 and errors[0].startswith("xpcorr"):
        if expect and expect not in errors[0]:
            return shown + ": refused, but not for '%s': %s" % (expect, errors[0])
        return None
    return shown + ": " + " | ".join(err[:4])[:600]


# ---- the findings of issue 38, run every time -----------------------------

def python_leaves(d):
    """The base: the frames at the leaves of the exactly attributed stacks
    made Python lines (a PyTorch run's launch stacks), so that the readers
    that walk stacks for Python frames walk them."""
    d.execute("UPDATE xp_frames SET kind = 6, line = 42 WHERE id IN (SELECT frame FROM xp_stacks"
              " WHERE id IN (SELECT stack_id FROM xp_attribution WHERE how = 'exact'))")
    # and a sampled stack's caller the interpreter's evaluator (info's count
    # of Python threads sampled without Python frames walks them)
    d.execute("UPDATE StringIds SET value = '_PyEval_EvalFrameDefault' WHERE id = (SELECT f.symbol"
              " FROM xp_samples x JOIN xp_stacks s ON s.id = x.stack_id JOIN xp_stacks p"
              " ON p.id = s.parent JOIN xp_frames f ON f.id = p.frame WHERE f.kind != 6 LIMIT 1)")


def fixed_cases(tables):
    by_name = {t.name: t for t in tables}
    strings, stacks = by_name["StringIds"], by_name["xp_stacks"]
    pyproc = by_name["xp_python_processes"]

    def cycle_far(d):
        # finding 4: a launch's stack its own parent, and one stack at id 4e8
        d.execute("UPDATE xp_stacks SET parent = id WHERE id IN"
                  " (SELECT stack_id FROM xp_attribution WHERE how = 'exact')")
        d.execute("UPDATE xp_stacks SET id = 400000000 WHERE id = (SELECT max(id) FROM xp_stacks)")

    def far_sample(d):
        d.execute("UPDATE xp_samples SET id = %d WHERE id = (SELECT max(id) FROM xp_samples)" % HUGE_ID)

    def far_frame(d):
        d.execute("UPDATE xp_frames SET id = 400000000 WHERE id = (SELECT max(id) FROM xp_frames)")
        d.execute("UPDATE xp_stacks SET frame = 400000000 WHERE frame = (SELECT max(frame) FROM xp_stacks)")

    def warps(d):
        # finding 10: chrome_meta.c's 32 * warps
        d.execute("UPDATE TARGET_INFO_GPU SET maxWarpsPerSm = %d" % INT64_MAX)

    def early_step(d):
        # finding 10: a step's window with no GPU work in it (timeline.c's
        # qsort of NULL, 0)
        d.execute("UPDATE NVTX_EVENTS SET start = 1, end = 2, text = 'step 1' WHERE rowid ="
                  " (SELECT min(rowid) FROM NVTX_EVENTS WHERE eventType = 60)")

    return {
        # finding 3: the generated StringIds.value
        "finding 3: StringIds.value generated": (
            ("sql", strings, generated(strings, "value", "TEXT")), "StringIds.value is generated",
            [["report", "D"], ["info", "D"], ["export", "--format", "folded", "D"]]),
        "finding 4: a stack its own parent, one at id 4e8": (
            ("plain", stacks, cycle_far), None,
            [["report", "D"], ["export", "--format", "folded", "--weight", "gpu", "D"],
             ["export", "--format", "chrome", "D"], ["report", "--by", "idle", "D"]]),
        "finding 4: a sample at id 2^31": (
            ("plain", stacks, far_sample), None, [["export", "--format", "chrome", "D"]]),
        "finding 4: a frame at id 4e8": (
            ("plain", stacks, far_frame), None,
            [["report", "D"], ["export", "--format", "folded", "D"], ["info", "D"]]),
        "finding 10: maxWarpsPerSm 2^63-1": (
            ("plain", stacks, warps), None, [["export", "--format", "chrome", "D"]]),
        "finding 10: Python counts at INT64_MIN": (
            ("relax", pyproc, insert_rows(pyproc, lambda typ: str(INT64_MIN) if is_int(typ) else "NULL")),
            None, [["info", "D"]]),
        "finding 10: Python counts at INT64_MIN, twice": (
            ("relax", pyproc, insert_rows(pyproc, lambda typ: str(INT64_MIN) if is_int(typ) else "NULL",
                                          2)), None, [["info", "D"]]),
        "finding 10: a step before the GPU work": (
            ("plain", stacks, early_step), None, [["report", "--by", "idle", "D"]]),
    }


# ---- the sweep -----------------------------------------------------------

def base_db(tmp):
    run = os.path.join(tmp, "run")
    os.mkdir(run)
    for f in os.listdir(RUN):
        if f.endswith(".xpr") or f in ("meta.json", "kallsyms") or f.startswith("perf-"):
            shutil.copy(os.path.join(RUN, f), run)
    subprocess.run([XPCORR, "ingest", "--quiet", run], check=True)
    good = os.path.join(tmp, "good.db")
    shutil.copy(os.path.join(run, "xpcorr.db"), good)
    d = connect(good)
    python_leaves(d)
    d.close()
    return good


def pairs_to_run(cases, cmds):
    only = re.compile(os.environ.get("XP_SWEEP_ONLY", ""))
    every = [(c, i) for c in sorted(cases) for i in range(len(cmds))
             if only.search(c + ": " + " ".join(cmds[i]))]
    want = os.environ.get("XP_SWEEP_PAIRS", "200" if SANITIZED else "600")
    if want == "all":
        return every
    rng = random.Random(int(os.environ.get("XP_SWEEP_SEED", "38")))
    return sorted(rng.sample(every, min(int(want), len(every))))


def main():
    tmp = tempfile.mkdtemp(prefix="crafted-db-")
    start = time.monotonic()
    try:
        good = base_db(tmp)
        tables = schema(good)
        cmds = commands()
        cases = cases_of(tables)
        work = []      # (case, argv template, expected refusal)
        for label, (how, expect, argvs) in fixed_cases(tables).items():
            cases[label] = (how, expect)
            work += [(label, argv, expect) for argv in argvs]
        picked = pairs_to_run({k: v for k, v in cases.items() if not k.startswith("finding")}, cmds)
        work += [(c, cmds[i], cases[c][1]) for c, i in picked]
        groups = {}
        for label, argv, expect in work:
            groups.setdefault(label, []).append((argv, expect))

        def one(n_label):
            """A case's database made, then its commands run on it."""
            n, label = n_label
            d = os.path.join(tmp, "c%d" % n)
            os.mkdir(d)
            db = os.path.join(d, "xpcorr.db")
            try:
                make(cases[label], good, db)
            except sqlite3.Error as e:
                return label, None, str(e)
            out = []
            for k, (argv, expect) in enumerate(groups[label]):
                subst = {"D": db, "G": good, "DIR": d, "OUT": os.path.join(d, "out%d" % k)}
                argv = [subst.get(a, a) for a in argv]
                out.append((argv, expect) + run(argv, os.path.join(d, "err%d" % k)))
            shutil.rmtree(d, ignore_errors=True)
            return label, out, None

        worst, ran, made, unmade = (0, ""), 0, 0, 0
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            for label, out, why in pool.map(one, enumerate(sorted(groups))):
                if out is None:     # a key a constant cannot be given to every row
                    unmade += 1
                    continue
                made += 1
                for argv, expect, rc, cpu, rss, err in out:
                    ran += 1
                    why = judge(label, argv, rc, cpu, rss, err, expect)
                    if why:
                        fail(why)
                    elif label.startswith("finding"):
                        print("ok   %s: %s: exit %d, %.2f s CPU, %.0f MB" %
                              (label, " ".join(argv[:-1]), rc, cpu, rss / 2**20))
                    worst = max(worst, (cpu, "%s: %s" % (label, " ".join(argv[:-1]))))
        print("%d databases (of %d from %d tables' schema; %d not made: a key's constraint),"
              " %d commands run in %.0f s; the most CPU: %.2f s (%s)" %
              (made, len(cases), len(tables), unmade, ran, time.monotonic() - start, worst[0],
               worst[1]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failures" % len(failures))
    return 1 if failures else 0


sys.exit(main())
