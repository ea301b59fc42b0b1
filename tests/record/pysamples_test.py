#!/usr/bin/env python3
"""pysamples_test.py - Python frames in CPU samples (issue 39, item 1):
pyspin.py spends known shares of its CPU time in alpha, beta and gamma
(50/30/20%); recorded at -F 999 with each interpreter here (Debian's
/usr/bin/python3: 3.11 without frame pointers or perf trampolines; pyenv's
3.10-3.13), each function's share of the samples that name one of them
must be within 3 points of its true share, at the lines that call spin(),
with spin() at its loop; 85% of the process's samples must carry Python
frames, and `xpcorr info` must say how they were read. With
--no-python-frames, none, and info says the mode is off.

    XPCAP=build/bin/xpcap XPCORR=build/bin/xpcorr \
    python3 tests/record/pysamples_test.py root|nonroot|off

root: the eBPF sampler; nonroot: nobody (setpriv), perf events, every
interpreter: pyenv's under /root, which nobody cannot traverse, is shown to
nobody at its own path in a private mount namespace of this test (see
show_to_nobody); where none can be made, those are skipped, said (exit 77).
"""
import ctypes
import glob
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import record_test as rt  # noqa: E402
from record_test import check, Failure  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TRUTH = {"alpha": 50.0, "beta": 30.0, "gamma": 20.0}
NOBODY = 65534
AS_NOBODY = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups"]
CPU_SECONDS = "0.6"             # root: ~600 samples each at -F 999
NONROOT_CPU_SECONDS = "1.0"     # user time only: fewer samples a second
PY_FRAME = re.compile(r"(\.py|>):\d+ ")    # file.py:LINE name, <frozen x>:LINE name
MIN_NAMED = 300                 # samples in the three functions, else recorded longer
CLONE_NEWNS = 0x20000
MS_RDONLY, MS_NOSUID, MS_NODEV = 0x1, 0x2, 0x4
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000


def interpreters():
    """(label, path) of each interpreter to test: Debian's and pyenv's 3.10-3.13."""
    found = []
    if os.access("/usr/bin/python3", os.X_OK):
        found.append(("debian", "/usr/bin/python3"))
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    for minor in (10, 11, 12, 13):
        paths = sorted(glob.glob(os.path.join(root, "versions", "3.%d.*" % minor, "bin",
                                              "python3.%d" % minor)))
        if paths:
            found.append(("pyenv-3.%d" % minor, paths[-1]))
    return found


def nobody_can(test, path):
    return subprocess.run(AS_NOBODY + ["test", test, path]).returncode == 0


def nobody_runs(py):
    return nobody_can("-r", py) and subprocess.run(AS_NOBODY + [py, "-c", "pass"],
                                                   capture_output=True).returncode == 0


def show_to_nobody(pys, keep):
    """Lets nobody run interpreters that sit under a directory it cannot
    traverse (pyenv's under /root, mode 700), at their own paths (their
    RUNPATH names libpython there), changing nothing outside this process:
    in a mount namespace of its own (its children's too: setpriv, xpcap,
    xpcorr), a tmpfs over that directory holding each interpreter's tree,
    bound read-only. keep: paths this test still needs, which the tmpfs must
    not hide. Returns None, or why it could not."""
    libc = ctypes.CDLL(None, use_errno=True)

    def sys_mount(src, dst, fstype, flags, data):
        if libc.mount(src and src.encode(), dst.encode(), fstype and fstype.encode(),
                      ctypes.c_ulong(flags), data and data.encode()):
            e = ctypes.get_errno()
            raise OSError(e, "mount %s on %s: %s" % (src or fstype, dst, os.strerror(e)))

    trees = {}                  # the directory nobody cannot traverse -> trees under it
    for py in pys:
        tree = os.path.dirname(os.path.dirname(py))     # .../versions/3.12.1
        parts = tree.strip("/").split("/")
        closed = next((d for d in ("/" + "/".join(parts[:n]) for n in range(1, len(parts)))
                       if not nobody_can("-x", d)), None)
        if closed is None:
            return "no directory above %s shuts nobody out" % tree
        hidden = [k for k in keep if (k + "/").startswith(closed + "/")]
        if hidden:
            return "a tmpfs over %s would hide %s" % (closed, hidden[0])
        trees.setdefault(closed, set()).add(tree)
    if libc.unshare(CLONE_NEWNS):
        return "unshare(CLONE_NEWNS): " + os.strerror(ctypes.get_errno())
    # private first: a mount below must not propagate to the system's namespace
    try:
        sys_mount(None, "/", None, MS_REC | MS_PRIVATE, None)
    except OSError as e:
        return str(e)
    fds = []
    try:
        for closed, under in sorted(trees.items()):
            # the trees stay reachable through fds once the tmpfs hides them
            held = [(t, os.open(t, os.O_PATH | os.O_DIRECTORY)) for t in sorted(under)]
            fds += [fd for _, fd in held]
            sys_mount("xp-pysamples", closed, "tmpfs", MS_NOSUID | MS_NODEV,
                      "mode=0755,size=64k")
            for tree, fd in held:
                d = closed
                for part in os.path.relpath(tree, closed).split("/"):
                    d = os.path.join(d, part)
                    if not os.path.isdir(d):
                        os.mkdir(d)
                        os.chmod(d, 0o755)      # whatever the umask
                src = "/proc/self/fd/%d" % fd
                sys_mount(src, tree, None, MS_BIND | MS_REC, None)
                sys_mount(None, tree, None, MS_BIND | MS_REMOUNT | MS_RDONLY, None)
    except OSError as e:
        return str(e)
    finally:
        for fd in fds:
            os.close(fd)
    return None


