#!/usr/bin/env python3
"""security_test.py - `xpcap record` attacked as a hostile sudo user would
(issue 14): xpcap runs as root with SUDO_UID/SUDO_GID of an unprivileged
user (65534, nobody), who owns or races the run directory.

    XPCAP=build/src/bin/xpcap XPCORR=build/src/bin/xpcorr \
    PROGDIR=build/tests/programs MARKERDIR=build/tests/marker \
    python3 tests/record/security_test.py race

race      a link swapped in for the -o directory in a loop while xpcap starts
force     --force on a directory of root's, and on the user's own holding root's files
twice     a second recorder into a directory in use
lowdisk   about 4 KiB free when recording starts
kallsyms  xpcap SIGKILLed while it copies /proc/kallsyms
mapswap   a user maps files without a build id, then swaps each for a FIFO, a
          "FILE (deleted)" FIFO, a link to a root-only ELF, or its directory for
          a link to a root-only one, while root records -a (issue 29 item 1)
Needs root and BPF, like record_test.py (whose helpers it uses).
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from record_test import (QUIET, XPCAP, Failure, check, check_meta_counts,  # noqa: E402
                         detached, dump, meta, mount_tmpfs, one_error_line, prog, record,
                         require_bpf)

USER = 65534
ENV = dict(os.environ, SUDO_UID=str(USER), SUDO_GID=str(USER))
QUICK = ["-q", "--no-gpu", "-F", "99"]


def as_user():
    os.setgroups([])
    os.setgid(USER)
    os.setuid(USER)


def user_dir(path):
    os.mkdir(path, 0o755)
    os.chown(path, USER, USER)
    return path


def root_file(path, text="root's\n", mode=0o600):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
    return path


def tree(top):
    """(path relative to top, uid, mode) of top and everything below it."""
    out = []
    for dirpath, dirs, files in os.walk(top):
        for name in ["."] + dirs + files:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            out.append((os.path.relpath(p, top), st.st_uid, st.st_mode))
    return sorted(out)


def swapper(a, b):
    """A child, as the user, that swaps a and b (RENAME_EXCHANGE) until killed."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    pid = os.fork()
    if pid == 0:
        try:
            as_user()
            a, b = a.encode(), b.encode()
            while True:
                libc.renameat2(-100, a, -100, b, 2)    # AT_FDCWD, RENAME_EXCHANGE
        finally:
            os._exit(1)
    return pid


def t_race(tmp):
    # the user swaps -o between their empty directory and a link to a
    # directory of root's, as fast as the kernel lets them, while xpcap
    # starts again and again: no start may make or take anything of root's
    scratch = os.path.join(tmp, "scratch")
    os.mkdir(scratch, 0o755)
    root_file(os.path.join(scratch, "precious"), mode=0o644)
    before = tree(scratch)
    home = user_dir(os.path.join(tmp, "home"))
    run, link = os.path.join(home, "run"), os.path.join(home, "link")
    user_dir(run)
    os.symlink(scratch, link)
    os.lchown(link, USER, USER)
    attacker = swapper(run, link)
    outcomes = {}
    try:
        t_end = time.monotonic() + 4
        while time.monotonic() < t_end or sum(outcomes.values()) < 4:
            rc, err = record(run, QUICK + ["--force"], ["true"], env=ENV, check_clean=False)
            key = "recorded" if rc == 0 else err.strip().split(": ")[-1][:60]
            outcomes[key] = outcomes.get(key, 0) + 1
            if sum(outcomes.values()) >= 40:
                break
    finally:
        os.kill(attacker, signal.SIGKILL)
        os.waitpid(attacker, 0)
    print("outcomes of %d starts: %s" % (sum(outcomes.values()), outcomes))
    check(detached(), "no BPF program of ours left attached")
    after = tree(scratch)
    check(after == before, "root's directory unchanged: no file made in it, none chowned "
          "(%s)" % [e for e in after if e not in before])
    mine = [e for e in tree(home) if e[1] != USER]
    check(not mine, "everything under the user's home is the user's, nothing root's (%s)" % mine)


