#!/usr/bin/env python3
"""db-race.py - every reader of a run's database (report, export, info,
diff, merge, ls) while its owner swaps the database for a FIFO, a link or a
directory, or the run directory for another, between the reader's check
and its open (swaprace.py). A reader that opens the name again after its
check blocks for ever in the open of a FIFO, or fails with SQLite's
"unable to open database file". Each run of a command must end within its
timeout: it reads the database, or refuses in one line that names the file
and says what is there; never a hang, never SQLite's bare message.

    db-race.py XPCORR GEN_RUN FIXTURE_EXE FIXTURE_LIB
"""
import os
import shutil
import subprocess
import sys
import tempfile

import swaprace

XPCORR, GEN_RUN, EXE, LIB = sys.argv[1:5]
SANITIZED = os.environ.get("XP_SANITIZE", "none") not in ("", "none")
TIMEOUT = 30 if SANITIZED else 10
SECONDS = 2.5 if SANITIZED else 1.2     # each case: the command again and again
CLEAR = ("is a FIFO", "is a symbolic link", "is a directory", "replaced while being opened",
         "moved while being opened")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def xpcorr(*args, timeout):
    """(exit status or 'timeout', stderr lines)."""
    try:
        p = subprocess.run([XPCORR, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", []
    return p.returncode, [l for l in p.stderr.decode("utf-8", "replace").splitlines() if l]


def sound(outcome, named):
    """None, or what is wrong with one run's end."""
    rc, err = outcome
    if rc == "timeout":
        return "no end within %d s" % TIMEOUT
    if any("Sanitizer" in l or "runtime error" in l for l in err):
        return "sanitizer: %s" % err[:3]
    if rc == 0:
        return None if all(l.startswith("xpcorr") for l in err) else "exit 0 with %s" % err[:2]
    if len(err) != 1 or not err[0].startswith("xpcorr"):
        return "exit %s, not one line: %s" % (rc, err[:3])
    if named not in err[0] or not any(c in err[0] for c in CLEAR):
        return "exit %s, unclear: %s" % (rc, err[0])
    return None


def race(what, args, named, path, other):
    with swaprace.swapping(path, other):
        outcomes = swaprace.repeat(lambda t: xpcorr(*args, timeout=t), SECONDS, TIMEOUT)
    bad = sorted((b for b in (sound(o, named) for o in outcomes) if b),
                 key=lambda b: not b.startswith("no end"))      # a hang first
    ends = sorted({str(rc) for rc, _ in outcomes})
    check(not bad, "%s: %d runs, exits %s%s" % (what, len(outcomes), ends,
                                               ": " + bad[0] if bad else ""))


def commands(target, good, out):
    return {
        "report": ["report", target],
        "export": ["export", "--format", "folded", target],
        "info": ["info", target],
        "diff": ["diff", target, good],
        "merge": ["merge", "-q", "--force", "-o", out, target],
        "ls": ["ls", target],
    }


def main():
    with tempfile.TemporaryDirectory(prefix="db-race-") as tmp:
        run = os.path.join(tmp, "run")
        subprocess.run([GEN_RUN, "scale", EXE, LIB, run, "2000"], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run([XPCORR, "ingest", "--quiet", run], check=True)
        # directories of a database alone (a merged job's form): nothing
        # to ingest again, each open is of the file swapped
        good, job = os.path.join(tmp, "good"), os.path.join(tmp, "job")
        for d in (good, job):
            os.mkdir(d)
            shutil.copy(os.path.join(run, "xpcorr.db"), d)
        db = os.path.join(job, "xpcorr.db")
        out = os.path.join(tmp, "merged")
        rc, err = xpcorr("report", job, timeout=TIMEOUT)
        check(rc == 0 and not err, "the job as it is: exit %s %s" % (rc, err[:2]))

        fifo, link, folder = (os.path.join(tmp, n) for n in ("fifo", "link", "folder"))
        os.mkfifo(fifo)
        os.symlink(os.path.join(good, "xpcorr.db"), link)    # what it leads to is fine
        os.mkdir(folder)
        for kind, other in (("FIFO", fifo), ("link", link), ("directory", folder)):
            for name, args in commands(job, good, out).items():
                race("%s, xpcorr.db swapped with a %s" % (name, kind), args, db, db, other)
        # the run directory itself swapped with one whose database is a FIFO
        evil = os.path.join(tmp, "evil")
        os.mkdir(evil)
        os.mkfifo(os.path.join(evil, "xpcorr.db"))
        for name, args in commands(job, good, out).items():
            race("%s, the run directory swapped" % name, args, job, job, evil)
        # a database named on the command line
        for name in ("report", "diff"):
            args = commands(db, os.path.join(good, "xpcorr.db"), out)[name]
            race("%s of a .db, swapped with a FIFO" % name, args, db, db, fifo)
    if failures:
        print("%d failures:\n  %s" % (len(failures), "\n  ".join(failures)))
        return 1
    return 0


sys.exit(main())