def marker_lines(path):
    """The line of each '# NAME-LINE' marker in pyspin.py."""
    lines = {}
    with open(path) as f:
        for n, text in enumerate(f, 1):
            m = re.search(r"# (\w+)-LINE", text)
            if m:
                lines[m.group(1).lower()] = n
    return lines


def shares(folded, lines):
    """Samples per function (the innermost of alpha/beta/gamma in each
    stack), all samples, samples with a pyspin.py frame; checks the lines."""
    per, total, with_py = {}, 0, 0
    for line in folded.splitlines():
        stack, _, n = line.rpartition(" ")
        n = int(n)
        total += n
        fn = None
        # any Python frame (the interpreter's start runs importlib's too)
        with_py += n if PY_FRAME.search(stack) else 0
        for frame in stack.split(";"):
            m = re.match(r"pyspin\.py:(\d+) (\w+)$", frame)
            if not m:
                continue
            name, ln = m.group(2), int(m.group(1))
            # a sample may catch a function at its entry, before its first
            # line: 3.11+ gives that instruction (RESUME) the def line
            if name in TRUTH:
                if ln not in (lines[name], lines[name] - 1):
                    check(False, "%s at the line that calls spin() (%d) or its def: %s" % (
                        name, lines[name], frame))
                fn = name
            elif name == "spin":
                if not lines["spin"] - 2 <= ln <= lines["pass"]:
                    check(False, "spin() in its body (lines %d-%d): %s" % (
                        lines["spin"] - 2, lines["pass"], frame))
        if fn:
            per[fn] = per.get(fn, 0) + n
    return per, total, with_py


def enough(run, xpcorr_as, lines):
    """Whether the run has samples enough to tell 3 points (a loaded
    machine may sample a short run sparsely)."""
    p = subprocess.run(xpcorr_as + [rt.XPCORR, "export", "--format", "folded", run],
                       capture_output=True, text=True, timeout=120)
    return p.returncode != 0 or sum(shares(p.stdout, lines)[0].values()) >= MIN_NAMED


