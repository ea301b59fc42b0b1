#!/usr/bin/env python3
"""hostile-readers.py - received databases and runs made to hurt their
reader (issue 29): databases whose schema is not ours (a recursive view in
place of a table, tables rebuilt without their keys, planner statistics)
must be refused, or the run ingested again, within a second of CPU; queries
are bounded (XPCORR_MAX_DB_WORK) with a clear error; control characters in
a run's names (ESC, BEL, CR, LF, C1) never reach a text output raw.

    hostile-readers.py XPCORR GEN_RUN FIXTURE_EXE FIXTURE_LIB
"""
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

XPCORR, GEN_RUN, EXE, LIB = sys.argv[1:5]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def xpcorr(*args, env=None, timeout=20):
    """(exit status, stdout, stderr lines, CPU seconds, wall seconds)."""
    cpu, wall = cpu_children(), time.monotonic()
    try:
        p = subprocess.run([XPCORR, *args], capture_output=True, text=True, timeout=timeout,
                           errors="replace", env=dict(os.environ, **(env or {})))
        rc, out, err = p.returncode, p.stdout, [l for l in p.stderr.splitlines() if l]
    except subprocess.TimeoutExpired:
        rc, out, err = "timeout", "", []
    return rc, out, err, cpu_children() - cpu, time.monotonic() - wall


# each: what the message says, and the SQL that makes the database hostile
MUTATIONS = {
    "recursive-view": ("xp_samples is a view, not a table", [
        "DROP TABLE xp_samples",
        "CREATE VIEW xp_samples AS WITH RECURSIVE r(id, ts, pid, tid, cpu, stack_id, period)"
        " AS (SELECT 1, 1, 1, 1, 1, 1, 1 UNION ALL SELECT id + 1, ts, pid, tid, cpu, stack_id,"
        " period FROM r) SELECT * FROM r"]),
    "strings-view": ("StringIds is a view, not a table", [
        "ALTER TABLE StringIds RENAME TO s2",
        "CREATE VIEW StringIds AS SELECT a.id, a.value FROM s2 a, s2 b, s2 c, s2 d"]),
    "no-keys": ("table xp_stacks does not have our keys (id:1)", [
        "CREATE TABLE s2(id, parent, frame, depth)", "INSERT INTO s2 SELECT * FROM xp_stacks",
        "DROP TABLE xp_stacks", "ALTER TABLE s2 RENAME TO xp_stacks",
        "CREATE INDEX xp_stacks_parent ON xp_stacks(parent)"]),
    "no-index": ("no index xp_samples_stack on table xp_samples", ["DROP INDEX xp_samples_stack"]),
    "partial-index": ("index xp_stacks_parent is not ours (on parent, partial, not on parent)", [
        "DROP INDEX xp_stacks_parent", "CREATE INDEX xp_stacks_parent ON xp_stacks(parent) WHERE 0"]),
    "short-index": ("index xp_launches_pid_tid_ts is not ours (on pid, not on pid,tid,ts)", [
        "DROP INDEX xp_launches_pid_tid_ts", "CREATE INDEX xp_launches_pid_tid_ts ON xp_launches(pid)"]),
    "statistics": ("sqlite_stat1 holds planner statistics", ["ANALYZE"]),
}


def mutate(db, sql):
    d = sqlite3.connect(db)
    d.execute("PRAGMA legacy_alter_table = ON")   # renames leave the views alone
    for s in sql:
        d.execute(s)
    d.commit()
    d.close()
    # newer than the run: a reader would otherwise take it as it is
    later = time.time() + 120
    os.utime(db, (later, later))


def one_refusal(rc, err, cpu, what, expect):
    check(rc == 1 and len(err) == 1 and err[0].startswith("xpcorr: ") and expect in err[0]
          and cpu < 1.0, "%s: exit %s, %.2f s CPU: %s" % (what, rc, cpu, err[:2]))


