#!/usr/bin/env python3
"""security_test.py - `xpcap record` attacked as a hostile sudo user would
(issue 14): xpcap runs as root with SUDO_UID/SUDO_GID of an unprivileged
user (65534, nobody), who owns or races the run directory.

    XPCAP=build/bin/xpcap XPCORR=build/bin/xpcorr \
    PROGDIR=build/tests/programs MARKERDIR=build/tests/marker \
    python3 tests/record/security_test.py race

race      a link swapped in for the -o directory in a loop while xpcap starts
force     --force on a directory of root's, and on the user's own holding root's files
twice     a second recorder into a directory in use
lowdisk   about 4 KiB free when recording starts
kallsyms  xpcap SIGKILLed while it copies /proc/kallsyms (at the run's end)
foreign   -a and -p under sudo: nothing of root's processes in the user's run
          (issue 29 item 5)
kaslr     kallsyms and kernel stacks of a run under sudo hold no real kernel
          address where the user may not read them (issue 29 item 5)
mapswap   a user maps files without a build id, then swaps each for a FIFO, a
          "FILE (deleted)" FIFO, a link to a root-only ELF, or its directory for
          a link to a root-only one, while root records -a (issue 29 item 1)
fuse      a user maps a library from a FUSE mount whose server answers only
          them (and mounts one on their perf map): root's -a, -p and
          --cupti-lib must not wait for it (issue 29, left item)
cuptilib  --cupti-lib naming a file the user may not read (root-only, behind
          a link, in a root-only directory) is refused; one they may read
          gets the uprobe as before (issue 29, left item)
Needs root and BPF, like record_test.py (whose helpers it uses).
"""
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from record_test import (MARKERDIR, PROGDIR, QUIET, XPCAP, XPCORR, Failure, check,  # noqa: E402
                         check_meta_counts, detached, dump, meta, mount_tmpfs, one_error_line,
                         prog, record, require_bpf, samples, wait_for, wait_recording)

USER = 65534
ENV = dict(os.environ, SUDO_UID=str(USER), SUDO_GID=str(USER))
QUICK = ["-q", "--no-gpu", "-F", "99"]
# ~0.3 s in the kernel: a run that samples kernel frames, and so copies
# kallsyms (at its end)
KERNEL_BUSY = ["dd", "if=/dev/zero", "of=/dev/null", "bs=1M", "count=1500"]


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
    # the same on a parent -o makes (issue 43: -o makes missing parents):
    # "up" swapped with the link while xpcap makes up/sub/run
    up = user_dir(os.path.join(home, "up"))
    attacker = swapper(up, link)
    outcomes = {}
    try:
        for i in range(8):
            rc, err = record(os.path.join(up, "sub%d" % i, "run"), QUICK, ["true"], env=ENV,
                             check_clean=False)
            key = "recorded" if rc == 0 else err.strip().split(": ")[-1][:60]
            outcomes[key] = outcomes.get(key, 0) + 1
    finally:
        os.kill(attacker, signal.SIGKILL)
        os.waitpid(attacker, 0)
    print("outcomes of 8 starts through a swapped parent: %s" % outcomes)
    check(detached(), "no BPF program of ours left attached")
    check(tree(scratch) == before, "parents: root's directory unchanged (%s)" %
          [e for e in tree(scratch) if e not in before])
    mine = [e for e in tree(home) if e[1] != USER]
    check(not mine, "parents: everything made under the user's home is the user's (%s)" % mine)


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
    # the first recorder's command runs until the test is done with it
    done = os.path.join(tmp, "done")
    first = subprocess.Popen([XPCAP, "record", "-o", run] + QUICK + [
        "--", "sh", "-c", "while [ ! -e %s ]; do sleep 0.05; done" % done], env=ENV, **QUIET)
    try:
        # (its kallsyms, if any, comes only at the end: cpu.xpr at the start)
        wait_for(lambda: os.path.exists(os.path.join(run, "cpu.xpr")) or first.poll() is not None,
                 "the first recorder's cpu.xpr")
        check(os.path.exists(os.path.join(run, "cpu.xpr")), "the first recorder has started")
        # meta.json is rewritten through meta.json.tmp and a rename while
        # the first records: the .tmp comes and goes, meta.json stays
        def listing():
            return sorted({f[:-4] if f.endswith(".tmp") else f for f in os.listdir(run)})

        files = listing()
        for args in (["--force"], []):
            rc, err = record(run, QUICK + args, ["true"], env=ENV, check_clean=False)
            want = ("xpcap: cannot use %s as run directory: another xpcap (pid %d) is recording "
                    "into it" % (run, first.pid))
            check(rc == 2 and one_error_line(err) and err.strip() == want,
                  "second recorder %s refused: %r" % (" ".join(args), err))
            # all there: the first may still be creating its own (pyframes.xpr
            # comes after cpu.xpr), but none of them is gone
            check(set(files) <= set(listing()), "the first's files are all there (%s of %s)"
                  % (listing(), files))
        check(first.poll() is None, "the first recorder was recording all along")
        open(done, "w").close()
        rc = first.wait(timeout=60)
    finally:
        first.kill()
        first.wait()
    check(rc == 0, "the first recorder ends normally (%d)" % rc)
    md = check_meta_counts(run, dump(run))
    ks = os.path.join(run, "kallsyms")
    check(os.path.getsize(ks) == md["kallsyms_bytes"] if md["kallsyms_bytes"] else
          not os.path.exists(ks), "its kallsyms whole, or none (%s bytes)" % md["kallsyms_bytes"])
    # both started at once into a new directory: one records, the other is
    # refused, and the winner's run is whole
    run = os.path.join(home, "together")
    cmd = [XPCAP, "record", "-o", run] + QUICK + ["--", prog("threads"), "0.5"]
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
    # room for the reserved meta.json but not for kallsyms (a few lines: the
    # command fills the disk as it ends): the run goes on, and what the
    # progress line says is noted in meta.json is there
    disk = os.path.join(tmp, "disk2")
    mount_tmpfs(disk, 512 << 10)
    try:
        os.chmod(disk, 0o777)
        run = os.path.join(disk, "run")
        # kernel frames sampled (reads of /dev/zero): kallsyms is wanted
        fill = "%s; cat /dev/zero > %s/fill 2>/dev/null; exit 0" % (" ".join(KERNEL_BUSY), disk)
        rc, err = record(run, ["--no-gpu", "-F", "999"], ["sh", "-c", fill], env=ENV)
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