def t_force(tmp):
    # a directory of root's that the user may write: refused, untouched
    shared = os.path.join(tmp, "shared")
    os.mkdir(shared)
    os.chmod(shared, 0o777)
    root_file(os.path.join(shared, "notes"))
    root_file(os.path.join(shared, "kallsyms"), "not a kallsyms\n", 0o644)
    before = tree(shared)
    rc, err = record(shared, QUICK + ["--force"], ["true"], env=ENV)
    check(rc == 2 and one_error_line(err) and "belongs to uid 0, not to the invoking user "
          "(uid %d)" % USER in err, "--force on root's shared directory: refused (%d %r)" % (rc, err))
    check(tree(shared) == before, "its files stay root's, as they were")
    # the user's own directory holding root's files: xpcap's own names are
    # replaced (as the user could), the others keep owner and mode
    mine = user_dir(os.path.join(tmp, "mine"))
    root_file(os.path.join(mine, "notes"))
    root_file(os.path.join(mine, "perf-1.map"), "1000 10 f\n", 0o644)
    rc, err = record(mine, QUICK + ["--force"], ["true"], env=ENV)
    check(rc == 0, "--force on the user's directory records (%d %r)" % (rc, err))
    st = os.stat(os.path.join(mine, "notes"))
    check(st.st_uid == 0 and st.st_mode & 0o777 == 0o600, "root's notes stay root's, mode 0600 "
          "(uid %d, %o)" % (st.st_uid, st.st_mode & 0o777))
    check(not os.path.exists(os.path.join(mine, "perf-1.map")), "an old run's perf map removed")
    made = [e for e in tree(mine) if e[0] != "notes"]
    check(all(uid == USER for _, uid, _ in made), "every file the run made is the user's: %s" %
          [(p, uid) for p, uid, _ in made])
    check(meta(mine)["status"] == "complete", "the run is complete")


def t_twice(tmp):
    home = user_dir(os.path.join(tmp, "home"))
    run = os.path.join(home, "run")
    first = subprocess.Popen([XPCAP, "record", "-o", run] + QUICK + ["--", prog("threads"), "3"],
                             env=ENV, **QUIET)
    try:
        for _ in range(200):
            if os.path.exists(os.path.join(run, "kallsyms")):
                break
            time.sleep(0.05)
        check(os.path.exists(os.path.join(run, "kallsyms")), "the first recorder has started")
        files = sorted(os.listdir(run))
        for args in (["--force"], []):
            rc, err = record(run, QUICK + args, ["true"], env=ENV, check_clean=False)
            want = ("xpcap: cannot use %s as run directory: another xpcap (pid %d) is recording "
                    "into it" % (run, first.pid))
            check(rc == 2 and one_error_line(err) and err.strip() == want,
                  "second recorder %s refused: %r" % (" ".join(args), err))
            check(sorted(os.listdir(run)) == files, "the first's files are all there (%s)" %
                  sorted(os.listdir(run)))
        rc = first.wait(timeout=60)
    finally:
        first.kill()
        first.wait()
    check(rc == 0, "the first recorder ends normally (%d)" % rc)
    md = check_meta_counts(run, dump(run))
    check(os.path.getsize(os.path.join(run, "kallsyms")) == md["kallsyms_bytes"],
          "its kallsyms whole (%d bytes)" % md["kallsyms_bytes"])
    # both started at once into a new directory: one records, the other is
    # refused, and the winner's run is whole
    run = os.path.join(home, "together")
    cmd = [XPCAP, "record", "-o", run] + QUICK + ["--", prog("threads"), "1"]
    errs = [tempfile.TemporaryFile(mode="w+") for _ in range(2)]
    ps = [subprocess.Popen(cmd, env=ENV, stdout=subprocess.DEVNULL, stderr=e) for e in errs]
    rcs = [p.wait(timeout=60) for p in ps]
    texts = []
    for e in errs:
        e.seek(0)
        texts.append(e.read())
    print("started together: exits %s, %r" % (rcs, texts))
    check(sorted(rcs) == [0, 2], "one records, the other is refused (%s)" % rcs)
    loser = texts[rcs.index(2)]
    check(one_error_line(loser) and "another xpcap (pid %d) is recording into it" %
          ps[rcs.index(0)].pid in loser, "the refused one names the other (%r)" % loser)
    check_meta_counts(run, dump(run))
    check(detached(), "no BPF program of ours left attached")