def check_run(label, run, xpcorr_as, lines):
    p = subprocess.run(xpcorr_as + [rt.XPCORR, "export", "--format", "folded", run],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "%s: xpcorr export --format folded (rc %d: %s)" % (
        label, p.returncode, p.stderr.strip()[-300:]))
    per, total, with_py = shares(p.stdout, lines)
    named = sum(per.values())
    check(named >= MIN_NAMED, "%s: %d samples in alpha, beta or gamma (%d needed to tell 3 "
          "points)" % (label, named, MIN_NAMED))
    # a normal user's perf events count user time only: spin() is mostly
    # in the kernel (clock_gettime of the process's CPU time)
    check(total > 150, "%s: samples of the program (%d)" % (label, total))
    check(with_py >= 0.85 * total, "%s: %d of %d samples carry Python frames (85%% needed); "
          "the hottest stacks:\n%s" % (label, with_py, total, "\n".join(
              sorted(p.stdout.splitlines(), key=lambda s: -int(s.rpartition(" ")[2]))[:3])))
    got = {fn: 100.0 * per.get(fn, 0) / named for fn in TRUTH}
    for fn, want in TRUTH.items():
        # 3 points, or the sampling's own error where the run is short:
        # 2.5 binomial sd of a share of named samples (alpha at 50% of 664
        # samples: 4.9 points; 3 points from 1740 samples on)
        tol = max(3.0, 2.5 * 100.0 * math.sqrt(want / 100.0 * (1 - want / 100.0) / named))
        check(abs(got[fn] - want) <= tol, "%s: %s has %.1f%% of the samples, truly %.0f%% "
              "(within %.1f points; %s)" % (label, fn, got[fn], want, tol, per))
    info = subprocess.run(xpcorr_as + [rt.XPCORR, "info", run], capture_output=True, text=True,
                          timeout=60).stdout
    check(re.search(r"^python in samples: \d+ of \d+ CPU samples", info, re.M) and
          "read by xpcap with process_vm_readv" in info,
          "%s: info says how Python frames were read:\n%s" % (label, info))
    print("%-12s %5d samples, %5.1f%% with Python frames; alpha %.1f%% beta %.1f%% gamma %.1f%%"
          % (label, total, 100.0 * with_py / total, got["alpha"], got["beta"], got["gamma"]))


def t_root(tmp):
    rt.require_bpf()
    spin = os.path.join(HERE, "pyspin.py")
    lines = marker_lines(spin)
    for label, py in interpreters():
        for seconds in (CPU_SECONDS, "2.0"):    # longer once if sampled sparsely
            run = os.path.join(tmp, label + "-" + seconds)
            rc, err = rt.record(run, ["-q", "-F", "999", "--no-gpu"], [py, spin, seconds])
            check(rc == 0, "%s: xpcap exits 0 (rc %d, %s)" % (label, rc, err.strip()))
            if enough(run, [], lines):
                break
        check(rt.meta(run)["sampler"] == "bpf", "%s: the eBPF sampler" % label)
        check_run(label, run, [], lines)


def t_nonroot(tmp):
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        rt.skip_or_fail("needs root and setpriv, to run xpcap as nobody")
    with open("/proc/sys/kernel/perf_event_paranoid") as f:
        if int(f.read()) > 2:
            rt.skip_or_fail("kernel.perf_event_paranoid > 2: a normal user has no perf events")
    for exe in (rt.XPCAP, rt.XPCORR):
        if subprocess.run(AS_NOBODY + ["test", "-x", exe]).returncode:
            rt.skip_or_fail("%s is not executable by nobody" % exe)
    os.chown(tmp, NOBODY, NOBODY)
    spin = os.path.join(tmp, "pyspin.py")       # where nobody may read it
    shutil.copy(os.path.join(HERE, "pyspin.py"), spin)
    os.chmod(spin, 0o644)
    lines = marker_lines(spin)
    pys = interpreters()
    shut = [py for _, py in pys if not nobody_runs(py)]
    keep = [os.path.realpath(k) for k in (tmp, rt.XPCAP, rt.XPCORR)]
    why = show_to_nobody(shut, keep) if shut else None
    skipped = []
    for label, py in pys:
        if py in shut and (why or not nobody_runs(py)):
            skipped.append(label)
            print("skip %s: nobody cannot run %s (a private directory, as pyenv's under /root, "
                  "and no private mount namespace to show it: %s)" % (
                      label, py, why or "shown, still not runnable"))
            continue
        for seconds in (NONROOT_CPU_SECONDS, "3.0"):   # longer once if sampled sparsely
            run = os.path.join(tmp, label + "-" + seconds)
            p = subprocess.run(AS_NOBODY + [rt.XPCAP, "record", "-q", "-F", "999", "--no-gpu",
                                            "-o", run, "--", py, spin, seconds],
                               capture_output=True, text=True, timeout=120)
            check(p.returncode == 0, "%s: xpcap as nobody exits 0 (rc %d, %s)" % (
                label, p.returncode, p.stderr.strip()))
            if enough(run, AS_NOBODY, lines):
                break
        check(rt.meta(run)["sampler"] == "perf", "%s: perf events for nobody" % label)
        check_run(label, run, AS_NOBODY, lines)
    if skipped:
        rt.skip_or_fail("nobody could not run %s (%d others checked)" % (
            ", ".join(skipped), len(pys) - len(skipped)))
    check(pys, "an interpreter nobody may run")


