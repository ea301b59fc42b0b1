#!/usr/bin/env python3
"""job-hostile.py - `xpcorr job` reads each RUN/xpsum.db as hostile input
(issue 40; DESIGN.md's security model): summaries that are not regular
files (links, a FIFO, even one swapped in while the job opens it, a
directory, a device), damaged ones (empty, truncated, overwritten, not
SQLite), crafted ones (tables missing or turned into views, columns
missing or generated, another version, every number NULL, text, at the
int64 limits or a NaN, strings of megabytes or with terminal escapes,
commas, quotes and newlines, very many rows, a rank in two runs) and bad
run directories (a link loop, unreadable, given twice). Each either
refuses in one line naming the file and what is wrong (exit 1) or, where
the summary is ours in form, gives well-formed text, csv and json; never a
crash, a sanitizer report, a hang (every command has a timeout) or output
after a query failed.

    job-hostile.py XPCORR GEN_RUN FIXTURE_EXE FIXTURE_LIB
"""
import concurrent.futures
import csv
import io
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time

import swaprace

XPCORR, GEN_RUN, EXE, LIB = sys.argv[1:5]
SANITIZED = os.environ.get("XP_SANITIZE", "none") not in ("", "none")
TIMEOUT = 60 if SANITIZED else 20
VIEWS = ("rank", "idle", "kernel", "source", "wait", "clock")
FORMATS = ("text", "csv", "json")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def job(*args, env=None, timeout=TIMEOUT, user=None):
    """(exit status or 'timeout', stdout bytes, stderr lines)."""
    cmd = [XPCORR, "job", "-q", *args]
    if user:
        cmd = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user, "--clear-groups", *cmd]
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=timeout,
                           env=dict(os.environ, **(env or {})))
        err = p.stderr.decode("utf-8", "replace")
        return p.returncode, p.stdout, [l for l in err.splitlines() if l]
    except subprocess.TimeoutExpired:
        return "timeout", b"", []


def sanitizer(err):
    return any("Sanitizer" in l or "runtime error" in l for l in err)


def refused(rc, err, what, *expect, status=1):
    """One line, 'xpcorr job: ', naming what it must (the file, the fault)."""
    ok = (rc == status and len(err) == 1 and err[0].startswith("xpcorr job: ") and
          all(e in err[0] for e in expect) and not sanitizer(err))
    check(ok, "%s: refused in one line (exit %s): %s" % (what, rc, err[:3]))


# A terminal acts on these: C0 but LF, DEL, C1, bytes that are no UTF-8.
def raw_controls(data):
    text = data.decode("utf-8", errors="surrogateescape")
    return sorted({"U+%04X" % ord(c) for c in text if (ord(c) < 0x20 and c != "\n") or
                   0x7f <= ord(c) <= 0x9f or 0xdc80 <= ord(c) <= 0xdcff})


def well_formed(view, fmt, out):
    """What the format promises, as the other views keep it: text no
    control character (xp_esc), json one document (escaped by its rules),
    csv rows of the header's width, quoted; json and csv valid UTF-8."""
    try:
        text = out.decode("utf-8")
    except UnicodeDecodeError as e:
        return "not UTF-8: %s" % e
    if fmt == "text" and raw_controls(out):
        return "raw controls %s" % raw_controls(out)
    if fmt == "json":
        try:
            json.loads(text)
        except ValueError as e:
            return "json: %s" % e
    elif fmt == "csv":
        rows = list(csv.reader(io.StringIO(text, newline="")))
        widths = {len(r) for r in rows if r}
        if len(widths) > 1:
            return "csv rows of widths %s" % sorted(widths)
    elif view != "clock" and not text.startswith("**") and text:
        return "text does not start with its title"
    return None


def finished_or_refused(runs, what, views=VIEWS, formats=None, env=None, must_finish=False):
    """Each view either refuses in one line naming a summary, or finishes
    with well-formed output and nothing on stderr."""
    asked = [(view, fmt) for i, view in enumerate(views)
             for fmt in formats or (FORMATS[(i + len(what)) % 3],)]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        done = list(pool.map(lambda a: job("--by", a[0], "--format", a[1], "--top", "0", *runs,
                                           env=env), asked))
    for (view, fmt), (rc, out, err) in zip(asked, done):
        name = "%s: --by %s --format %s" % (what, view, fmt)
        if rc == 0:
            bad = well_formed(view, fmt, out)
            check(not err and not bad, "%s: finished, well-formed (%s %s)" % (name, bad, err[:2]))
        elif must_finish:
            check(False, "%s: exit %s, expected to finish: %s" % (name, rc, err[:3]))
        else:
            check(rc == 1 and len(err) == 1 and "xpsum.db" in err[0] and not sanitizer(err)
                  and "out of memory" not in err[0],
                  "%s: refused in one line naming the summary (exit %s): %s" % (name, rc, err[:3]))


