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
    # issue 38: every read of a string built a 100 MB one (report 3.7 GB, 120 s)
    "generated": ("column StringIds.value is generated", [
        "PRAGMA writable_schema = ON",
        "UPDATE sqlite_master SET sql = 'CREATE TABLE StringIds(id INTEGER PRIMARY KEY,"
        " v0 TEXT NOT NULL, value TEXT GENERATED ALWAYS AS"
        " (v0 || printf(''%.*c'', 100000000, ''x'')))' WHERE name = 'StringIds'",
        "PRAGMA schema_version = 1000"]),
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
    line says why and how to raise it, and the command fails. (The folded
    export reads every sample in one statement: its work passes the limit's
    tick whatever shape the other queries take.)"""
    rc, _, err, cpu, _ = xpcorr("export", "--format", "folded", "-o", os.devnull, run,
                                env={"XPCORR_MAX_DB_WORK": "1"})
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


INT64_MAX = (1 << 63) - 1
REC_GPU_API, REC_GPU_KERNEL = 37, 38


def patch_first(path, rtype, start, end):
    """Sets start and end of the first record of that type (a plain stream:
    header size at byte 12; records: type, size, payload starting with
    start and end)."""
    data = bytearray(open(path, "rb").read())
    off = int.from_bytes(data[12:16], "little")
    while off + 24 <= len(data):
        t, size = int.from_bytes(data[off:off + 4], "little"), int.from_bytes(data[off + 4:off + 8], "little")
        if size < 8:
            break
        if t == rtype:
            data[off + 8:off + 24] = start.to_bytes(8, "little") + end.to_bytes(8, "little")
            open(path, "wb").write(bytes(data))
            return True
        off += size
    return False


def sane(rc, err):
    return rc in (0, 1) and all(l.startswith("xpcorr") for l in err)


READERS = (["info"], ["report"], ["report", "--by", "launch"], ["report", "--by", "stack"], ["report", "--by", "api"],
           ["report", "--by", "thread"], ["report", "--by", "source"], ["report", "--by", "op"],
           ["report", "--by", "idle"], ["report", "--by", "memop"], ["report", "--format", "json"],
           ["export", "--format", "folded", "--weight", "gpu"],
           ["export", "--format", "folded", "--weight", "api"],
           ["export", "--format", "chrome"], ["export", "--format", "svg", "--weight", "gpu"])


def extreme_times(tmp):
    """A kernel record from 0 to 2^63-1 and an API call as long: skipped
    with a warning, the rest of the run kept; a database holding such rows
    (and other extremes) read without undefined behaviour (the ASan+UBSan
    suite halts on any finding) and without failing."""
    run = os.path.join(tmp, "times")
    subprocess.run([GEN_RUN, "scale", EXE, LIB, run, "2000"], check=True, stdout=subprocess.DEVNULL)
    gpu = os.path.join(run, "gpu-1000.xpr")
    check(patch_first(gpu, REC_GPU_KERNEL, 0, INT64_MAX) and patch_first(gpu, REC_GPU_API, 1, INT64_MAX),
          "extreme times: records patched")
    rc, _, err, _, _ = xpcorr("ingest", run)
    warned = [l for l in err if "more than 104 days apart" in l]
    check(rc == 0 and len(warned) == 1 and "2 records" in warned[0] and
          ".. 9223372036854775807 ns" in warned[0], "extreme times: ingest warns and goes on: %s" % err[:3])
    for args in READERS:
        rc, out, err, _, _ = xpcorr(*args, run)
        check(rc == 0 and out and sane(rc, err), "extreme times skipped: %s: exit %s %s" %
              (" ".join(args), rc, err[:2]))
    db = os.path.join(tmp, "times.db")
    shutil.copy(os.path.join(run, "xpcorr.db"), db)
    d = sqlite3.connect(db)
    for sql in ("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 0, end = %d WHERE rowid IN (1, 2)" % INT64_MAX,
                "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = %d, end = %d WHERE rowid = 3"
                % (INT64_MAX, -INT64_MAX - 1),
                "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = %d, end = %d WHERE rowid IN (1, 2)"
                % (-INT64_MAX - 1, INT64_MAX),
                "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET start = 0, end = %d, bytes = %d WHERE rowid = 1"
                % (INT64_MAX, INT64_MAX),
                "UPDATE xp_samples SET ts = %d WHERE id = 1" % INT64_MAX,
                "UPDATE xp_samples SET ts = %d WHERE id = 2" % (-INT64_MAX - 1),
                "UPDATE xp_launches SET ts = %d WHERE rowid = 1" % INT64_MAX,
                "UPDATE xp_attribution SET distance_ns = %d WHERE rowid = 1" % INT64_MAX,
                "UPDATE xp_report_groups SET total_ns = %d, max_ns = %d" % (INT64_MAX, INT64_MAX),
                "UPDATE META_DATA_EXPORT SET value = '%d' WHERE name LIKE '%%monotonic_ns'" % INT64_MAX,
                "UPDATE META_DATA_EXPORT SET value = '%d' WHERE name LIKE '%%realtime_ns'" % (-INT64_MAX - 1),
                "UPDATE xp_gpu_clock SET mono_before = %d, cupti_ts = %d, mono_after = %d"
                % (-INT64_MAX - 1, INT64_MAX, INT64_MAX),
                "UPDATE NVTX_EVENTS SET start = %d, end = %d WHERE rowid %% 2 = 1" % (-INT64_MAX - 1, INT64_MAX),
                "UPDATE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SET start = 0, end = %d" % INT64_MAX,
                "UPDATE xp_switches SET duration = %d, ts = %d" % (INT64_MAX, INT64_MAX),
                "UPDATE xp_samples SET period = %d WHERE id = 3" % INT64_MAX):
        d.execute(sql)
    d.commit()
    d.close()
    for args in READERS + (["export", "--format", "folded"],):
        rc, _, err, _, _ = xpcorr(*args, db)
        check(sane(rc, err), "extreme times in a database: %s: exit %s %s" % (" ".join(args), rc, err[:2]))
    rc, _, err, _, _ = xpcorr("diff", db, os.path.join(run, "xpcorr.db"))
    check(sane(rc, err), "extreme times in a database: diff: exit %s %s" % (rc, err[:2]))
    rc, _, err, _, _ = xpcorr("merge", "-q", "-o", os.path.join(tmp, "tjob"), db, run)
    check(sane(rc, err), "extreme times in a database: merge: exit %s %s" % (rc, err[:2]))
    # two ranks of a job whose NCCL kernels and clocks are at the limits:
    # the clock alignment and the merged job's readers
    ranks = []
    for rank in (0, 1):
        r = os.path.join(tmp, "rank%d" % rank)
        subprocess.run([GEN_RUN, "job", EXE, LIB, r, str(rank), "2", "node-%d" % rank, "0", "0"],
                       check=True, stdout=subprocess.DEVNULL)
        rc, _, err, _, _ = xpcorr("ingest", "--quiet", r)
        db = os.path.join(tmp, "rank%d.db" % rank)
        shutil.copy(os.path.join(r, "xpcorr.db"), db)
        d = sqlite3.connect(db)
        d.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = %d WHERE rowid %% 3 = %d"
                  % (INT64_MAX if rank else -INT64_MAX - 1, rank))
        d.execute("UPDATE META_DATA_EXPORT SET value = '%d' WHERE name LIKE '%%_ns'"
                  % (INT64_MAX if rank else -INT64_MAX - 1))
        d.commit()
        d.close()
        ranks.append(db)
    job = os.path.join(tmp, "xjob")
    rc, _, err, _, _ = xpcorr("merge", "-q", "-o", job, *ranks)
    check(sane(rc, err), "extreme times in two ranks: merge: exit %s %s" % (rc, err[:2]))
    for args in READERS if rc == 0 else ():
        rc, _, err, _, _ = xpcorr(*args, job)
        check(sane(rc, err), "extreme times in a merged job: %s: exit %s %s" % (" ".join(args), rc, err[:2]))


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
        extreme_times(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failures" % len(failures))
    return 1 if failures else 0


sys.exit(main())