BPF_SYMBOL = re.compile(rb"^[0-9a-f]{16} [tT] bpf_prog_[0-9a-f]{16}_\w*\t\[bpf\]\n$")


def kallsyms_lines():
    with open("/proc/kallsyms", "rb") as f:
        return set(f.read().splitlines(keepends=True))


def t_kallsyms(tmp):
    # SIGKILL while kallsyms is being written: the run has it whole or not
    # at all, never cut short (whole: lines of /proc/kallsyms, the last one
    # ended; root's run keeps the real addresses)
    want = kallsyms_lines()
    partial = 0
    for i in range(6):
        run = os.path.join(tmp, "run%d" % i)
        p = subprocess.Popen([XPCAP, "record", "-o", run] + QUICK + ["--"] + KERNEL_BUSY, **QUIET)
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
            # a BPF program's symbol (ours, loaded after want was read)
            # need only have the kernel's form
            whole = data.endswith(b"\n") and all(line in want or BPF_SYMBOL.match(line)
                                                   for line in data.splitlines(keepends=True))
            partial += not whole
            print("run %d: kallsyms %d bytes, %d lines (%s)" % (i, len(data), data.count(b"\n"),
                                                                "whole" if whole else "CUT SHORT"))
        else:
            print("run %d: no kallsyms (killed before it was in place)" % i)
    check(detached(), "no BPF program of ours left attached")
    check(partial == 0, "no killed run has a kallsyms cut short (%d)" % partial)
    # a run that ends says how big its kallsyms is, for ingest to check
    run = os.path.join(tmp, "whole")
    rc, err = record(run, QUICK, KERNEL_BUSY)
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
    # the sudo user names a FIFO as the injection library: root attaches
    # the uprobe only to a regular file, so the start fails in one line
    fifo = os.path.join(home, "lib.so")
    os.mkfifo(fifo)
    os.chown(fifo, USER, USER)
    try:
        rc, err = record(os.path.join(home, "run2"), ["-q", "--cupti-lib", fifo], ["true"],
                         env=ENV)
    except subprocess.TimeoutExpired:
        raise Failure("--cupti-lib naming a FIFO: xpcap still running after 120 s")
    check(rc == 2 and one_error_line(err) and "cannot use injection library %s: not a regular "
          "file" % fifo in err, "--cupti-lib naming a FIFO: refused in one line (%d %r)" % (rc, err))