def database_files(tmp, good):
    """A .db named on the command line: refused by every command."""
    for name, (expect, sql) in MUTATIONS.items():
        db = os.path.join(tmp, name + ".db")
        shutil.copy(good, db)
        mutate(db, sql)
        for cmd in (["report"], ["report", "--by", "stack"], ["info"],
                    ["export", "--format", "folded"], ["export", "--format", "svg"],
                    ["export", "--format", "chrome"]):
            rc, _, err, cpu, _ = xpcorr(*cmd, db)
            one_refusal(rc, err, cpu, "%s.db %s" % (name, " ".join(cmd)),
                        "is not a database of this xpcorr: " + expect)
        rc, _, err, cpu, _ = xpcorr("diff", good, db)
        one_refusal(rc, err, cpu, "%s.db diff" % name, expect)


def run_directories(tmp, run):
    """A run's own xpcorr.db: the run is ingested again, said once; a job
    directory (no run to ingest) refuses it; so does a run nobody may write."""
    for name, (expect, sql) in MUTATIONS.items():
        r = os.path.join(tmp, "run-" + name)
        shutil.copytree(run, r)
        mutate(os.path.join(r, "xpcorr.db"), sql)
        rc, out, err, cpu, wall = xpcorr("export", "--format", "folded", r)
        again = [l for l in err if "ingested the run again" in l]
        check(rc == 0 and len(again) == 1 and expect in again[0] and "xp_inline_host;" in out,
              "run %s: ingested again (%.2f s CPU, %.1f s): %s" % (name, cpu, wall, again or err[:2]))
        rc, _, err, cpu, _ = xpcorr("info", r)
        check(rc == 0 and not any("again" in l for l in err), "run %s: then read as it is" % name)
        job = os.path.join(tmp, "job-" + name)
        os.mkdir(job)
        shutil.copy(os.path.join(run, "xpcorr.db"), os.path.join(job, "xpcorr.db"))
        mutate(os.path.join(job, "xpcorr.db"), sql)
        rc, _, err, cpu, _ = xpcorr("report", job)
        one_refusal(rc, err, cpu, "job %s" % name, expect)
        check(err[-1:] and err[-1].endswith("; %s holds no run to ingest again" % job),
              "job %s: nothing to ingest again, said" % name)
    readonly(tmp, run)


def readonly(tmp, run):
    if os.geteuid() != 0:
        print("skip readonly: needs root to read a run as nobody")
        return
    r = os.path.join(tmp, "ro")
    shutil.copytree(run, r)
    mutate(os.path.join(r, "xpcorr.db"), MUTATIONS["recursive-view"][1])
    os.chmod(r, 0o555)
    os.chmod(tmp, 0o755)
    p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", XPCORR,
                        "report", r], capture_output=True, text=True, timeout=60)
    err = [l for l in p.stderr.splitlines() if l]
    check(p.returncode == 1 and len(err) == 1 and "xp_samples is a view" in err[0],
          "read-only run with a view database: refused, not read (%s)" % err[:2])
    os.chmod(r, 0o755)


def merge(tmp, run):
    """merge reads each run's database through the same check."""
    r = os.path.join(tmp, "merge-run")
    shutil.copytree(run, r)
    mutate(os.path.join(r, "xpcorr.db"), MUTATIONS["recursive-view"][1])
    rc, _, err, cpu, wall = xpcorr("merge", "-q", "-o", os.path.join(tmp, "mjob"), r)
    check(rc == 0 and any("ingested the run again" in l for l in err),
          "merge of a run with a view database: ingested again (%.1f s): %s" % (wall, err[:2]))
    db = os.path.join(tmp, "merge.db")
    shutil.copy(os.path.join(run, "xpcorr.db"), db)
    mutate(db, MUTATIONS["recursive-view"][1])
    rc, _, err, cpu, wall = xpcorr("merge", "-q", "-o", os.path.join(tmp, "mjob2"), db)
    one_refusal(rc, err, cpu, "merge of a view database", "xp_samples is a view")


def work_limit(run):
    """Queries are bounded: a limit too small for the run stops them, one
    line says why and how to raise it, and the command fails."""
    rc, _, err, cpu, _ = xpcorr("report", "--by", "stack", run, env={"XPCORR_MAX_DB_WORK": "1"})
    check(rc == 1 and err and "XPCORR_MAX_DB_WORK" in err[-1] and "stopped after 1 steps" in err[-1],
          "work limit: exit %s: %s" % (rc, err[-2:]))
    rc, _, err, _, _ = xpcorr("report", "--by", "stack", run)
    check(rc == 0 and not err, "the default limit lets the run be read (%s)" % err[:2])