def t_lowdisk(tmp):
    # about 4 KiB free once cpu.xpr's header is down: the first meta.json
    # cannot be written, so xpcap stops at once, says why in one line, runs
    # nothing and leaves nothing
    disk = os.path.join(tmp, "disk")
    mount_tmpfs(disk, 8192)
    try:
        os.chmod(disk, 0o777)
        run = os.path.join(disk, "run")
        ran = os.path.join(user_dir(os.path.join(tmp, "home")), "ran")
        rc, err = record(run, ["--no-gpu"], ["sh", "-c", "touch " + ran], env=ENV)
        check(rc == 1 and one_error_line(err) and err.strip() == "xpcap: cannot write %s/meta.json: "
              "No space left on device" % run, "one line naming meta.json and ENOSPC, exit 1 "
              "(%d %r)" % (rc, err))
        check("noted in meta.json" not in err, "no progress line about meta.json")
        check(not os.path.exists(ran), "the command never ran")
        check(os.listdir(disk) == [], "nothing left behind (%s)" % os.listdir(disk))
    finally:
        subprocess.run(["umount", disk])
    # room for the reserved meta.json but not for kallsyms: the run goes on,
    # and what the progress line says is noted in meta.json is there
    disk = os.path.join(tmp, "disk2")
    mount_tmpfs(disk, 512 << 10)
    try:
        os.chmod(disk, 0o777)
        run = os.path.join(disk, "run")
        rc, err = record(run, ["--no-gpu"], ["true"], env=ENV)
        check(rc == 0, "kallsyms does not fit: the run goes on (%d %r)" % (rc, err))
        check("cannot save kallsyms into the run: No space left on device" in err and
              "noted in meta.json" in err, "a line says kallsyms is missing (%r)" % err)
        md = meta(run)
        check(md["status"] == "complete" and md["kallsyms_error"] == "No space left on device" and
              md["kallsyms_bytes"] is None, "meta.json notes it (%s, %s)" %
              (md["kallsyms_error"], md["kallsyms_bytes"]))
        left = [n for n in os.listdir(run) if n.startswith("kallsyms")]
        check(left == [], "no partial kallsyms left (%s)" % left)
    finally:
        subprocess.run(["umount", disk])


def kallsyms_lines():
    with open("/proc/kallsyms", "rb") as f:
        return f.read().count(b"\n")


def t_kallsyms(tmp):
    # SIGKILL while kallsyms is being copied: the run has it whole or not
    # at all, never cut short
    want = kallsyms_lines()
    partial = 0
    for i in range(6):
        run = os.path.join(tmp, "run%d" % i)
        p = subprocess.Popen([XPCAP, "record", "-o", run] + QUICK + ["--", "sleep", "5"], **QUIET)
        names = (os.path.join(run, "kallsyms"), os.path.join(run, "kallsyms.tmp"))
        t_end = time.monotonic() + 30
        while p.poll() is None and time.monotonic() < t_end and \
                not any(os.path.exists(n) for n in names):
            pass
        p.kill()
        p.wait()
        ks = names[0]
        if os.path.exists(ks):
            with open(ks, "rb") as f:
                data = f.read()
            whole = data.endswith(b"\n") and abs(data.count(b"\n") - want) <= 16
            partial += not whole
            print("run %d: kallsyms %d bytes, %d lines (%s)" % (i, len(data), data.count(b"\n"),
                                                                "whole" if whole else "CUT SHORT"))
        else:
            print("run %d: no kallsyms (killed before it was in place)" % i)
    check(detached(), "no BPF program of ours left attached")
    check(partial == 0, "no killed run has a kallsyms cut short (%d)" % partial)
    # a run that ends says how big its kallsyms is, for ingest to check
    run = os.path.join(tmp, "whole")
    rc, err = record(run, QUICK, ["true"])
    md = meta(run)
    check(rc == 0 and md["kallsyms_bytes"] == os.path.getsize(os.path.join(run, "kallsyms")),
          "meta.json kallsyms_bytes is the copy's size (%s)" % md["kallsyms_bytes"])