def t_cuptilib(tmp):
    # issue 29, left item: root used to look up and read --cupti-lib as
    # root, so the sudo user could have root attach the uprobe to (and
    # read the ELF symbols of) a file only root may read
    lib = os.path.realpath(os.path.join(MARKERDIR, "libxpmarker-test.so"))
    caller = os.path.join(MARKERDIR, "marker-caller")
    home = user_dir(os.path.join(tmp, "home"))
    secret = os.path.join(tmp, "secret.so")
    shutil.copy(lib, secret)
    os.chmod(secret, 0o600)
    hidden = os.path.join(tmp, "rootonly")
    os.mkdir(hidden, 0o700)
    shutil.copy(lib, os.path.join(hidden, "lib.so"))
    link = os.path.join(home, "link.so")
    os.symlink(secret, link)
    for name, path in (("a root-only 0600 file", secret), ("a link to it", link),
                       ("a file in a root-only directory", os.path.join(hidden, "lib.so"))):
        run = os.path.join(home, "run")
        rc, err = record(run, ["-q", "--launch-stacks", "uprobe", "--cupti-lib", path],
                         [caller, "5"], env=ENV)
        print("%s: %d %s" % (name, rc, err.strip()))
        check(rc == 2 and one_error_line(err) and "cannot use injection library %s: Permission "
              "denied" % path in err, "--cupti-lib naming %s: refused in one line, exit 2 (%d %r)"
              % (name, rc, err))
        check(not os.path.exists(run), "nothing made")
    # plain root may use the same file: the refusal is the user's identity
    run = os.path.join(tmp, "rootrun")
    rc, err = record(run, ["-q", "--launch-stacks", "uprobe", "--cupti-lib", secret], ["true"])
    check(rc == 0 and meta(run)["correlation_uprobe"] is True,
          "root's own run attaches to the root-only file (%d %r)" % (rc, err))
    # one the user may read: as before, the uprobe records the launches
    run = os.path.join(home, "run")
    rc, err = record(run, ["-q", "--launch-stacks", "uprobe", "--cupti-lib", lib],
                     [caller, "20"], env=ENV)
    launches = [r for r in dump(run) if r["kind"] == "launch"] if rc == 0 else []
    print("readable library: %d, %d launches" % (rc, len(launches)))
    check(rc == 0 and meta(run)["correlation_uprobe"] is True and len(launches) == 20,
          "--cupti-lib the user may read: the uprobe records the 20 launches (%d %r)" % (rc, err))


def stallfs(kind, mnt, backing, log):
    """tests/programs/stallfs on mnt: backing's bytes for the user, no answer
    to anyone else, ever. Skips the test (77) where FUSE cannot be mounted."""
    p = subprocess.Popen([prog("stallfs"), kind, mnt, backing, str(USER)],
                         stdout=subprocess.PIPE, stderr=log, text=True)
    if p.stdout.readline().strip() != "ready":
        rc = p.wait()
        with open(log.name) as f:
            why = f.read().strip()
        if rc == 77:
            print("SKIP: no FUSE here:", why)
            sys.exit(77)
        raise Failure("stallfs did not start (%d): %s" % (rc, why))
    return p


def unmount(servers):
    # the server's exit closes /dev/fuse: the connection is aborted and
    # every request still waiting fails at once (a request the server has
    # read holds its caller even against SIGKILL until then)
    for server, _ in servers:
        server.kill()
        server.wait()
    while servers:
        subprocess.run(["umount", "-l", servers.pop()[1]], **QUIET)


def finish(p, t0, what, servers, bound=20):
    """p (xpcap) waited for to its end, or killed at bound seconds: rc, s."""
    try:
        rc = p.wait(timeout=max(0.1, bound - (time.monotonic() - t0)))
    except subprocess.TimeoutExpired:
        unmount(servers)
        p.kill()
        p.wait()
        raise Failure("%s still running after %d s: it waits for the user's FUSE server" %
                      (what, bound))
    return rc, time.monotonic() - t0


