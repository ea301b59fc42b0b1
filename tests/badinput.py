#!/usr/bin/env python3
"""badinput.py - xpcorr ingest on damaged and hostile run directories,
made from a real H100 run (fixtures/h100-workload): truncated, zero-filled,
byte-flipped files, huge length fields, wrong magic, future versions,
symbolic links, FIFOs, oversized meta.json, a directory of another user,
root ingesting a user's run while the user plants links; and hostile runs
written here or from the synthetic golden run (gen-run): a zstd bomb, perf
maps hard-linked under many pids, a kallsyms cut short, names that are not
UTF-8, module paths that name a FIFO or a tty.
Every case must end with the exit status xpcorr-ingest(1) documents (0 with
warnings, 1 with --strict or when nothing usable is left), stderr lines that
each start with "xpcorr: " and name the file (and the offset where the
damage is), within a time limit and a memory bound: no crash, no hang.

    badinput.py XPCORR FIXTURE_DIR [FLIPS]
"""
import ctypes
import json
import os
import random
import re
import resource
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

XPCORR, FIXTURE = sys.argv[1], sys.argv[2]
FLIPS = int(sys.argv[3]) if len(sys.argv) > 3 else 150
RUN_FILES = ("cpu.xpr", "meta.json") + tuple(
    f for f in sorted(os.listdir(FIXTURE)) if f.startswith("gpu-") and f.endswith(".xpr"))
failures = []
GEN_RUN = os.environ.get("XP_GEN_RUN")


def ingest(run, *opts):
    """(exit status, stderr lines) of xpcorr ingest, killed after 30 s."""
    try:
        p = subprocess.run([XPCORR, "ingest", "--quiet", *opts, run], capture_output=True,
                           text=True, timeout=30, errors="replace")
    except subprocess.TimeoutExpired:
        return "timeout", []
    return p.returncode, [l for l in p.stderr.splitlines() if l]


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def fresh(tmp, name):
    run = os.path.join(tmp, name)
    os.mkdir(run)
    for f in RUN_FILES:
        shutil.copy(os.path.join(FIXTURE, f), run)
    return run


def well_formed(rc, lines):
    """Exit 0 or 1, and nothing on stderr but xpcorr's own lines: no
    sanitizer report, no abort message, no stray text."""
    return rc in (0, 1) and all(l.startswith("xpcorr: ") for l in lines)


def one_error(rc, lines, path, offset=None):
    where = "%s at offset %d: " % (path, offset) if offset is not None else path
    return rc == 1 and len(lines) == 1 and lines[0].startswith("xpcorr: ") and where in lines[0]


def record_offsets(path):
    """Offsets of the records of a plain stream (header size at byte 12)."""
    data = open(path, "rb").read()
    off, offs = int.from_bytes(data[12:16], "little"), []
    while off + 8 <= len(data):
        size = int.from_bytes(data[off + 4:off + 8], "little")
        if size < 8:
            break
        offs.append(off)
        off += size
    return offs


