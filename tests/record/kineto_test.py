#!/usr/bin/env python3
"""kineto_test.py - a program that starts torch.profiler under xpcap
(issue 43, item 7): Kineto is refused CUPTI while xpcap holds it, and the
program's own profile has no GPU events; `xpcorr info` must say so. The
stacks tell: a stand-in torch/profiler/profiler.py whose
_KinetoProfile.prepare_trace runs 0.4 s of CPU (the real one is slow too:
427 samples at 99 Hz on the H200), recorded with GPU capture armed.
The same spin in a module of another name, and the stand-in with
--no-gpu (torch.profiler then has CUPTI), must not warn.

    XPCAP=build/bin/xpcap XPCORR=build/bin/xpcorr python3 tests/record/kineto_test.py
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import record_test as rt  # noqa: E402
from record_test import check, Failure  # noqa: E402

SPIN = ("import time\n"
        "class _KinetoProfile:\n"
        "    def prepare_trace(self):\n"
        "        t = time.process_time()\n"
        "        while time.process_time() - t < 0.4:\n"
        "            pass\n")
PROG = ("import sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from %s import _KinetoProfile\n"
        "_KinetoProfile().prepare_trace()\n")
WARNING = "started torch.profiler"


def package(tmp, dotted):
    """tmp/a/b/c.py holding SPIN for dotted a.b.c, with its __init__.py files."""
    parts = dotted.split(".")
    d = tmp
    for p in parts[:-1]:
        d = os.path.join(d, p)
        os.makedirs(d, exist_ok=True)
        open(os.path.join(d, "__init__.py"), "a").close()
    with open(os.path.join(d, parts[-1] + ".py"), "w") as f:
        f.write(SPIN)


def warned(tmp, name, dotted, args):
    """Records the program importing dotted; whether info warns."""
    src = os.path.join(tmp, name)
    package(src, dotted)
    prog = os.path.join(src, "prog.py")
    with open(prog, "w") as f:
        f.write(PROG % dotted)
    run = os.path.join(tmp, name + "-run")
    rc, err = rt.record(run, ["-q", "-F", "999"] + args, ["/usr/bin/python3", prog, src])
    check(rc == 0, "%s: xpcap exits 0 (rc %d, %s)" % (name, rc, err.strip()))
    info = subprocess.run([rt.XPCORR, "info", run], capture_output=True, text=True)
    check(info.returncode == 0, "%s: info exits 0: %s" % (name, info.stderr.strip()))
    return WARNING in info.stdout, info.stdout


def main():
    rt.require_bpf()
    tmp = tempfile.mkdtemp(prefix="xp-kineto-")
    try:
        got, info = warned(tmp, "profiler", "torch.profiler.profiler", [])
        check(got, "info warns that torch.profiler ran while xpcap held CUPTI:\n" + info)
        check("--no-gpu" in info, "the warning says how to let torch.profiler have CUPTI")
        got, info = warned(tmp, "other", "mylib.profiler", [])
        check(not got, "no warning for the same spin in another module:\n" + info)
        got, info = warned(tmp, "nogpu", "torch.profiler.profiler", ["--no-gpu"])
        check(not got, "no warning with --no-gpu (torch.profiler had CUPTI):\n" + info)
    except Failure as e:
        print("FAIL:", e)
        print("(runs left in %s)" % tmp)
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    print("ok: torch.profiler under xpcap is said, and only then")
    return 0


if __name__ == "__main__":
    sys.exit(main())