def t_fuse(tmp):
    # issue 29, left item: root's xpcap stat'ed, opened and read files that
    # a user's processes map, wherever they are; on the user's FUSE mount
    # whose server never answers root, that waited for good (SIGKILL only)
    home = user_dir(os.path.join(tmp, "home"))
    backing = os.path.join(tmp, "libhot.so")
    # without a build id: the kernel gives a live mmap record none, so root
    # would read the file for it (the note's type is changed)
    with open(os.path.join(PROGDIR, "libhotlib.so"), "rb") as f:
        elf = f.read()
    bid = bytes.fromhex(build_id_of(os.path.join(PROGDIR, "libhotlib.so")))
    note = struct.pack("<III", 4, len(bid), 3) + b"GNU\0" + bid
    check(elf.count(note) == 1, "libhotlib.so has one build id note")
    with open(backing, "wb") as f:
        f.write(elf.replace(note, struct.pack("<III", 4, len(bid), 0x7f) + b"GNU\0" + bid))
    mnt = user_dir(os.path.join(tmp, "mnt"))
    lib = os.path.join(mnt, "lib.so")
    log = open(os.path.join(tmp, "stallfs.log"), "w")
    servers, users, perf_map, held = [], [], None, None

    def user_maps(tag):
        ready = os.path.join(home, "ready-" + tag)
        users.append(subprocess.Popen([prog("stallfs"), "map", lib, ready], preexec_fn=as_user,
                                      **QUIET))
        for _ in range(400):
            if os.path.exists(ready):
                return users[-1].pid
            time.sleep(0.05)
        raise Failure("the user's process did not map %s" % lib)
    try:
        servers.append((stallfs("dir", mnt, backing, log), mnt))
        first = user_maps("1")
        # not vacuous: the server answers the user, never root (a stat of
        # the mount's root: one of lib.so would hold its name's lookup)
        held = subprocess.Popen(["stat", mnt], **QUIET)
        print("root's stat: pid %d" % held.pid)
        time.sleep(1)
        check(held.poll() is None, "root's stat of the user's FUSE mount: no answer in 1 s")
        # and the user mounts one on their perf map
        perf_map = "/tmp/perf-%d.map" % first
        open(perf_map, "w").close()
        os.chown(perf_map, USER, USER)
        servers.append((stallfs("file", perf_map, backing, log), perf_map))
        # root's -a: mappings older than the recording (/proc/PID/maps) and
        # one made during it (a live mmap record)
        run = os.path.join(tmp, "run")
        t0 = time.monotonic()
        p = subprocess.Popen([XPCAP, "record", "-o", run, "-a", "--duration", "3"] + QUICK,
                             **QUIET)
        while (not os.path.exists(os.path.join(run, "meta.json")) and p.poll() is None and
               time.monotonic() - t0 < 10):
            time.sleep(0.05)
        second = user_maps("2")
        rc, took = finish(p, t0, "xpcap record -a", servers)
        print("xpcap record -a --duration 3 (pid %d): exit %d in %.1f s" % (p.pid, rc, took))
        check(rc == 0, "-a: exit 0")
        recs = dump(run)
        md = check_meta_counts(run, recs)
        fuse = [r for r in recs if r["kind"] == "mmap" and r.get("path") == lib]
        print("mappings of the FUSE file: %s; untrusted_fs %s" %
              (sorted({r["pid"] for r in fuse}), md.get("untrusted_fs")))
        check({str(first), str(second)} <= {r["pid"] for r in fuse},
              "both processes' mappings of it are in the run (by path)")
        check(not any(r.get("build_id") for r in fuse), "none with a build id")
        check(md["untrusted_fs"]["skipped"] >= 2 and
              "fuse.stallfs" in md["untrusted_fs"]["types"].split(","),
              "meta.json counts the files skipped, and their mount type")
        libs = [r for r in recs if r["kind"] == "mmap" and
                re.search(r"/lib[^/]*\.so", r.get("path", "")) and r["path"] != lib]
        with_id = sum(1 for r in libs if len(r.get("build_id", "")) == 40)
        check(with_id >= 0.9 * len(libs) > 0, "the other libraries keep their build ids "
              "(%d of %d)" % (with_id, len(libs)))
        # the user records their own process: maps and perf map skipped
        run = os.path.join(home, "attach")
        t0 = time.monotonic()
        p = subprocess.Popen([XPCAP, "record", "-o", run, "-p", str(first), "--duration", "1"] +
                             QUICK, env=ENV, **QUIET)
        rc, took = finish(p, t0, "xpcap record -p under sudo", servers)
        md = meta(run) if rc == 0 else {}
        print("-p %d under sudo: exit %d in %.1f s; untrusted_fs %s" %
              (first, rc, took, md.get("untrusted_fs")))
        check(rc == 0 and md["untrusted_fs"]["skipped"] >= 2 and
              not os.path.exists(os.path.join(run, "perf-%d.map" % first)),
              "-p under sudo: exit 0, the mapping and the perf map skipped")
        # --cupti-lib on it, under sudo: refused at once
        t0 = time.monotonic()
        rc, err = record(os.path.join(home, "run3"), ["-q", "--cupti-lib", lib], ["true"],
                         env=ENV, check_clean=False)     # refused before BPF is loaded
        took = time.monotonic() - t0
        print("--cupti-lib on the FUSE mount: %d in %.1f s: %s" % (rc, took, err.strip()))
        check(rc == 2 and one_error_line(err) and "on a FUSE file system" in err and took < 10,
              "--cupti-lib on it under sudo: refused in one line")
    finally:
        for q in users:
            q.kill()
            q.wait()
        unmount(servers)
        if held:
            held.kill()
            held.wait()
        log.close()
        with open(log.name) as f:
            print("stallfs never answered: %s" % sorted(set(l.strip() for l in f)))
        if perf_map and os.path.exists(perf_map):
            os.unlink(perf_map)