def t_off(tmp):
    rt.require_bpf()
    spin = os.path.join(HERE, "pyspin.py")
    run = os.path.join(tmp, "off")
    # long enough for the reader's scan (every 250 ms) to find the process
    # and say so, under ASan on a loaded machine too (0.3 s was not)
    rc, err = rt.record(run, ["-q", "-F", "999", "--no-gpu", "--no-python-frames"],
                        ["/usr/bin/python3", spin, "1.5"])
    check(rc == 0, "xpcap --no-python-frames exits 0 (rc %d, %s)" % (rc, err.strip()))
    folded = subprocess.run([rt.XPCORR, "export", "--format", "folded", run],
                            capture_output=True, text=True, timeout=120).stdout
    check("pyspin.py:" not in folded, "no Python frames with --no-python-frames")
    info = subprocess.run([rt.XPCORR, "info", run], capture_output=True, text=True,
                          timeout=60).stdout
    check("mode off (--no-python-frames)" in info, "info says the mode is off:\n%s" % info)


def t_exec(tmp):
    """A process renamed before its exec of Python (a script named python3
    that sleeps, then execs the interpreter: the name does not change at
    the exec) is probed again soon, not in a second: the kernel renames a
    process before it maps the new program, and a loaded machine can stall
    an exec in between; the program here ends before a second has passed."""
    rt.require_bpf()
    spin = os.path.join(HERE, "pyspin.py")
    bindir = os.path.join(tmp, "bin")
    os.mkdir(bindir)
    wrapper = os.path.join(bindir, "python3")
    with open(wrapper, "w") as f:
        f.write('#!/bin/sh\nsleep 0.2\nexec /usr/bin/python3 "$@"\n')
    os.chmod(wrapper, 0o755)
    run = os.path.join(tmp, "exec")
    rc, err = rt.record(run, ["-q", "-F", "999", "--no-gpu"], [wrapper, spin, "0.5"])
    check(rc == 0, "xpcap exits 0 (rc %d, %s)" % (rc, err.strip()))
    check_run("exec", run, [], marker_lines(spin))


def t_pidwrap(tmp):
    """A descendant whose pid is below pids the reader saw before (the
    counter wrapped: here ns_last_pid is set below the largest pid alive,
    as a wrap would) is still found: "new" is "not in the scan before",
    not "above the largest"."""
    rt.require_bpf()
    spin = os.path.join(HERE, "pyspin.py")
    last = "/proc/sys/kernel/ns_last_pid"
    if not os.access(last, os.W_OK):
        rt.skip_or_fail("cannot write %s (needs root in the initial pid namespace)" % last)
    top = max(int(d) for d in os.listdir("/proc") if d.isdigit())
    if top < 400:
        rt.skip_or_fail("no pid alive above 400 to start Python below (largest %d)" % top)
    low = top // 2
    with open(last) as f:
        before = f.read().strip()
    # the shell runs a while first, so that the reader's scans see the
    # high pids; then the next pid is made low and Python started (found at
    # a scan, every 250 ms: 1.5 s of spin keeps that under 15% of it)
    cmd = ["/bin/sh", "-c", "sleep 0.6; echo %d > %s; /usr/bin/python3 \"$0\" 1.5; true"
           % (low - 1, last), spin]
    run = os.path.join(tmp, "pidwrap")
    try:
        rc, err = rt.record(run, ["-q", "-F", "999", "--no-gpu"], cmd)
    finally:
        with open(last, "w") as f:      # the counter back where it was
            f.write(before)
    check(rc == 0, "xpcap exits 0 (rc %d, %s)" % (rc, err.strip()))
    pids = [int(p) for p in re.findall(r"^ +(\d+) python3 ", subprocess.run(
        [rt.XPCORR, "info", run], capture_output=True, text=True, timeout=60).stdout, re.M)]
    check(pids and max(pids) < top, "Python ran below the largest pid seen (%s, %d)" % (
        pids, top))
    check_run("pidwrap", run, [], marker_lines(spin))