# A terminal acts on these: C0 but LF (one output line each), DEL, C1, and
# bytes that are no UTF-8 (a terminal may take 0x9b for CSI).
def raw_controls(data):
    text = data.decode("utf-8", errors="surrogateescape")
    return sorted({"U+%04X" % ord(c) for c in text if (ord(c) < 0x20 and c != "\n") or
                   0x7f <= ord(c) <= 0x9f or 0xdc80 <= ord(c) <= 0xdcff})


def crafted_names(tmp):
    """A run whose comm, kernel names, kernel symbols and meta.json carry
    escape sequences, ingested; and a copy as the other side of a diff."""
    run = os.path.join(tmp, "esc", "run")
    os.mkdir(os.path.dirname(run))
    subprocess.run([GEN_RUN, "scale", EXE, LIB, run, "2000"], check=True, stdout=subprocess.DEVNULL)
    evil = b"\x1b[2J\x07\r\n"                           # clear screen, bell, CR, LF: 7 bytes
    for f in os.listdir(run):
        if f.endswith(".xpr"):
            p = os.path.join(run, f)
            data = open(p, "rb").read()
            data = data.replace(b"trainer", evil).replace(b"gemm_", b"g\x1b]0;")
            open(p, "wb").write(data)
    p = os.path.join(run, "kallsyms")
    open(p, "wb").write(open(p, "rb").read().replace(b"schedule", b"sc\x1b[1m\x9b\x07"))
    p = os.path.join(run, "meta.json")
    m = json.load(open(p))
    m["command"] = ["python3", "\x1b]0;pwned\x07", "--x\r\n"]
    m["hostname"] = "host\x1b[31m\u009b"
    m["git"] = {"describe": "v1\x1b[5m", "dir": "/x"}
    json.dump(m, open(p, "w"))
    rc, _, err, _, _ = xpcorr("ingest", "--quiet", run)
    check(rc == 0, "crafted names: ingested (%s)" % err[:2])
    return run


def escapes(tmp):
    """Every text output of a run whose names carry control characters:
    not one reaches the output raw, and the names are there, escaped."""
    run = crafted_names(tmp)
    other = os.path.join(tmp, "esc", "other")
    shutil.copytree(run, other)
    outputs = {
        "info": ["info", run], "ls": ["ls", os.path.dirname(run)], "dump": ["dump", run],
        "report": ["report", run], "report by stack": ["report", "--by", "stack", run],
        "report by thread": ["report", "--by", "thread", run],
        "report by api": ["report", "--by", "api", run],
        "folded": ["export", "--format", "folded", run],
        "folded gpu": ["export", "--format", "folded", "--weight", "gpu", run],
        "diff": ["diff", run, other], "diff folded": ["diff", "--format", "folded", run, other],
    }
    for what, args in outputs.items():
        p = subprocess.run([XPCORR, *args], capture_output=True, timeout=60)
        bad = raw_controls(p.stdout + p.stderr)
        shown = b"\\x1b" in p.stdout or what.startswith("report by")  # no crafted name in these
        check(p.returncode == 0 and not bad and shown,
              "%s: exit %d, raw controls %s, escaped names shown: %s" %
              (what, p.returncode, bad or "none", shown))


def main():
    tmp = tempfile.mkdtemp(prefix="hostile-readers-")
    try:
        run = os.path.join(tmp, "run")
        subprocess.run([GEN_RUN, "scale", EXE, LIB, run, "2000"], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run([XPCORR, "ingest", "--quiet", run], check=True)
        good = os.path.join(tmp, "good.db")
        shutil.copy(os.path.join(run, "xpcorr.db"), good)
        database_files(tmp, good)
        run_directories(tmp, run)
        merge(tmp, run)
        work_limit(run)
        escapes(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failures" % len(failures))
    return 1 if failures else 0


sys.exit(main())