def spinner(path, seconds, user=False):
    """prog threads copied to path, each thread spinning seconds of CPU (as the
    user, or root)."""
    if not os.path.exists(path):
        shutil.copy(prog("threads"), path)
        os.chmod(path, 0o755)
    return subprocess.Popen([path, str(seconds)], preexec_fn=as_user if user else None, **QUIET)


def all_bytes(run):
    out = b""
    for d, _, names in os.walk(run):
        for name in names:
            with open(os.path.join(d, name), "rb") as f:
                out += f.read()
    return out


def t_foreign(tmp):
    # issue 29 item 5: under sudo, root's processes (one older than the
    # recording, one started during it, with a perf map) leave nothing in
    # the user's run, while the user's own process is recorded
    token = "xproot" + os.urandom(6).hex()
    rdir = os.path.join(tmp, token)
    os.mkdir(rdir, 0o755)
    home = user_dir(os.path.join(tmp, "home"))
    procs = [spinner(os.path.join(rdir, "xprootspin"), 60),
             spinner(os.path.join(home, "xpuserspin"), 60, user=True)]
    root_pid, user_pid = procs[0].pid, procs[1].pid
    perf_map = "/tmp/perf-%d.map" % root_pid
    with open(perf_map, "w") as f:
        f.write("1000 10 %s_jitted\n" % token)
    try:
        time.sleep(0.3)
        run = os.path.join(home, "run")
        p = subprocess.Popen([XPCAP, "record", "-o", run, "-a", "--duration", "2", "--compress",
                              "none"] + QUICK, env=ENV, **QUIET)
        wait_recording(run, p)
        procs.append(spinner(os.path.join(rdir, "xprootspin"), 0.5))
        rc = p.wait(timeout=120)
        check(rc == 0, "-a under sudo: exit 0 (%d)" % rc)
        recs = dump(run)
        md = check_meta_counts(run, recs)
        roots = {str(root_pid), str(procs[2].pid)}
        of_root = [r for r in recs if r.get("pid") in roots]
        check(not of_root, "no record of root's processes (%s)" % of_root[:3])
        check(token.encode() not in all_bytes(run), "nothing of theirs in any file of the run: "
              "no path, no perf map")
        lost = {k: md["records"][k]["lost"]["privileged"] for k in ("sample", "mmap", "comm",
                                                                    "fork", "exit", "exec")}
        print("dropped as others': %s" % lost)
        check(lost["sample"] > 0 and lost["mmap"] > 0 and lost["exec"] > 0,
              "meta.json counts what was dropped")
        mine = [r for r in recs if r.get("pid") == str(user_pid)]
        check(any(r["kind"] == "sample" for r in mine) and
              any(r["kind"] == "mmap" and r["path"].endswith("/xpuserspin") for r in mine),
              "the user's own process is sampled, with its mappings")
        # -p of root's process: refused, nothing made; of the user's own: recorded
        run = os.path.join(home, "attach")
        rc, err = record(run, QUICK + ["-p", str(root_pid), "--duration", "1"], None, env=ENV)
        check(rc == 2 and one_error_line(err) and "cannot attach to pid %d: not a process the "
              "invoking user (uid %d) may trace" % (root_pid, USER) in err,
              "-p of root's pid refused (%d %r)" % (rc, err))
        check(not os.path.exists(run), "nothing made")
        rc, err = record(run, QUICK + ["-p", str(user_pid), "--duration", "1"], None, env=ENV)
        check(rc == 0 and any(r["kind"] == "sample" and r["pid"] == str(user_pid)
                              for r in dump(run)), "-p of the user's own pid recorded")
        # plain root sees them: what the checks above look for is there
        run = os.path.join(tmp, "rootrun")
        rc, err = record(run, QUICK + ["-a", "--duration", "1", "--compress", "none"], None)
        check(rc == 0 and any(r.get("pid") == str(root_pid) for r in samples(dump(run))) and
              token.encode() in all_bytes(run), "root's own -a run has them")
    finally:
        for q in procs:
            q.kill()
            q.wait()
        os.unlink(perf_map)