# ---- the job ---------------------------------------------------------------

def make_job(tmp):
    """Two ranks of tests/gen-run job, ingested, then shipped as their
    summaries alone (the views never need the databases)."""
    runs = []
    for r in range(2):
        d = os.path.join(tmp, "rank%d" % r)
        subprocess.run([GEN_RUN, "job", EXE, LIB, d, str(r), "2", "node-%d" % r,
                        str(r * 1000000), "0", "12"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([XPCORR, "ingest", "-q", d], check=True)
        s = os.path.join(tmp, "sum%d" % r)
        os.mkdir(s)
        shutil.copy(os.path.join(d, "xpsum.db"), s)
        runs.append(s)
    return runs


def variant(tmp, good, name):
    """A copy of the job whose second run's summary is to be made hostile:
    (the runs, that summary's path)."""
    d = os.path.join(tmp, name)
    os.mkdir(d)
    runs = [good[0], os.path.join(d, "run")]
    shutil.copytree(good[1], runs[1])
    return runs, os.path.join(runs[1], "xpsum.db")


# ---- files that are not a summary -----------------------------------------

def not_regular(tmp, good):
    def link_to_file(p):
        os.unlink(p)
        os.symlink(os.path.join(good[0], "xpsum.db"), p)

    def link_to(target):
        def fn(p):
            os.unlink(p)
            os.symlink(target, p)
        return fn

    def fifo(p):
        os.unlink(p)
        os.mkfifo(p)

    def directory(p):
        os.unlink(p)
        os.mkdir(p)

    def device(p):
        os.unlink(p)
        os.mknod(p, 0o600 | stat.S_IFCHR, os.makedev(1, 5))   # /dev/zero's

    def contents(data):
        def fn(p):
            open(p, "wb").write(data if isinstance(data, bytes) else data(open(p, "rb").read()))
        return fn

    def overwritten(b):
        # every page after the first: its b-tree pages garbage
        return b[:4096] + bytes((i * 131 + 7) % 251 for i in range(len(b) - 4096))

    cases = [
        ("link to a summary", link_to_file, "is a symbolic link"),
        ("link to /dev/zero", link_to("/dev/zero"), "is a symbolic link"),
        ("dangling link", link_to("/nonexistent/xpsum.db"), "is a symbolic link"),
        ("FIFO", fifo, "is a FIFO"),
        ("directory", directory, "is a directory"),
        ("empty file", contents(b""), "is empty"),
        ("not SQLite", contents(b"rank,host\n0,node-0\n" * 300), "file is not a database"),
        ("truncated header", contents(lambda b: b[:60]), "xpsum.db"),
        ("truncated", contents(lambda b: b[:4096 + 1000]), "xpsum.db"),
        ("overwritten pages", contents(overwritten), "xpsum.db"),
    ]
    if os.geteuid() == 0:
        cases.append(("device", device, "is a device"))
    else:
        print("skip device: mknod needs root")
    for i, (name, make, expect) in enumerate(cases):
        runs, p = variant(tmp, good, "kind%d" % i)
        make(p)
        rc, _, err = job(*runs)
        refused(rc, err, name, runs[1] + "/xpsum.db", expect)
        # the clock pass and the views open it too
        rc, _, err = job("--by", "wait", "--format", "json", *runs[::-1])
        refused(rc, err, name + " (--by wait)", runs[1] + "/xpsum.db")


def fifo_race(tmp, good):
    """A FIFO swapped in for the summary, back and forth while the job
    opens it (swaprace.py: a process of its own, as fast as it can): never
    a hang (a reader that checked the name, then opened it, blocks in
    open())."""
    runs, p = variant(tmp, good, "race")
    fifo = p + ".fifo"
    os.mkfifo(fifo)
    with swaprace.swapping(p, fifo):
        outcomes = swaprace.repeat(lambda t: job(*runs, timeout=t), 6 if SANITIZED else 3, 5)
    hung = outcomes[-1][0] == "timeout"
    for rc, _, err in outcomes:
        if rc not in (0, 1, "timeout") or (rc == 1 and len(err) != 1):
            check(False, "FIFO race: exit %s: %s" % (rc, err[:2]))
            break
    check(not hung, "FIFO swapped in while the job opens the summary: no hang (exits %s)"
          % sorted({str(o[0]) for o in outcomes}))


# ---- crafted summaries -----------------------------------------------------

def sql_on(p, *stmts):
    d = sqlite3.connect(p, isolation_level=None)
    d.execute("PRAGMA legacy_alter_table = ON")
    for s in stmts:
        d.execute(s)
    d.close()


def set_table_sql(p, table, sql):
    d = sqlite3.connect(p, isolation_level=None)
    d.execute("PRAGMA writable_schema = ON")
    d.execute("UPDATE sqlite_master SET sql = ? WHERE name = ?", (sql, table))
    v = d.execute("PRAGMA schema_version").fetchone()[0]
    d.execute("PRAGMA schema_version = %d" % (v + 1))
    d.close()


def schema_faults(tmp, good):
    """Not our summary's form: refused before any view reads it."""
    cases = [
        ("no xs_rank", ["DROP TABLE xs_rank"], "no table xs_rank"),
        ("xs_rank a view", ["ALTER TABLE xs_rank RENAME TO r2",
                            "CREATE VIEW xs_rank AS SELECT * FROM r2"], "xs_rank is a view"),
        ("recursive view", ["DROP TABLE xs_coll",
                            "CREATE VIEW xs_coll AS WITH RECURSIVE r(pid, name, nth, launch, start,"
                            " end) AS (SELECT 1, 1, 1, 1, 1, 1 UNION ALL SELECT pid, name, nth + 1,"
                            " launch, start, end FROM r) SELECT * FROM r"], "xs_coll is a view"),
        ("a trigger named xs_name", ["DROP TABLE xs_name", "CREATE TABLE t(x)",
                                     "CREATE TRIGGER xs_name AFTER INSERT ON t BEGIN SELECT 1; END"],
         "xs_name is a trigger, not a table"),
        ("no column", ["CREATE TABLE c2(pid, name, nth, launch, end)", "DROP TABLE xs_coll",
                       "ALTER TABLE c2 RENAME TO xs_coll"], "xs_coll has no column start"),
        ("no version", ["DELETE FROM xs_meta WHERE key = 'version'"], "no version"),
        ("version 99", ["UPDATE xs_meta SET value = 99 WHERE key = 'version'"], "version 99"),
        ("version text", ["UPDATE xs_meta SET value = 'two' WHERE key = 'version'"], "version"),
        ("no xs_meta", ["DROP TABLE xs_meta"], "no table xs_meta"),
    ]
    for i, (name, stmts, expect) in enumerate(cases):
        runs, p = variant(tmp, good, "schema%d" % i)
        sql_on(p, *stmts)
        rc, _, err = job("--by", VIEWS[i % len(VIEWS)], *runs)
        refused(rc, err, name, runs[1] + "/xpsum.db", expect)
    runs, p = variant(tmp, good, "generated")
    set_table_sql(p, "xs_name", "CREATE TABLE xs_name(id INTEGER PRIMARY KEY, v0 TEXT, value TEXT"
                  " GENERATED ALWAYS AS (v0 || printf('%.*c', 10000000, 'x')))")
    rc, _, err = job("--by", "kernel", *runs)
    refused(rc, err, "generated column", runs[1] + "/xpsum.db", "xs_name.value is generated")


NUMERIC = {
    "xs_rank": ("pid", "rank", "world", "gpu_ns", "kernels", "coll_ns", "sync_ns"),
    "xs_kernel": ("pid", "name", "coll", "ns", "n"),
    "xs_coll": ("pid", "name", "nth", "launch", "start", "end"),
    "xs_device": ("rank", "device", "pid", "steps", "window_ns", "compute_ns", "comm_ns",
                  "mem_ns", "idle_ns"),
    "xs_idle": ("rank", "device", "ns", "gaps"),
    "xs_span": ("pid", "name", "nth", "kind", "ns", "from_name", "from_nth"),
    "xs_piece": ("pid", "a", "b", "kind", "ns"),
    "xs_clock": ("has_pair", "mono_ns", "real_ns"),
    "xs_marker": ("name", "nth", "ts"),
    "xs_host": ("pid", "name", "ns", "n"),
    "xs_hpiece": ("pid", "a", "b", "kind", "ns"),
}
# the host-side tables hold rows (their summaries' job has no gloo): the
# kernels' and pieces' own, so that the values below reach them
HOST_ROWS = ("INSERT OR IGNORE INTO xs_host SELECT pid, site, name, ns, n FROM xs_kernel",
             "INSERT INTO xs_hpiece SELECT * FROM xs_piece")
I64MAX, I64MIN = (1 << 63) - 1, -(1 << 63)


def series(n):
    """1..n as a table of one column, value."""
    return ("(WITH RECURSIVE g(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM g"
            " WHERE value < %d) SELECT value FROM g)" % n)


def values(tmp, good):
    """Our form, values no ingest writes: every view refuses in one line
    or finishes with well-formed output, and never with UB (UBSan)."""
    for k, (label, expr) in enumerate([
            ("NULL", "NULL"), ("text", "'12abc'"), ("-1", "-1"),
            ("int64 max", str(I64MAX)), ("int64 min", str(I64MIN)), ("NaN", "(0.0/0.0)"),
            ("inf", "1e999"), ("-inf", "-1e999"), ("huge real", "1e300"),
            ("a blob", "x'00ff'"), ("max, odd rows", "CASE WHEN rowid %% 2 THEN %d ELSE %d END"
                                   % (I64MAX, I64MIN))]):
        runs, p = variant(tmp, good, "value%d" % k)
        both = [runs[0], runs[1]]
        q = os.path.join(tmp, "value%d" % k, "run0")
        shutil.copytree(good[0], q)
        both[0] = q
        for f in (p, os.path.join(q, "xpsum.db")):
            sql_on(f, *HOST_ROWS, *["UPDATE %s SET %s" % (t, ", ".join("%s = %s" % (c, expr)
                                                                        for c in cols))
                                    for t, cols in NUMERIC.items()])
        finished_or_refused(both, "every number %s" % label)
    # one table's numbers at a time at the int64 limits (the others sane),
    # half the views each
    for k, (t, cols) in enumerate(NUMERIC.items()):
        runs, p = variant(tmp, good, "limit-" + t)
        sql_on(p, *HOST_ROWS, "UPDATE %s SET %s" % (t, ", ".join(
            "%s = CASE WHEN rowid %% 2 THEN %d ELSE %d END" % (c, I64MAX, I64MIN) for c in cols)))
        finished_or_refused(runs, "%s at the int64 limits" % t, views=VIEWS[k % 2::2])


EVIL = "\x1b]0;pwned\x07\x1b[2J\r\n,\"quoted\",\u202e\x9b"


def strings(tmp, good):
    """Names with escapes, separators, quotes; megabytes long."""
    runs, p = variant(tmp, good, "escapes")
    sql_on(p, "UPDATE xs_rank SET host = '%s' || host" % EVIL.replace("'", "''"),
           "UPDATE xs_name SET value = '%s' || value" % EVIL.replace("'", "''"),
           "UPDATE xs_kernel SET site = '%s' || site" % EVIL.replace("'", "''"),
           "UPDATE xs_idle SET cause = '%s' || cause, site = '%s' || site" %
           (EVIL.replace("'", "''"), EVIL.replace("'", "''")),
           "UPDATE xs_span SET site = '%s' || site" % EVIL.replace("'", "''"),
           "UPDATE xs_piece SET site = '%s' || site" % EVIL.replace("'", "''"),
           "UPDATE xs_name SET value = value || x'ff80'")
    finished_or_refused(runs, "escapes", formats=FORMATS, must_finish=True)
    # a run directory whose name has them (text output names the runs)
    weird = os.path.join(tmp, "dir\x1b[2J\nname")
    shutil.copytree(good[1], weird)
    rc, out, err = job("--by", "clock", good[0], weird)
    check(rc == 0 and not raw_controls(out), "a run named with escapes: --by clock text escaped (%s)"
          % raw_controls(out))
    runs, p = variant(tmp, good, "megabytes")
    sql_on(p, "UPDATE xs_rank SET host = printf('%.*c', 2000000, 'h')",
           "UPDATE xs_name SET value = printf('%.*c', 2000000, 'k') || id",
           "UPDATE xs_kernel SET site = printf('%.*c', 2000000, 's')")
    finished_or_refused(runs, "strings of megabytes", formats=("text", "json"))
    runs, p = variant(tmp, good, "toobig")
    sql_on(p, "UPDATE xs_name SET value = printf('%.*c', 20000000, 'k') || id")
    rc, out, err = job("--by", "kernel", *runs)
    refused(rc, err, "a string past SQLite's limit", runs[1] + "/xpsum.db", "too big")


def rows(tmp, good):
    """Very many rows: linear work that finishes, or the work limit's one
    line; never minutes of spinning."""
    runs, p = variant(tmp, good, "many")
    # one run of 20,000 ranks, each in a few collectives and with pieces
    sql_on(p, "INSERT INTO xs_rank SELECT pid + value, rank + value, world, host, gpu_ns, kernels,"
           " coll_ns, sync_ns FROM xs_rank, " + series(20000),
           "INSERT INTO xs_coll SELECT pid + value, name, nth, launch, start, end FROM xs_coll,"
           " " + series(20000) + " WHERE nth < 3",
           "INSERT INTO xs_piece SELECT pid + value, a, b, kind, site, ns FROM xs_piece,"
           " " + series(20000) + " WHERE a < (SELECT min(a) + 1000 FROM xs_piece)",
           "INSERT INTO xs_span SELECT pid + value, name, nth, kind, site, ns, from_name, from_nth"
           " FROM xs_span, " + series(20000) + " WHERE nth < 3")
    t0 = time.monotonic()
    finished_or_refused(runs, "20,000 ranks in a run", views=("rank", "wait"), formats=("csv",))
    check(time.monotonic() - t0 < TIMEOUT, "20,000 ranks: %.1f s" % (time.monotonic() - t0))
    # the work limit: a query stopped says so, in one line naming the
    # summary, and no view of the rows read before it is printed
    for view in VIEWS[:-1]:     # --by clock reads a few rows of each
        rc, out, err = job("--by", view, *runs, env={"XPCORR_MAX_DB_WORK": "1"})
        check(rc == 1 and len(err) == 1 and "XPCORR_MAX_DB_WORK" in err[0] and "xpsum.db" in err[0]
              and not out, "the work limit stops --by %s in one line, nothing printed (exit %s,"
              " %d bytes out): %s" % (view, rc, len(out), err[:2]))
    # --by wait: 2,000 instances rank 1 entered last, each wait's stretch
    # over all 20,000 of rank 1's pieces (each at a place of its own): the
    # work is outside SQLite, and the same limit stops it
    runs, p = variant(tmp, good, "pieces")
    first = os.path.join(tmp, "pieces", "run0")
    shutil.copytree(good[0], first)
    runs[0] = first
    for r, f in enumerate((os.path.join(first, "xpsum.db"), p)):
        sql_on(f, "DELETE FROM xs_marker", "UPDATE xs_clock SET has_pair = 0",
               "DELETE FROM xs_span", "DELETE FROM xs_piece",
               "CREATE TABLE keep AS SELECT pid, name FROM xs_coll LIMIT 1", "DELETE FROM xs_coll",
               "INSERT INTO xs_coll SELECT pid, name, value - 1, t, t, t + 1000 FROM keep,"
               " (SELECT value, 1000000000000 + value * 1000000 + %d AS t FROM %s)"
               % (r * 500000, series(2000)),
               "INSERT INTO xs_piece SELECT pid, value, value + 1, 1, 's' || value, 1 FROM keep, "
               + series(20000 if r else 1),
               "DROP TABLE keep")
    t0 = time.monotonic()
    rc, _, err = job("--by", "wait", *runs, env={"XPCORR_MAX_DB_WORK": "300000000"})
    check(rc == 1 and len(err) == 1 and "XPCORR_MAX_DB_WORK" in err[0] and "xpsum.db" in err[0],
          "2,000 waits over 20,000 pieces: the work limit's one line (exit %s, %.1f s): %s"
          % (rc, time.monotonic() - t0, err[:2]))


def host_pieces(tmp, good):
    """Host-side collectives (gloo's): every wait's stretches are added to
    its pair of ranks' before they are shared. 2,000 waits, rank 1 late in
    each, its waiting thread at 100 places of its own in each stretch: the
    adding compares each row with the pair's (200,000 places), charged to
    the same work limit, which stops it in one line."""
    runs, p = variant(tmp, good, "hpieces")
    first = os.path.join(tmp, "hpieces", "run0")
    shutil.copytree(good[0], first)
    runs[0] = first
    name = "999999"
    for r, f in enumerate((os.path.join(first, "xpsum.db"), p)):
        t = "1000000000000 + value * 1000000 + %d" % (r * 500000)
        sql_on(f, "DELETE FROM xs_marker", "UPDATE xs_clock SET has_pair = 0",
               "DELETE FROM xs_span", "DELETE FROM xs_piece", "DELETE FROM xs_hpiece",
               "DELETE FROM xs_host",
               "CREATE TABLE keep AS SELECT pid FROM xs_coll LIMIT 1", "DELETE FROM xs_coll",
               "INSERT INTO xs_name VALUES(%s, 'all_reduce (host-side: c10d::Work::wait)')" % name,
               "INSERT INTO xs_host SELECT pid, 'x', %s, 1000, 2000 FROM keep" % name,
               "INSERT INTO xs_coll SELECT pid, %s, value - 1, %s, %s, %s + 1000 FROM keep, %s"
               % (name, t, t, t, series(2000)),
               # the waiting rank's stretch from the end of its previous instance
               "INSERT INTO xs_span SELECT pid, %s, value - 1, 1, 'w', 1, %s, value - 2"
               " FROM keep, %s WHERE value > 1" % (name, name, series(2000)),
               # the late rank's thread: 100 places between each two instances
               "INSERT INTO xs_hpiece SELECT pid, a, a + 50, 1, 's' || value, 50 FROM keep,"
               " (SELECT value, 1000000000000 + (value / 100 + 1) * 1000000 + 100000"
               " + (value %% 100) * 100 AS a FROM %s)" % series(200000),
               "DROP TABLE keep")
    t0 = time.monotonic()
    rc, _, err = job("--by", "wait", *runs, env={"XPCORR_MAX_DB_WORK": "300000000"})
    check(rc == 1 and len(err) == 1 and "XPCORR_MAX_DB_WORK" in err[0] and "xpsum.db" in err[0],
          "2,000 host-side waits over 200,000 places: the work limit's one line (exit %s, %.1f s):"
          " %s" % (rc, time.monotonic() - t0, err[:2]))


def huge_ids(tmp):
    """A run's database whose StringIds reach the int64 limit: the summary
    xpcorr job writes from it numbers the host-side collectives' names after
    them, and says in one line that there is no room, never overflowing."""
    d = os.path.join(tmp, "hugeids")
    shutil.copytree(os.path.join(tmp, "rank0"), d)
    os.unlink(os.path.join(d, "xpsum.db"))
    sql_on(os.path.join(d, "xpcorr.db"), "INSERT INTO StringIds VALUES(9223372036854775807, 'x')")
    rc, _, err = job(d)
    refused(rc, err, "StringIds at the int64 limit", d, "no room to number names")


def ranks_and_dirs(tmp, good):
    runs, p = variant(tmp, good, "samerank")
    sql_on(p, "UPDATE xs_rank SET rank = 0", "UPDATE xs_device SET rank = 0",
           "UPDATE xs_idle SET rank = 0")
    rc, _, err = job(*runs)
    refused(rc, err, "a rank in two runs", "rank 0 is in", runs[1] + "/xpsum.db")
    rc, _, err = job(good[0], good[1], good[0])
    refused(rc, err, "a run given twice", good[0], "given twice", status=2)
    rc, _, err = job("--by", "clock", good[0], good[1], good[1] + "/")
    refused(rc, err, "a run given twice (--by clock)", "given twice", status=2)
    loop = os.path.join(tmp, "loop")
    os.symlink(loop, loop)
    rc, _, err = job(good[0], loop)
    refused(rc, err, "a run directory that is a link loop", loop)
    rc, _, err = job(good[0], os.path.join(tmp, "nonexistent"))
    check(rc in (1, 2) and len(err) == 1 and "nonexistent" in err[0],
          "a run directory that is not there (exit %s): %s" % (rc, err[:2]))
    if os.geteuid() != 0:
        print("skip unreadable: needs root to read as nobody")
        return
    locked = os.path.join(tmp, "locked")
    shutil.copytree(good[1], locked)
    os.chmod(locked, 0o700)
    os.chmod(tmp, 0o755)
    for g in good:
        os.chmod(g, 0o755)
    rc, _, err = job(good[0], locked, user=65534)
    refused(rc, err, "an unreadable run directory (as nobody)", locked, "ermission denied")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        good = make_job(tmp)
        rc, out, err = job(*good)
        check(rc == 0 and not err and b"node-1" in out, "the job as shipped (exit %s): %s" % (rc, err[:2]))
        not_regular(tmp, good)
        fifo_race(tmp, good)
        schema_faults(tmp, good)
        values(tmp, good)
        strings(tmp, good)
        rows(tmp, good)
        host_pieces(tmp, good)
        huge_ids(tmp)
        ranks_and_dirs(tmp, good)
    if failures:
        print("%d failures:\n  %s" % (len(failures), "\n  ".join(failures)))
        return 1
    return 0


sys.exit(main())