def t_merge(tmp):
    """A merged job keeps each run's Python-frames coverage (xp_python_sampled)."""
    rt.require_bpf()
    spin = os.path.join(HERE, "pyspin.py")
    runs = [os.path.join(tmp, "node%d" % i) for i in range(2)]
    for run in runs:
        rc, err = rt.record(run, ["-q", "-F", "999", "--no-gpu"], ["/usr/bin/python3", spin, "0.3"])
        check(rc == 0, "xpcap exits 0 (rc %d, %s)" % (rc, err.strip()))
    job = os.path.join(tmp, "job")
    p = subprocess.run([rt.XPCORR, "merge", "-q", "-o", job] + runs, capture_output=True,
                       text=True, timeout=120)
    check(p.returncode == 0, "xpcorr merge exits 0 (rc %d, %s)" % (p.returncode, p.stderr))
    want = []
    for run in runs:
        info = subprocess.run([rt.XPCORR, "info", run], capture_output=True, text=True,
                              timeout=60).stdout
        m = re.search(r"^python in samples: (\d+) of (\d+) CPU samples", info, re.M)
        check(m, "%s: info has the python-in-samples line:\n%s" % (run, info))
        want.append((int(m.group(1)), int(m.group(2))))
    info = subprocess.run([rt.XPCORR, "info", job], capture_output=True, text=True,
                          timeout=60).stdout
    m = re.search(r"^python in samples: (\d+) of (\d+) CPU samples", info, re.M)
    check(m and (int(m.group(1)), int(m.group(2))) == tuple(map(sum, zip(*want))),
          "the job's python-in-samples line sums its runs' %s:\n%s" % (want, info))
    rows = re.findall(r"^ +\d+ Python [\d.]+: \d+ of \d+ samples on Python threads", info, re.M)
    check(len(rows) == 2, "a coverage line per run's process:\n" + info)
    print(m.group(0))


def t_sudo(tmp):
    """Under sudo the reader reads as the invoking user (nobody here)."""
    rt.require_bpf()
    os.chown(tmp, NOBODY, NOBODY)
    spin = os.path.join(tmp, "pyspin.py")
    shutil.copy(os.path.join(HERE, "pyspin.py"), spin)
    os.chmod(spin, 0o644)
    env = dict(os.environ, SUDO_UID=str(NOBODY), SUDO_GID=str(NOBODY))
    run = os.path.join(tmp, "sudo")
    rc, err = rt.record(run, ["-q", "-F", "999", "--no-gpu"], ["/usr/bin/python3", spin,
                                                              CPU_SECONDS], env=env)
    check(rc == 0, "xpcap under sudo exits 0 (rc %d, %s)" % (rc, err.strip()))
    check_run("sudo", run, [], marker_lines(spin))
    info = subprocess.run([rt.XPCORR, "info", run], capture_output=True, text=True).stdout
    check("as uid %d (the invoking user)" % NOBODY in info, "info: read as nobody:\n" + info)


def t_unreadable(tmp):
    """A process that is not dumpable is not read (root drops CAP_SYS_PTRACE
    in the reader, as the samplers drop its records); info says why."""
    rt.require_bpf()
    spin = os.path.join(HERE, "pyspin.py")
    prog = os.path.join(tmp, "nodump.py")
    with open(prog, "w") as f:
        f.write("import ctypes, runpy, sys\n"
                "ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0\n"
                "sys.argv = [%r, '0.5']\n"
                "runpy.run_path(%r, run_name='__main__')\n" % (spin, spin))
    run = os.path.join(tmp, "nodump")
    rc, err = rt.record(run, ["-q", "-F", "999", "--no-gpu"], ["/usr/bin/python3", prog])
    check(rc == 0, "xpcap exits 0 (rc %d, %s)" % (rc, err.strip()))
    info = subprocess.run([rt.XPCORR, "info", run], capture_output=True, text=True).stdout
    check(re.search(r"no Python frames in its \d+ samples: memory unreadable", info),
          "info says the memory was unreadable:\n" + info)


TESTS = {name[2:]: fn for name, fn in globals().items() if name.startswith("t_")}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in TESTS:
        print("usage: pysamples_test.py " + "|".join(sorted(TESTS)))
        return 2
    tmp = tempfile.mkdtemp(prefix="xp-pysamples-")
    try:
        TESTS[sys.argv[1]](tmp)
    except Failure as e:
        print("FAIL:", e)
        print("(runs left in %s)" % tmp)
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