def kallsyms_addrs(path, names):
    out = {}
    with open(path) as f:
        for line in f:
            a, _, name = line.split()[:3]
            if name in names:
                out[name] = int(a, 16)
    return out


def unique_names(path):
    """The symbol names of a kallsyms file that /proc/kallsyms has once."""
    with open("/proc/kallsyms") as f:
        count = {}
        for line in f:
            name = line.split()[2]
            count[name] = count.get(name, 0) + 1
    with open(path) as f:
        return {line.split()[2] for line in f} & {n for n, c in count.items() if c == 1}


def user_sees_kallsyms():
    p = subprocess.run(["head", "-1", "/proc/kallsyms"], preexec_fn=as_user, capture_output=True,
                       text=True)
    return int(p.stdout.split()[0], 16) != 0


def t_kaslr(tmp):
    # issue 29 item 5: where the user reads zeros in /proc/kallsyms, a run
    # made for them under sudo holds no real kernel address (kallsyms and
    # stacks moved by one secret delta) and still names kernel frames
    restore = None
    if user_sees_kallsyms():
        with open("/proc/sys/kernel/kptr_restrict") as f:
            restore = f.read()
        with open("/proc/sys/kernel/kptr_restrict", "w") as f:
            f.write("1")
        print("kptr_restrict set to 1 for the test (was %s)" % restore.strip())
    try:
        check(not user_sees_kallsyms(), "the user reads no kernel address in /proc/kallsyms")
        home = user_dir(os.path.join(tmp, "home"))
        run = os.path.join(home, "run")
        rc, err = record(run, ["-q", "--no-gpu", "-F", "999"],
                         ["dd", "if=/dev/zero", "of=/dev/null", "bs=4k", "count=300000"], env=ENV)
        check(rc == 0, "the user's run exits 0 (%d %r)" % (rc, err))
        # the run's kallsyms holds the symbols its kernel frames fall in:
        # those of them that one address names in /proc/kallsyms
        names = unique_names(os.path.join(run, "kallsyms"))
        real = kallsyms_addrs("/proc/kallsyms", names)
        got = kallsyms_addrs(os.path.join(run, "kallsyms"), names)
        print("real %s\nrun  %s" % ({k: hex(v) for k, v in real.items()},
                                     {k: hex(v) for k, v in got.items()}))
        check("read_zero" in got and len(got) == len(real) >= 3 and
              all(got[k] != real[k] for k in real),
              "no symbol at its real address in the run's kallsyms")
        check(len({got[k] - real[k] for k in real}) == 1, "one delta for all")
        check(meta(run)["kernel_addresses"] == "rebased", "meta.json says so")
        p = subprocess.run([XPCORR, "export", "--format", "folded", run], capture_output=True,
                           text=True)
        check(p.returncode == 0 and "read_zero_[k]" in p.stdout,
              "kernel frames still named from the run (read_zero)")
        # root's own run keeps the real addresses
        run = os.path.join(tmp, "rootrun")
        rc, err = record(run, ["-q", "--no-gpu", "-F", "999"], KERNEL_BUSY)
        names = unique_names(os.path.join(run, "kallsyms"))
        check(meta(run)["kernel_addresses"] == "real" and names and
              kallsyms_addrs(os.path.join(run, "kallsyms"), names) ==
              kallsyms_addrs("/proc/kallsyms", names), "root's run: real addresses")
    finally:
        if restore is not None:
            with open("/proc/sys/kernel/kptr_restrict", "w") as f:
                f.write(restore)


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