def build_id_of(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if "Build ID:" in line:
            return line.split("Build ID:")[1].strip()
    raise Failure("no build id in %s" % path)


def mapper(home, secret_dir, ready):
    """A child, as the user, that maps non-ELF files executable and swaps
    each for something root must not open, one of each kind per round,
    keeping the mappings; each round a short-lived child does the same and
    exits at once (its mappings then have only their paths). Until killed."""
    import mmap
    pid = os.fork()
    if pid != 0:
        return pid
    try:
        as_user()
        held = []

        def mapped(path):
            with open(path, "wb") as f:
                f.write(os.urandom(8192))         # no ELF header: no build id
            with open(path, "rb") as f:
                held.append(mmap.mmap(f.fileno(), 8192, mmap.MAP_PRIVATE,
                                      mmap.PROT_READ | mmap.PROT_EXEC))

        def one_round(tag):
            f = os.path.join(home, "fifo-" + tag)
            mapped(f)
            os.mkfifo(f + ".new")
            os.rename(f + ".new", f)
            f = os.path.join(home, "gone-" + tag)
            mapped(f)
            os.unlink(f)
            os.mkfifo(f + " (deleted)")
            f = os.path.join(home, "link-" + tag)
            mapped(f)
            os.symlink(os.path.join(secret_dir, "app"), f + ".new")
            os.rename(f + ".new", f)
            d = os.path.join(home, "dir-" + tag)
            os.mkdir(d)
            mapped(os.path.join(d, "app"))
            os.rename(d, d + ".old")
            os.symlink(secret_dir, d)
        i = 0
        while True:
            one_round("p%d" % i)
            child = os.fork()
            if child == 0:
                one_round("c%d" % i)
                os._exit(0)
            os.waitpid(child, 0)
            if i == 0:
                open(ready, "w").close()
            i += 1
            time.sleep(0.05 if i < 40 else 0.5)
    finally:
        os._exit(1)


def t_mapswap(tmp):
    # issue 29 item 1: root's xpcap used to open such paths plainly, as
    # root: a FIFO hung it for good (SIGINT/SIGTERM ignored, no meta.json),
    # a link gave the user the build id of a file only root may read
    secret_dir = os.path.join(tmp, "rootonly")
    os.mkdir(secret_dir, 0o700)
    secret = os.path.join(secret_dir, "app")
    shutil.copy(prog("exit7"), secret)
    os.chmod(secret, 0o700)
    bid = build_id_of(secret)
    home = user_dir(os.path.join(tmp, "home"))
    ready = os.path.join(home, "ready")
    attacker = mapper(home, secret_dir, ready)
    run = os.path.join(tmp, "run")
    try:
        for _ in range(200):
            if os.path.exists(ready):
                break
            time.sleep(0.05)
        check(os.path.exists(ready), "the user's mapper has swapped its first files")
        t0 = time.monotonic()
        p = subprocess.Popen([XPCAP, "record", "-o", run, "-a", "--duration", "2"] + QUICK, **QUIET)
        try:
            rc = p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            raise Failure("xpcap record -a --duration 2 still running after 60 s: it hangs on "
                          "the user's files")
        took = time.monotonic() - t0
    finally:
        os.kill(attacker, signal.SIGKILL)
        os.waitpid(attacker, 0)
    print("xpcap record -a --duration 2 took %.1f s" % took)
    check(rc == 0, "it exits 0 (%d)" % rc)
    check(detached(), "no BPF program of ours left attached")
    md = check_meta_counts(run, dump(run))
    recs = dump(run)
    mine = [r for r in recs if r["kind"] == "mmap" and r.get("path", "").startswith(home)]
    kinds = {os.path.relpath(r["path"], home).split("-")[0] for r in mine}
    print("mappings of the user's files: %d (%s); refused build ids: %s" %
          (len(mine), sorted(kinds), md.get("build_id_refused")))
    check(kinds == {"fifo", "gone", "link", "dir"} and
          any(r["pid"] != str(attacker) for r in mine) and any(r["pid"] == str(attacker) for r in mine),
          "the run has mappings of every kind of swapped file, of the mapper and its children")
    check(all(not r.get("build_id") for r in mine), "none of them with a build id")
    libs = [r for r in recs if r["kind"] == "mmap" and re.search(r"/lib[^/]*\.so", r.get("path", ""))]
    with_id = sum(1 for r in libs if len(r.get("build_id", "")) == 40)
    check(with_id >= 0.9 * len(libs) > 0, "the other processes' libraries have their build ids "
          "(%d of %d)" % (with_id, len(libs)))
    leaked = [r for r in recs if r.get("build_id") == bid]
    check(not leaked, "the root-only file's build id is nowhere in the run (%d)" % len(leaked))
    with open(os.path.join(run, "cpu.xpr"), "rb") as f:
        check(bytes.fromhex(bid) not in f.read(), "nor its bytes in cpu.xpr")
    # the children are gone when their records are read: only their paths
    # are left, and every one leads to something that is not the mapping
    check(md.get("build_id_refused", 0) >= 1,
          "meta.json counts the refused build ids (%s of %d)" % (md.get("build_id_refused"),
                                                                len(mine)))


TESTS = {name[2:]: fn for name, fn in globals().items() if name.startswith("t_")}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in TESTS:
        print("usage: security_test.py " + "|".join(sorted(TESTS)))
        return 2
    require_bpf()
    check(detached(), "no BPF program of ours attached before the test")
    tmp = tempfile.mkdtemp(prefix="xp-security-")
    os.chmod(tmp, 0o755)    # the user reaches what the tests make for them
    try:
        TESTS[sys.argv[1]](tmp)
    except Failure as e:
        print("FAIL:", e)
        print("(run left in %s)" % tmp)
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