def patch(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def streams(tmp):
    for name in [f for f in RUN_FILES if f.endswith(".xpr")]:
        size = os.path.getsize(os.path.join(FIXTURE, name))
        offs = record_offsets(os.path.join(FIXTURE, name))
        mid = offs[len(offs) // 2]
        cases = [
            # (what, how to damage path, expected error offset, strict only)
            ("zero-filled", lambda p: open(p, "wb").write(bytes(size)), 0, False),
            ("wrong magic", lambda p: patch(p, 0, b"NOTXPCAP"), 0, False),
            ("future version", lambda p: patch(p, 8, (99).to_bytes(4, "little")), 0, False),
            ("empty", lambda p: open(p, "wb").close(), 0, False),
            ("truncated in a record", lambda p: os.truncate(p, mid + 5), mid, True),
            ("zeros after the last record", lambda p: open(p, "ab").write(bytes(4096)), size, True),
            ("huge record length", lambda p: patch(p, mid + 4, (0xfffffff8).to_bytes(4, "little")),
             mid, True),
            ("record length 0", lambda p: patch(p, mid + 4, bytes(4)), mid, True),
        ]
        for what, damage, offset, strict_only in cases:
            # one process's GPU stream is not the run: a damaged header
            # there is a warning, the CPU side still loads
            strict_only = strict_only or (name.startswith("gpu-") and what != "future version")
            run = fresh(tmp, "%s-%s" % (name, what.replace(" ", "-")))
            path = os.path.join(run, name)
            damage(path)
            rc, lines = ingest(run)
            if strict_only:
                check(rc == 0 and any(path + " at offset %d: " % offset in l and "warning" in l
                                      for l in lines) and well_formed(rc, lines),
                      "%s %s: exit 0, warning at offset %d (%s %s)" % (name, what, offset, rc, lines))
                rc, lines = ingest(run, "--strict")
            check(one_error(rc, lines, path, offset),
                  "%s %s%s: exit 1, one line at offset %d (%s %s)" % (
                      name, what, " --strict" if strict_only else "", offset, rc, lines))


def flips(tmp):
    seed = int(os.environ.get("XP_FLIP_SEED", "8"))
    rnd = random.Random(seed)
    print("byte flips: %d runs, seed %d (XP_FLIP_SEED to change)" % (FLIPS, seed))
    bad = 0
    for i in range(FLIPS):
        run = fresh(tmp, "flip%d" % i)
        name = rnd.choice(RUN_FILES)
        path = os.path.join(run, name)
        data = bytearray(open(path, "rb").read())
        for _ in range(rnd.choice((1, 1, 2, 8, 64))):
            at = rnd.randrange(len(data))
            data[at] = rnd.choice((0, 0xff, data[at] ^ (1 << rnd.randrange(8)), rnd.randrange(256)))
        open(path, "wb").write(data)
        for opts in ((), ("--strict",)):
            rc, lines = ingest(run, *opts)
            named = rc == 0 or any(run in l for l in lines)
            if not (well_formed(rc, lines) and named):
                bad += 1
                print("FAIL flip %d in %s %s: exit %s %s" % (i, name, " ".join(opts), rc, lines[-3:]))
        shutil.rmtree(run)
    check(bad == 0, "byte flips: every ingest ends 0 or 1 with xpcorr's own lines (%d bad)" % bad)


def files(tmp):
    # a link in the run directory is not followed: an error for the stream
    # ingest cannot do without, a warning for the others
    run = fresh(tmp, "link-cpu")
    os.rename(os.path.join(run, "cpu.xpr"), os.path.join(tmp, "elsewhere.xpr"))
    os.symlink(os.path.join(tmp, "elsewhere.xpr"), os.path.join(run, "cpu.xpr"))
    rc, lines = ingest(run)
    check(one_error(rc, lines, os.path.join(run, "cpu.xpr")) and "symbolic link" in lines[0],
          "cpu.xpr is a link: exit 1, one line (%s %s)" % (rc, lines))
    secret = os.path.join(tmp, "secret.map")
    with open(secret, "w") as f:
        f.write("7f0000000000 1000 SECRET_SYMBOL\n")
    for name in ("meta.json", "kallsyms", "perf-434.map"):
        run = fresh(tmp, "link-" + name)
        if os.path.exists(os.path.join(run, name)):
            os.unlink(os.path.join(run, name))
        os.symlink(secret, os.path.join(run, name))
        rc, lines = ingest(run)
        path = os.path.join(run, name)
        check(rc == 0 and well_formed(rc, lines) and any(path in l and "symbolic link" in l
                                                         for l in lines),
              "%s is a link: exit 0, a warning naming it (%s %s)" % (name, rc, lines))
        db = subprocess.run(["sqlite3", os.path.join(run, "xpcorr.db"),
                             "SELECT count(*) FROM StringIds WHERE value LIKE '%SECRET%'"],
                            capture_output=True, text=True).stdout.strip()
        check(db in ("0", ""), "%s link: nothing of its target in the database (%s)" % (name, db))
    # a FIFO or a directory where a file belongs: no hang, no crash
    for name, make in (("perf-434.map", os.mkfifo), ("kallsyms", os.mkfifo),
                       ("meta.json", os.mkfifo), ("cpu.xpr", os.mkdir)):
        run = fresh(tmp, "odd-" + name)
        if os.path.exists(os.path.join(run, name)):
            os.unlink(os.path.join(run, name))
        make(os.path.join(run, name))
        rc, lines = ingest(run)
        want = 1 if name == "cpu.xpr" else 0
        check(rc == want and well_formed(rc, lines) and any(os.path.join(run, name) in l
                                                            for l in lines),
              "%s is a %s: exit %d, no hang, a line naming it (%s %s)" % (
                  name, "FIFO" if make is os.mkfifo else "directory", want, rc, lines))
    # meta.json: too large to read, a newer format, not JSON
    run = fresh(tmp, "meta-huge")
    with open(os.path.join(run, "meta.json"), "ab") as f:
        f.truncate(17 << 20)
    rc, lines = ingest(run)
    check(rc == 0 and any("meta.json" in l and "too large" in l for l in lines),
          "meta.json of 17 MiB: exit 0, not read, a warning (%s %s)" % (rc, lines))
    run = fresh(tmp, "meta-future")
    text = open(os.path.join(run, "meta.json")).read()
    open(os.path.join(run, "meta.json"), "w").write(
        re.sub(r'"format_version": *\d+', '"format_version": 99', text))
    rc, lines = ingest(run)
    check(one_error(rc, lines, os.path.join(run, "meta.json")) and "newer" in lines[0],
          "meta.json format_version 99: exit 1, one line (%s %s)" % (rc, lines))
    run = fresh(tmp, "meta-junk")
    open(os.path.join(run, "meta.json"), "w").write('{"format_version": 1,\n "x": [1, 2,\n')
    rc, lines = ingest(run)
    check(rc == 0 and any("meta.json at line" in l for l in lines),
          "meta.json not JSON: exit 0, a warning with the line (%s %s)" % (rc, lines))


def other_user(tmp):
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        print("SKIP part: a run of another user needs root and setpriv (only this part)")
        return
    run = fresh(tmp, "theirs")
    for f in [run] + [os.path.join(run, n) for n in os.listdir(run)]:
        os.chown(f, 65534, 65534)
    os.chmod(run, 0o755)
    os.chmod(tmp, 0o755)
    p = subprocess.run(["setpriv", "--reuid=1000", "--regid=1000", "--clear-groups",
                        XPCORR, "ingest", run], capture_output=True, text=True, timeout=30)
    lines = [l for l in p.stderr.splitlines() if l]
    check(one_error(p.returncode, lines, os.path.join(run, "xpcorr.db")),
          "run directory of another user: exit 1, one line naming the database (%s %s)" %
          (p.returncode, lines))


RACER = r"""
import os, sys, time
run, target, pidfile, until = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
while time.time() < until:
    # the old temporary name, xpcorr.db.tmp-PID, of the ingest about to start
    try:
        name = os.path.join(run, "xpcorr.db.tmp-" + open(pidfile).read().strip())
    except OSError:
        continue
    for _ in range(300):
        try:
            os.symlink(target, name)
        except OSError:
            pass
    # and any temporary file that shows up: replaced by a link
    for n in os.listdir(run):
        p = os.path.join(run, n)
        if n.startswith("xpcorr.db.tmp-") and not os.path.islink(p):
            try:
                os.unlink(p)
                os.symlink(target, p)
            except OSError:
                pass
"""


def root_ingest(tmp):
    """Root ingests and reads a run directory that belongs to a user who
    plants links where the database and its temporary file go, in a loop
    of a few seconds as an attacker would: nothing is created outside the
    run, nothing root-owned inside it; a directory others may write into is
    refused unless --trust-run-dir."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        print("SKIP part: root ingesting a user's run needs root and setpriv (only this part)")
        return
    import time
    os.chmod(tmp, 0o755)
    rootonly = os.path.join(tmp, "rootonly")
    os.mkdir(rootonly, 0o755)
    pwned = os.path.join(rootonly, "PWNED")
    victim = os.path.join(tmp, "victim")
    with open(victim, "w") as f:
        f.write("untouched\n")
    run = fresh(tmp, "users")
    os.symlink(victim, os.path.join(run, "xpcorr.db"))
    for f in [run] + [os.path.join(run, n) for n in os.listdir(run)]:
        os.lchown(f, 65534, 65534)
    pidfile = os.path.join(tmp, "ingest.pid")
    open(pidfile, "w").close()
    os.chmod(pidfile, 0o644)
    until = time.time() + 3
    racer = subprocess.Popen(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                              sys.executable, "-c", RACER, run, pwned, pidfile, str(until)])
    bad, runs = [], 0
    try:
        while time.time() < until:
            cmd = "echo $$ > %s; sleep 0.02; exec %s %s %s >/dev/null" % (
                pidfile, XPCORR, "ingest --quiet" if runs % 2 else "info", run)
            p = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, timeout=30,
                               errors="replace")
            lines = [l for l in p.stderr.splitlines() if l]
            runs += 1
            if not well_formed(p.returncode, lines):
                bad.append((p.returncode, lines[-2:]))
    finally:
        racer.wait(timeout=30)
    check(not os.path.lexists(pwned), "%d ingests and infos racing a user's links: nothing "
          "created outside the run directory" % runs)
    check(open(victim).read() == "untouched\n", "the file a planted xpcorr.db link names is untouched")
    check(not bad, "each ended 0 or 1 with xpcorr's own lines (%s)" % bad[:3])
    rc, lines = ingest(run)
    st = os.lstat(os.path.join(run, "xpcorr.db"))
    check(rc == 0 and stat.S_ISREG(st.st_mode) and st.st_uid == 65534,
          "then root's ingest makes xpcorr.db, owned by the run's owner (%s %s uid %d)" %
          (rc, lines, st.st_uid))
    rooted = [n for n in os.listdir(run) if os.lstat(os.path.join(run, n)).st_uid == 0]
    check(not rooted, "no root-owned file in the user's run directory (%s)" % rooted)

    # a run directory that others may write into: refused as root, said in
    # one line with what to do, unless trusted
    for mode, group, who in ((0o777, 65534, "every user"), (0o775, 0, "group root")):
        run = fresh(tmp, "shared-%o-%d" % (mode, group))
        for f in [run] + [os.path.join(run, n) for n in os.listdir(run)]:
            os.chown(f, 65534, group)
        os.chmod(run, mode)
        rc, lines = ingest(run)
        check(rc == 1 and len(lines) == 1 and who in lines[0] and "--trust-run-dir" in lines[0]
              and not any(n.startswith("xpcorr.db") for n in os.listdir(run)),
              "as root, a run directory %s may write into is refused (%s %s)" % (who, rc, lines))
        p = subprocess.run([XPCORR, "info", run], capture_output=True, text=True, timeout=30)
        check(p.returncode == 1 and "--trust-run-dir" in p.stderr,
              "info says the same (%s %s)" % (p.returncode, p.stderr.strip()))
        rc, lines = ingest(run, "--trust-run-dir")
        st = os.stat(os.path.join(run, "xpcorr.db"))
        check(rc == 0 and st.st_uid == 65534, "--trust-run-dir ingests it, as its owner (%s %s)"
              % (rc, lines))


def disk_full(tmp):
    if os.geteuid() != 0:
        print("SKIP part: a full disk during ingest needs root to mount a tmpfs (only this part)")
        return
    disk = os.path.join(tmp, "disk")
    os.mkdir(disk)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", disk]).returncode:
        check(False, "mount a 256 KiB tmpfs")
        return
    try:
        run = os.path.join(disk, "run")
        os.mkdir(run)
        for f in ("cpu.xpr", "meta.json"):
            shutil.copy(os.path.join(FIXTURE, f), run)
        rc, lines = ingest(run)
        check(one_error(rc, lines, "cannot write " + os.path.join(run, "xpcorr.db")) and
              sorted(os.listdir(run)) == ["cpu.xpr", "meta.json"],
              "disk full during ingest: exit 1, one line naming the database, no temporary "
              "file left (%s %s %s)" % (rc, lines, os.listdir(run)))
    finally:
        subprocess.run(["umount", disk])
    stale_on_full_disk(tmp, disk)


def stale_on_full_disk(tmp, disk):
    # issue 29: a reader that must ingest again (the database is older than
    # the run) on a full disk read nothing; as in a read-only directory, it
    # reads the older database, with one warning that says why
    old = fresh(tmp, "older")
    rc, _ = ingest(old)
    size = sum(os.path.getsize(os.path.join(old, f)) for f in os.listdir(old))
    if rc != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%d" % (size + (64 << 10)),
                                  "tmpfs", disk]).returncode:
        check(False, "an ingested copy of the fixture on a tmpfs of its size (%s)" % rc)
        return
    try:
        run = os.path.join(disk, "run")
        shutil.copytree(old, run)
        db = os.path.join(run, "xpcorr.db")
        os.utime(db, (1, 1))            # older than every input: stale
        before = open(db, "rb").read()
        fd = os.open(os.path.join(disk, "filler"), os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while os.write(fd, bytes(4096)):
                pass
        except OSError:
            pass
        os.close(fd)
        p = subprocess.run([XPCORR, "info", run], capture_output=True, text=True, timeout=60)
        lines = [l for l in p.stderr.splitlines() if l]
        check(p.returncode == 0 and "samples" in p.stdout and len(lines) == 1 and
              "xpcorr.db is older than the run, which cannot be ingested again here" in lines[0]
              and ("full" in lines[0] or "No space" in lines[0]) and
              open(db, "rb").read() == before and
              not [f for f in os.listdir(run) if f.startswith("xpcorr.db.tmp")],
              "a stale database on a full disk: info reads it, one warning saying why, no"
              " temporary file left (%s %s %s)" % (p.returncode, lines, os.listdir(run)))
    finally:
        subprocess.run(["umount", disk])


def wait_for_tmp(run, p, limit=60):
    """Waits until the ingest p has its temporary database in run: True,
    or False when p ended first."""
    end = time.monotonic() + limit
    while time.monotonic() < end and p.poll() is None:
        if any(f.startswith("xpcorr.db.tmp") for f in os.listdir(run)):
            return True
        time.sleep(0.01)
    return False


def signals_during_ingest(tmp):
    # issue 29: SIGHUP, SIGPIPE or SIGUSR1 during an ingest ended it at once
    # and left its temporary database behind; like SIGINT and SIGTERM they
    # stop the load, the file is removed and the previous database stays
    if not GEN_RUN:
        print("SKIP part: signals during ingest need gen-run (XP_GEN_RUN)")
        return
    run = os.path.join(tmp, "signals")
    subprocess.run([GEN_RUN, "bench", os.environ["XP_FIXTURE_EXE"], os.environ["XP_FIXTURE_LIB"],
                    run, "400000", "29"], check=True)
    rc, _ = ingest(run)
    db = os.path.join(run, "xpcorr.db")
    check(rc == 0, "the 400k-sample run ingests (%s)" % rc)
    before = os.stat(db)
    for sig in (signal.SIGHUP, signal.SIGPIPE, signal.SIGUSR1):
        p = subprocess.Popen([XPCORR, "ingest", "--quiet", run], stderr=subprocess.PIPE, text=True,
                             preexec_fn=default_signals)
        started = wait_for_tmp(run, p)
        p.send_signal(sig)
        err = p.communicate(timeout=60)[1].splitlines()
        left = [f for f in os.listdir(run) if f.startswith("xpcorr.db.tmp")]
        after = os.stat(db)
        check(started and p.returncode == 1 and not left and
              (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns) and
              len(err) == 1 and "interrupted" in err[0],
              "%s during ingest: exit 1, one line, no temporary file left, the previous"
              " database kept (%s %s %s)" % (sig.name, p.returncode, err, left))
    # a reader ingesting a stale run removes its temporary file, then ends by
    # the signal as it would have
    os.utime(db, (1, 1))
    before = os.stat(db)
    p = subprocess.Popen([XPCORR, "info", run], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, preexec_fn=default_signals)
    started = wait_for_tmp(run, p)
    p.send_signal(signal.SIGHUP)
    p.wait(timeout=60)
    left = [f for f in os.listdir(run) if f.startswith("xpcorr.db.tmp")]
    check(started and p.returncode == -signal.SIGHUP and not left and
          os.stat(db).st_ino == before.st_ino,
          "SIGHUP during info's ingest: ended by SIGHUP, no temporary file left (%s %s)" % (
              p.returncode, left))
    # under nohup (SIGHUP ignored) a hangup does not stop the ingest
    p = subprocess.Popen([XPCORR, "ingest", "--quiet", run], stderr=subprocess.PIPE, text=True,
                         preexec_fn=as_under_nohup)
    started = wait_for_tmp(run, p)
    p.send_signal(signal.SIGHUP)
    err = p.communicate(timeout=120)[1].splitlines()
    left = [f for f in os.listdir(run) if f.startswith("xpcorr.db.tmp")]
    check(started and p.returncode == 0 and not left and not any("interrupted" in l for l in err) and
          os.stat(db).st_ino != before.st_ino,
          "SIGHUP ignored (nohup) during ingest: the ingest goes on, exit 0, the new database"
          " in place (%s %s %s)" % (p.returncode, err, left))


def default_signals():
    """In the child: the ending signals at their defaults, whatever the test
    runner inherited (nohup ignores SIGHUP)."""
    for sig in (signal.SIGHUP, signal.SIGPIPE, signal.SIGUSR1):
        signal.signal(sig, signal.SIG_DFL)


def as_under_nohup():
    """In the child: the ending signals at their defaults but SIGHUP ignored,
    as nohup starts a command."""
    default_signals()
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


def killed(tmp):
    # a GPU stream without the library's clean-end status (the process was
    # SIGKILLed): everything ingests, and info says what could not be flushed
    run = fresh(tmp, "killed")
    gpu = [f for f in RUN_FILES if f.startswith("gpu-")][0]
    path = os.path.join(run, gpu)
    data = open(path, "rb").read()
    end = [o for o in record_offsets(path) if int.from_bytes(data[o:o + 4], "little") == 36
           and int.from_bytes(data[o + 16:o + 20], "little") == 6]   # gpu_status, STOPPED
    check(len(end) == 1, "the fixture's %s ends with a clean-end status" % gpu)
    with open(path, "r+b") as f:
        f.truncate(end[0])
    rc, lines = ingest(run)
    check(rc == 0 and len(lines) == 1 and gpu + ": no clean end" in lines[0] and "500 ms" in lines[0],
          "a stream cut where a SIGKILL leaves it: exit 0, one warning naming the file (%s %s)"
          % (rc, lines))
    p = subprocess.run([XPCORR, "info", run], capture_output=True, text=True)
    check(p.returncode == 0 and "no clean end" in p.stdout, "info says what could not be flushed")


# ---- hostile runs written record by record (runfmt.h) ----

def stream_header():
    # magic, version 1, header 40 bytes, CPU stream, CLOCK_MONOTONIC, pid, flags, created
    return b"XPCAPRAW" + struct.pack("<IIIIIIQ", 1, 40, 1, 1, 0, 0, 0)


def record(rtype, body):
    body += bytes((-(8 + len(body))) % 8)
    return struct.pack("<II", rtype, 8 + len(body)) + body


def sample(ts, pid, uips, kips=()):
    return record(1, struct.pack("<QIIII16sHHI", ts, pid, pid, 0, 1000000, b"hostile",
                                 len(uips), len(kips), 0) +
                  b"".join(struct.pack("<Q", ip) for ip in list(kips) + list(uips)))


def mmap(ts, pid, addr, length, path):
    p = path.encode() if isinstance(path, str) else path
    return record(6, struct.pack("<QIIQQQIIB20sBH", ts, pid, pid, addr, length, 0, 5, 0, 0,
                                 bytes(20), 0, len(p)) + p + b"\0")


def db_rows(run, sql):
    p = subprocess.run(["sqlite3", os.path.join(run, "xpcorr.db"), sql], capture_output=True)
    return p.stdout.decode("utf-8", "replace").split("\n")[:-1]


def peak_rss_of(args, timeout=60):
    """Exit status, stderr lines and peak RSS (MiB) of args, measured in a
    child python of its own (RUSAGE_CHILDREN there counts only this one)."""
    code = ("import resource, subprocess, sys\n"
            "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
            "sys.stderr.buffer.write(p.stderr)\n"
            "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)\n")
    try:
        p = subprocess.run([sys.executable, "-c", code] + list(args), capture_output=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", [], 0
    rc, rss = p.stdout.split()
    return int(rc), [l for l in p.stderr.decode(errors="replace").splitlines() if l], int(rss)


def launch_streams(tmp):
    # launch-PID.xpr is one process's launch stacks, not the run: a link,
    # a FIFO or a directory there is a warning (man 5 xpcap-run), no hang
    for what, make in (("link", lambda p: os.symlink(os.path.join(FIXTURE, "cpu.xpr"), p)),
                       ("FIFO", os.mkfifo), ("directory", os.mkdir)):
        run = fresh(tmp, "launch-" + what)
        path = os.path.join(run, "launch-434.xpr")
        make(path)
        rc, lines = ingest(run)
        check(rc == 0 and well_formed(rc, lines) and len(lines) == 1 and path in lines[0]
              and "skipped" in lines[0],
              "launch-434.xpr is a %s: exit 0, one warning naming it (%s %s)" % (what, rc, lines))
        rc, lines = ingest(run, "--strict")
        check(one_error(rc, lines, path), "launch-434.xpr is a %s, --strict: exit 1, one line (%s %s)"
              % (what, rc, lines))


def launch(ts, corr, flags, regs=b""):
    # struct xp_launch (pid 434, no IPs), then what its flags say follows
    return record(7, struct.pack("<QQIIIIHHI", ts, corr, 434, 434, 0, 211, 0, 0, flags) + regs)


def borrowed_stacks(tmp):
    # a launch naming a stack key no copy ever stood for, a copy claiming
    # key 0, and a borrowed launch cut before its registers: the first is
    # counted as missing (no native frames), the second keeps nothing,
    # the third is a damaged record; the run still loads
    run = fresh(tmp, "borrowed")
    regs = lambda size, key: struct.pack("<QQQII", 0x1000, 0x7ff0000, 0, size, key)
    with open(os.path.join(run, "launch-434.xpr"), "wb") as f:
        f.write(stream_header() + launch(1000, 1, 8 | 64, regs(0, 99)) +
                launch(2000, 2, 8 | 32, regs(8, 0) + bytes(8)) + launch(3000, 3, 8 | 64))
    rc, lines = ingest(run)
    check(rc == 0 and well_formed(rc, lines),
          "launch stacks naming unknown keys: exit 0, well-formed warnings (%s %s)" % (rc, lines))
    facts = dict(r.split("|") for r in db_rows(
        run, "SELECT name, value FROM META_DATA_EXPORT WHERE name IN ('xp.launches_borrowed',"
             " 'xp.borrowed_missing', 'xp.stack_checks')"))
    check(facts == {"xp.launches_borrowed": "1", "xp.borrowed_missing": "1",
                    "xp.stack_checks": "0"},
          "an unknown key is counted as missing, key 0 keeps nothing (%s)" % facts)


def bomb_block(tmp):
    """A zstd block of 64 MiB of identical samples (1M of them) in a few KiB."""
    raw = os.path.join(tmp, "bomb.raw")
    with open(raw, "wb") as f:
        f.write(sample(1000, 1, [0x401000]) * ((64 << 20) // 64))
    frame = subprocess.run(["zstd", "-q", "-c", "-3", raw], capture_output=True, check=True).stdout
    os.unlink(raw)
    return record(97, struct.pack("<QII", 64 << 20, len(frame), 0) + frame)


def zstd_bomb(tmp):
    if not shutil.which("zstd"):
        print("SKIP part: the zstd bomb needs the zstd program to compress it (only this part)")
        return
    run = os.path.join(tmp, "bomb")
    os.mkdir(run)
    shutil.copy(os.path.join(FIXTURE, "meta.json"), run)
    # 64 MiB of identical samples in one frame of a few KiB, six times:
    # 6.3M samples from 35 KB on disk
    block = bomb_block(tmp)
    path = os.path.join(run, "cpu.xpr")
    with open(path, "wb") as f:
        f.write(stream_header() + block * 6)
    second = 40 + len(block)
    rc, lines = ingest(run)
    samples = db_rows(run, "SELECT count(*) FROM xp_samples") if rc == 0 else ["?"]
    check(rc == 0 and well_formed(rc, lines) and
          any(path + " at offset %d: " % second in l and "budget" in l and "--max-expand" in l
              for l in lines) and samples == [str(1 << 20)],
          "zstd bomb (%d bytes, 6 x 64 MiB): exit 0, cut at its second block with a warning"
          " naming the budget, the first block's %d samples kept (%s %s %s)" % (
              os.path.getsize(path), 1 << 20, rc, lines, samples))
    rc, lines = ingest(run, "--strict")
    check(one_error(rc, lines, path, second) and "budget" in lines[0],
          "zstd bomb --strict: exit 1, one line at offset %d (%s %s)" % (second, rc, lines))
    # a smaller budget of records for the whole run: --max-records
    rc, lines = ingest(run, "--max-records", "1000")
    samples = db_rows(run, "SELECT count(*) FROM xp_samples") if rc == 0 else ["?"]
    check(rc == 0 and samples == ["1000"] and any("--max-records" in l for l in lines),
          "--max-records 1000: 1000 samples kept, a warning (%s %s %s)" % (rc, lines, samples))


def many_small_bombs(tmp):
    # issue 29: the budget was per stream, and each stream's first 64 MiB
    # and million records were free: 11 small streams gave 11.5M rows. The
    # budget is the run's: the first stream's block takes what is free, the
    # next stream is cut at its block, and the warning says which limit
    # stopped it and how to raise it.
    if not shutil.which("zstd"):
        print("SKIP part: the streams' bombs need the zstd program (only this part)")
        return
    run = os.path.join(tmp, "bombs")
    os.mkdir(run)
    shutil.copy(os.path.join(FIXTURE, "meta.json"), run)
    block = bomb_block(tmp)
    names = ["cpu.xpr"] + ["more-%02d.xpr" % i for i in range(1, 11)]
    for name in names:
        with open(os.path.join(run, name), "wb") as f:
            f.write(stream_header() + block)
    size = sum(os.path.getsize(os.path.join(run, n)) for n in names)
    rc, lines = ingest(run)
    samples = db_rows(run, "SELECT count(*) FROM xp_samples") if rc == 0 else ["?"]
    # the first 8 warnings on stderr, all of them in the database
    cut = db_rows(run, "SELECT file || ' ' || offset || ' ' || message FROM xp_warnings"
                       " WHERE message LIKE '%budget%'") if rc == 0 else []
    check(rc == 0 and well_formed(rc, lines) and samples == [str(1 << 20)] and
          len(cut) == 10 and all(l.startswith("more-") and " 40 " in l and
                                 "the run's budget" in l and "--max-expand" in l for l in cut),
          "11 streams of one 64 MiB bomb block each (%d bytes): exit 0, the first stream's %d"
          " samples kept, the 10 others cut at their block with the run's budget named"
          " (%s %s %s)" % (size, 1 << 20, rc, samples, lines[:2]))
    # the records limit is named as such
    rc, lines = ingest(run, "--max-records", "5000")
    check(rc == 0 and any("cpu.xpr at offset 40: " in l and "5000 records" in l and
                          "--max-records" in l for l in lines),
          "--max-records 5000 over 11 streams: the warning names that limit (%s %s)" % (
              rc, lines[:2]))


def splitmix_inverse(x):
    """The inverse of xp_hash64 as it was (src/u64map.h): splitmix64's
    finalizer, unkeyed, which the maps used as their slot hash."""
    m = (1 << 64) - 1

    def unshift(x, s):
        y = x
        for _ in range(64 // s + 1):
            y = x ^ (y >> s)
        return y
    x = unshift(x, 31) * pow(0x94d049bb133111eb, -1, 1 << 64) & m
    x = unshift(x, 27) * pow(0xbf58476d1ce4e5b9, -1, 1 << 64) & m
    return unshift(x, 30)


def code_objects_run(tmp, name, code_ids):
    """A run whose launch stream holds one Python code object per id."""
    run = os.path.join(tmp, name)
    os.mkdir(run)
    shutil.copy(os.path.join(FIXTURE, "meta.json"), run)
    with open(os.path.join(run, "cpu.xpr"), "wb") as f:
        f.write(stream_header())
    body = b"a.py" + b"f" + bytes((0x80,))
    with open(os.path.join(run, "launch-434.xpr"), "wb") as f:
        f.write(stream_header() + b"".join(
            record(10, struct.pack("<QIIHHHHII", k, 434, 1, 0x030c, 4, 1, 0, 1, 0) + body)
            for k in code_ids))
    return run


def colliding_keys(tmp):
    # issue 29: code object ids chosen so that the old unkeyed slot hash,
    # splitmix(pid ^ splitmix(id)), puts all of them in slot 0 of any table
    # up to 2^24 slots made every insert probe all the others: quadratic
    # (200k: 29 s). Keyed per process, they cost what random ids cost. The
    # same number of random ids is the yardstick: a ratio, not a time.
    n = 40000
    crafted = [splitmix_inverse(splitmix_inverse(i << 24) ^ 434) for i in range(1, n + 1)]
    rng = random.Random(29)
    runs = {"crafted": code_objects_run(tmp, "collide", crafted),
            "random": code_objects_run(tmp, "collide-random",
                                       [rng.getrandbits(64) for _ in range(n)])}
    took = {}
    for what, run in runs.items():
        best = None
        for _ in range(3):          # the best of three: other work shares the cores
            start = time.monotonic()
            rc, lines = ingest(run)
            t = time.monotonic() - start
            best = t if best is None or t < best else best
        codes = db_rows(run, "SELECT code_records FROM xp_python_processes")
        took[what] = best
        check(rc == 0 and codes == [str(n)],
              "%s code object ids: %d stored (%s %s %s)" % (what, n, rc, lines[:2], codes))
    ratio = took["crafted"] / took["random"]
    check(ratio < 5, "%d code object ids that collided in the old hash ingest in %.2f s, %d random"
          " ones in %.2f s: ratio %.1f (bound 5; the old hash: 50x)" % (
              n, took["crafted"], n, took["random"], ratio))


def linked_perf_maps(tmp):
    # one big perf map hard-linked under 16 pids: parsed once, not 16 times
    run = os.path.join(tmp, "perfmap-links")
    os.mkdir(run)
    shutil.copy(os.path.join(FIXTURE, "meta.json"), run)
    base, lines = 0x7f0000000000, 400000
    big = os.path.join(run, "perf-5000.map")
    with open(big, "w") as f:
        f.writelines("%x 40 py::function_number_%d_with_a_long_name:some/module/path.py\n"
                     % (base + 0x40 * i, i) for i in range(lines))
    pids = range(5000, 5016)
    for pid in pids[1:]:
        os.link(big, os.path.join(run, "perf-%d.map" % pid))
    with open(os.path.join(run, "cpu.xpr"), "wb") as f:
        f.write(stream_header() + b"".join(sample(1000 + pid, pid, [base + 0x40 * 7 + 1])
                                           for pid in pids))
    rc, errs, rss = peak_rss_of([XPCORR, "ingest", "--quiet", run])
    names = db_rows(run, "SELECT count(DISTINCT s.pid) FROM xp_samples s JOIN xp_stacks k ON"
                    " k.id = s.stack_id JOIN xp_frames fr ON fr.id = k.frame JOIN StringIds n"
                    " ON n.id = fr.symbol WHERE n.value LIKE 'py::function_number_7_%'")
    check(rc == 0 and not errs and names == [str(len(pids))],
          "a perf map hard-linked under %d pids: every pid's JIT frame named (%s %s %s)"
          % (len(pids), rc, errs, names))
    check(rc == 0 and rss < 200,
          "a perf map of %.0f MB hard-linked under %d pids: peak RSS %d MiB (bound 200: parsed once)"
          % (os.path.getsize(big) / 1e6, len(pids), rss))


def cut_kallsyms(tmp):
    if not GEN_RUN:
        print("SKIP part: kallsyms, UTF-8 and module-path cases need XP_GEN_RUN and the"
              " fixture (run through meson test)")
        return
    text = open(os.path.join(golden(tmp), "kallsyms"), "rb").read()
    cut = text.index(b"T futex_wait") + 4               # "ffffffff81003000 T fu"
    whole = text.index(b"\n", text.index(b"__x64_sys_futex")) + 1
    for what, size, meta_bytes in (("cut in a line", cut, None),
                                   ("shorter than meta.json's kallsyms_bytes", whole, len(text))):
        run = golden(tmp)
        with open(os.path.join(run, "kallsyms"), "r+b") as f:
            f.truncate(size)
        if meta_bytes is not None:
            meta = json.load(open(os.path.join(run, "meta.json")))
            meta["kallsyms_bytes"] = meta_bytes
            json.dump(meta, open(os.path.join(run, "meta.json"), "w"))
        rc, lines = ingest(run)
        lines = [l for l in lines if "do not parse" not in l]     # the golden run's own
        kernel = set(db_rows(run, "SELECT n.value FROM xp_frames f JOIN StringIds n ON"
                             " n.id = f.symbol WHERE f.kind IN (1, 4)"))
        check(rc == 0 and any("kallsyms: truncated" in l for l in lines) and
              "0xffffffff81004008" in kernel and "0xffffffffc0100100" in kernel and
              "fu" not in kernel and "do_syscall_64" in kernel,
              "kallsyms %s: exit 0, a warning; kernel addresses past its last symbol stay"
              " addresses, those before keep their names (%s %s %s)" % (what, rc, lines,
                                                                      sorted(kernel)))


def bad_utf8(tmp):
    if not GEN_RUN:
        return
    run = golden(tmp)
    pm = os.path.join(run, "perf-2000.map")
    text = open(pm, "rb").read().replace(b"py::step:model.py", b"py::st\xffep<\x01>:m\xc0\xafodel.py")
    open(pm, "wb").write(text.replace(b"py::train", b"py::tr\xed\xa0\x80ain\xe2\x82"))
    ks = os.path.join(run, "kallsyms")
    open(ks, "wb").write(open(ks, "rb").read().replace(b"T schedule", b"T sch\xfe\xffedule"))
    rc, lines = ingest(run)
    lines = [l for l in lines if "do not parse" not in l]     # the golden run's own
    check(rc == 0 and not lines, "names that are not UTF-8: ingest exit 0 (%s %s)" % (rc, lines))
    out = {}
    for name, args in (("svg", ["export", "--format", "svg"]),
                       ("chrome", ["export", "--format", "chrome"]),
                       ("csv", ["report", "--format", "csv"]),
                       ("json", ["report", "--format", "json", "--by", "stack"]),
                       ("folded", ["export", "--format", "folded"])):
        p = subprocess.run([XPCORR] + args + [run], capture_output=True, timeout=60)
        out[name] = p.stdout
        check(p.returncode == 0, "%s of a run with names that are not UTF-8: exit 0 (%s)"
              % (name, p.stderr[-300:]))
    try:
        ET.fromstring(out["svg"])
        svg_ok = b"py::st\xef\xbf\xbdep" in out["svg"]
    except ET.ParseError as e:
        svg_ok = "not well-formed: %s" % e
    check(svg_ok is True, "the SVG is well-formed XML, U+FFFD for bad bytes (%s)" % svg_ok)
    for name in ("chrome", "json"):
        try:
            json.loads(out[name].decode("utf-8"))
            ok = True
        except (UnicodeDecodeError, ValueError) as e:
            ok = str(e)[:200]
        check(ok is True, "%s output is valid JSON in UTF-8 (%s)" % (name, ok))
    for name in ("csv", "folded"):
        try:
            out[name].decode("utf-8")
            ok = True
        except UnicodeDecodeError as e:
            ok = str(e)[:200]
        check(ok is True and (name == "csv" or b"\xef\xbf\xbd" in out[name]),
              "%s output is UTF-8, U+FFFD for bad bytes (%s)" % (name, ok))


def inotify_opens(paths):
    """A function that returns how many times paths were opened since."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    for p in paths:
        if libc.inotify_add_watch(fd, p.encode(), 0x20) < 0:      # IN_OPEN
            raise OSError(ctypes.get_errno(), "inotify_add_watch " + p)

    def count():
        n = 0
        try:
            while True:
                data = os.read(fd, 65536)
                at = 0
                while at < len(data):
                    _, mask, _, length = struct.unpack_from("<iIII", data, at)
                    n += bool(mask & 0x20)
                    at += 16 + length
        except BlockingIOError:
            pass
        os.close(fd)
        return n
    return count


def device_modules(tmp):
    if not GEN_RUN:
        return
    # mappings whose path names a FIFO and a tty: their samples symbolize
    # as module+offset, and neither file is ever opened (not even O_NONBLOCK)
    run = golden(tmp)
    fifo = os.path.join(tmp, "libfifo.so")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    paths = [fifo] + (["/dev/tty"] if os.path.exists("/dev/tty") else [])
    recs = b""
    for i, p in enumerate(paths):
        pid, addr = 4000 + i, 0x7e5500000000
        recs += mmap(1000000000, pid, addr, 0x10000, p) + sample(1000000100, pid, [addr + 0x123])
    open(os.path.join(run, "extra.xpr"), "wb").write(stream_header() + recs)
    opened = inotify_opens(paths)
    rc, lines = ingest(run)
    n = opened()
    lines = [l for l in lines if "do not parse" not in l]     # the golden run's own
    frames = db_rows(run, "SELECT n.value FROM xp_frames f JOIN StringIds n ON n.id = f.symbol"
                          " WHERE n.value LIKE '%+0x123'")
    check(rc == 0 and not lines and n == 0 and len(frames) == len(paths),
          "module paths naming %s: exit 0 in time, never opened (%d opens), frames module+offset"
          " (%s %s %s)" % (" and ".join(paths), n, rc, lines, frames))


def golden(tmp):
    """A fresh copy of the synthetic golden run (kallsyms, perf map, mappings
    of the real fixture ELF files)."""
    golden.n = getattr(golden, "n", 0) + 1
    run = os.path.join(tmp, "golden%d" % golden.n)
    subprocess.run([GEN_RUN, "golden", os.environ["XP_FIXTURE_EXE"],
                    os.environ["XP_FIXTURE_LIB"], run], check=True)
    return run


def main():
    tmp = tempfile.mkdtemp(prefix="xp-badinput-")
    try:
        rc, lines = ingest(fresh(tmp, "intact"))
        check(rc == 0 and not lines, "the intact fixture ingests cleanly (%s %s)" % (rc, lines))
        streams(tmp)
        files(tmp)
        other_user(tmp)
        root_ingest(tmp)
        disk_full(tmp)
        signals_during_ingest(tmp)
        killed(tmp)
        launch_streams(tmp)
        borrowed_stacks(tmp)
        zstd_bomb(tmp)
        many_small_bombs(tmp)
        colliding_keys(tmp)
        linked_perf_maps(tmp)
        cut_kallsyms(tmp)
        bad_utf8(tmp)
        device_modules(tmp)
        flips(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
    check(peak < 1024, "peak memory of any ingest: %d MiB (bound 1024)" % peak)
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
