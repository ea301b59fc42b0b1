#!/usr/bin/env python3
"""gpulib_test.py - issue 30 items 1, 2 and 4 on this machine (no GPU):
where xpcap finds the injection library, what a run says when a CUDA
program is recorded without GPU capture, and the capture window's options.
Uses record_test.py's helpers and environment (XPCAP, XPCORR, PROGDIR,
XPCUPTI); root and BPF, like the other record tests.

    python3 tests/record/gpulib_test.py lookup|notarmed|window|range|markerlink|verified

The CUDA program is Python loading a copy of a test library named
libcudart.so.13: xpcap knows CUDA by the name of what is mapped, and the
test needs no CUDA installed. The GPU side (CUPTI held by another
subscriber, the window's kernels against torch.profiler) runs on the GPU
machine: tests/gpu/window-device.sh.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import record_test as rt  # noqa: E402
from record_test import check, meta, prog  # noqa: E402

XPCUPTI = os.environ.get("XPCUPTI")


def record_with(xpcap, run, args, cmd):
    """xpcap record with another xpcap binary; (rc, stderr)."""
    with tempfile.TemporaryFile(mode="w+") as err:
        p = subprocess.run([xpcap, "record", "-o", run] + args + ["--"] + cmd,
                           stdout=subprocess.DEVNULL, stderr=err, timeout=120)
        err.seek(0)
        return p.returncode, err.read()


def fake_cudart(tmp):
    """A shared library named libcudart.so.13, and a Python command that
    loads it (given a last argument "wait": once a line comes on its stdin)."""
    lib = os.path.join(tmp, "libcudart.so.13")
    shutil.copy(os.path.join(rt.PROGDIR, "libhotlib.so"), lib)
    return lib, ["python3", "-c", "import ctypes, sys, time\n"
                 "if sys.argv[1:] == ['wait']: sys.stdin.readline()\n"
                 "ctypes.CDLL(%r); time.sleep(1.0)" % lib, "wait"]


def t_lookup(tmp):
    # the build tree's xpcap finds the build tree's library, without --cupti-lib
    run = os.path.join(tmp, "tree")
    rc, err = rt.record(run, ["-q"], [prog("exit7")])
    md = meta(run)
    if XPCUPTI:
        want = os.path.realpath(XPCUPTI)
        check(rc == 7 and md["gpu_capture_armed"] is True and md["cupti_library"] == want,
              "build/bin/xpcap arms GPU capture with %s (%r %r)" % (want, md["cupti_library"], err))
        check(md["gpu_not_armed"] is None, "meta.json: no reason for not being armed")
        # a copied xpcap uses the library next to it
        bindir = os.path.join(tmp, "bin")
        os.mkdir(bindir)
        shutil.copy(rt.XPCAP, bindir)
        shutil.copy(XPCUPTI, bindir)
        run = os.path.join(tmp, "copied")
        rc, err = record_with(os.path.join(bindir, "xpcap"), run, ["-q"], [prog("exit7")])
        md = meta(run)
        check(rc == 7 and md["cupti_library"] == os.path.join(os.path.realpath(bindir), "libxpcupti.so"),
              "a copied xpcap uses the library next to it (%r %r)" % (md["cupti_library"], err))
    else:
        print("note: this build has no CUPTI (no libxpcupti.so): checking the reason instead")
        check(md["gpu_capture_armed"] is False and "libxpcupti.so" in (md["gpu_not_armed"] or ""),
              "meta.json says why GPU capture is not armed (%r)" % md["gpu_not_armed"])
    # alone, it never takes a library of the build tree it came from
    alone = os.path.join(tmp, "alone")
    os.mkdir(alone)
    shutil.copy(rt.XPCAP, alone)
    run = os.path.join(tmp, "alone-run")
    rc, err = record_with(os.path.join(alone, "xpcap"), run, ["-q"], [prog("exit7")])
    md = meta(run)
    lib = md["cupti_library"] or ""
    check(rc == 7 and not lib.startswith(os.path.realpath(os.path.dirname(rt.XPCAP)) + "/") and
          not lib.startswith(os.path.realpath(os.path.join(rt.PROGDIR, "..", "..")) + "/capture"),
          "a copied xpcap alone: the installed library or none (%r)" % lib)
    check(md["gpu_capture_armed"] == bool(lib) and (lib or "libxpcupti.so" in md["gpu_not_armed"]),
          "a copied xpcap alone: armed with an installed library, or says why not (%r)" %
          md["gpu_not_armed"])


def t_notarmed(tmp):
    # a CUDA program recorded while GPU capture cannot be armed (attached
    # with -p): a line as soon as it maps CUDA, one at the end, meta.json,
    # and xpcorr info and report say why
    lib, cmd = fake_cudart(tmp)
    # it maps CUDA once xpcap has attached (not before: that is another case)
    target = subprocess.Popen(cmd, stdin=subprocess.PIPE, **rt.QUIET)
    run = os.path.join(tmp, "attached")
    with tempfile.TemporaryFile(mode="w+") as errf:
        p = subprocess.Popen([rt.XPCAP, "record", "-o", run, "-p", str(target.pid), "--duration",
                              "3"], stdout=subprocess.DEVNULL, stderr=errf)
        try:
            rt.wait_recording(run, p)
            target.communicate(b"go\n", timeout=60)
            rc = p.wait(timeout=60)
        finally:
            for q in (target, p):
                if q.poll() is None:
                    q.kill()
                    q.wait()
        errf.seek(0)
        err = errf.read()
    check(rt.detached(), "no BPF program of ours left attached")
    lines = err.splitlines()
    start = [i for i, l in enumerate(lines) if "loaded %s, but GPU capture is not armed" % lib in l]
    end = [i for i, l in enumerate(lines) if l.startswith("xpcap: no GPU records") and lib in l]
    check(rc == 0 and start and end and start[0] < end[0] and "-p or -a" in lines[start[0]],
          "xpcap says it at the start and at the end (%r)" % err)
    md = meta(run)
    check(md["cuda_library"] == {"path": lib, "pid": target.pid} and
          "-p or -a" in (md["gpu_not_armed"] or ""),
          "meta.json: cuda_library and gpu_not_armed (%r %r)" % (md["cuda_library"], md["gpu_not_armed"]))
    info = rt.ingests(run, "not armed")
    check("capture NOT armed" in info and "NO GPU WORK" in info and "-p or -a" in info,
          "xpcorr info repeats the reason")
    rep = subprocess.run([rt.XPCORR, "report", run], capture_output=True, text=True).stdout
    rep = " ".join(rep.split())     # the footer is wrapped to the terminal
    check("GPU capture was not armed" in rep and lib in rep and "-p or -a" in rep,
          "xpcorr report repeats it")
    # --no-gpu: the user's choice, no warning, the reason in meta.json
    run = os.path.join(tmp, "nogpu")
    rc, err = rt.record(run, ["-q", "--no-gpu"], cmd[:-1])
    md = meta(run)
    check(rc == 0 and "not armed" not in err and md["gpu_not_armed"] == "--no-gpu was given" and
          md["cuda_library"]["path"] == lib, "--no-gpu: recorded in meta.json, no warning (%r)" % err)


def t_window(tmp):
    # the options, and what meta.json keeps of them
    for args, why in ((["--capture-range", "cuda"], "invalid capture range"),
                      (["--capture-range", "nvtx:"], "invalid capture range"),
                      (["--capture-range-count", "2"], "needs --capture-range"),
                      (["--capture-range", "nvtx:x", "--capture-range-count", "0"], "invalid capture range count"),
                      (["--capture-range", "cudaProfilerApi", "--no-gpu"], "needs GPU capture"),
                      (["--delay", "-1"], "invalid delay")):
        run = os.path.join(tmp, "bad")
        rc, err = rt.record(run, args, [prog("exit7")])
        check(rc == 2 and why in err and len(err.strip().splitlines()) == 1 and not os.path.exists(run),
              "%s: exit 2, one line, nothing made (%r)" % (" ".join(args), err))
    run = os.path.join(tmp, "nvtx")
    rc, err = rt.record(run, ["-q", "--capture-range", "nvtx:train step", "--capture-range-count", "3"],
                        [prog("exit7")])
    w = meta(run)["capture_window"]
    check(rc == 7 and w["range"] == "nvtx:train step" and w["range_count"] == 3,
          "meta.json capture_window (%r)" % w)
    # a range never reached: info and report say so, not "not a CUDA program"
    info = " ".join(rt.ingests(run, "a range never reached").split())
    rep = " ".join(subprocess.run([rt.XPCORR, "report", run], capture_output=True,
                                  text=True).stdout.split())
    check("--capture-range nvtx:train step: no GPU work inside the range" in info and
          "--capture-range nvtx:train step: no GPU work inside the range" in rep,
          "info and report name the range that was never reached")
    # --delay: no CPU samples before it ends (the program is over by then)
    run = os.path.join(tmp, "late")
    rc, err = rt.record(run, ["-q", "-F", "999", "--delay", "100"],
                        [prog("hotspots"), os.path.join(rt.PROGDIR, "libhotlib.so"), "1"])
    md = meta(run)
    check(md["records"]["sample"]["written"] == 0 and md["records"]["mmap"]["written"] > 0 and
          md["capture_window"]["delay_s"] == 100, "--delay 100: no samples, the mappings kept (%r)" %
          md["records"]["sample"])
    run = os.path.join(tmp, "early")
    rc, err = rt.record(run, ["-q", "-F", "999", "--delay", "0.2"],
                        [prog("hotspots"), os.path.join(rt.PROGDIR, "libhotlib.so"), "1"])
    md = meta(run)
    first = min(int(r["ts"]) for r in rt.samples(rt.dump(run)) if "ts" in r) \
        if md["records"]["sample"]["written"] else 0
    check(md["records"]["sample"]["written"] > 0 and first >= md["capture_window"]["from_monotonic_ns"],
          "--delay 0.2: samples only after it (%d written)" % md["records"]["sample"]["written"])


def t_range(tmp):
    # --capture-range: CPU samples only while the program's window is open.
    # A stand-in for the injection library (libxpmarker-test.so exports the
    # marker) calls the marker as window.c does when a range opens and closes
    lib = os.path.realpath(os.path.join(rt.MARKERDIR, "libxpmarker-test.so"))
    times = os.path.join(tmp, "times")
    script = ("import ctypes, time\n"
              "m = ctypes.CDLL(%r).xpcap_correlation_marker\n"
              "m.argtypes = [ctypes.c_uint64, ctypes.c_uint32]\n"
              "def spin(s):\n"          # CPU time: as many samples under any load
              "    end = time.process_time() + s\n"
              "    while time.process_time() < end: pass\n"
              "spin(0.4)\n"
              "t0 = time.monotonic_ns(); m(0, 0x7fff0001); spin(0.6); m(0, 0x7fff0002)\n"
              "t1 = time.monotonic_ns()\n"
              "spin(0.4); m(5, 211)\n"
              "open(%r, 'w').write('%%d %%d' %% (t0, t1))\n" % (lib, times))
    run = os.path.join(tmp, "range")
    rc, err = rt.record(run, ["-q", "-F", "999", "--capture-range", "cudaProfilerApi",
                              "--cupti-lib", lib], ["python3", "-c", script])
    check(rc == 0, "recorded (%d %r)" % (rc, err))
    t0, t1 = (int(x) for x in open(times).read().split())
    recs = rt.dump(run)
    ts = [int(r["ts"]) for r in rt.samples(recs)]
    launches = [r for r in recs if r["kind"] == "launch"]
    print("samples %d, window %.3f s, first %+.1f ms, last %+.1f ms" % (
        len(ts), (t1 - t0) / 1e9, (min(ts) - t0) / 1e6 if ts else 0, (max(ts) - t1) / 1e6 if ts else 0))
    check(len(ts) > 100 and all(t0 - 1000000 <= t <= t1 + 1000000 for t in ts),
          "samples only inside the window (%d)" % len(ts))
    check(not launches, "no launch record outside it, nor the window's own markers (%d)" % len(launches))
    # the same program without a range: samples before and after too
    run = os.path.join(tmp, "norange")
    rc, err = rt.record(run, ["-q", "-F", "999", "--cupti-lib", lib], ["python3", "-c", script])
    t0, t1 = (int(x) for x in open(times).read().split())
    ts = [int(r["ts"]) for r in rt.samples(rt.dump(run))]
    check(any(t < t0 for t in ts) and any(t > t1 for t in ts), "without it: samples outside too")


def marker_links(pid):
    """Types of the links process pid holds that fire xp_marker, as its
    fdinfo names them ("uprobe_multi", "perf"): other engineers' xpcaps
    on a shared machine have theirs."""
    bpftool = shutil.which("bpftool") or "/usr/sbin/bpftool"
    progs = json.loads(subprocess.run([bpftool, "-j", "prog", "show"], capture_output=True,
                                      text=True).stdout or "[]")
    ids = {p["id"] for p in progs if p.get("name") == "xp_marker"}
    types = []
    for fd in os.listdir("/proc/%d/fdinfo" % pid):
        try:
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                info = f.read()
        except OSError:
            continue
        kind = re.search(r"^link_type:\s+(\S+)", info, re.M)
        prog = re.search(r"^prog_id:\s+(\d+)", info, re.M)
        if kind and prog and int(prog.group(1)) in ids:
            types.append(kind.group(1))
    return types


def t_markerlink(tmp):
    # issue 42 item 2: the marker uprobe is a uprobe_multi link where the
    # kernel has them (6.6+), whose detach waits on the kernel once rather
    # than three times (most of what arming added to `xpcap record -- true`);
    # a perf event link before 6.6. Either way it fires, and nothing stays.
    lib = os.path.realpath(os.path.join(rt.MARKERDIR, "libxpmarker-test.so"))
    script = ("import ctypes, sys\n"
              "m = ctypes.CDLL(%r).xpcap_correlation_marker\n"
              "m.argtypes = [ctypes.c_uint64, ctypes.c_uint32]\n"
              "m(5, 211); sys.stdin.readline(); m(6, 211)\n" % lib)
    run = os.path.join(tmp, "markerlink")
    p = subprocess.Popen([rt.XPCAP, "record", "-q", "-o", run, "--cupti-lib", lib, "--",
                          "python3", "-c", script], stdin=subprocess.PIPE, **rt.QUIET)
    try:
        rt.wait_recording(run, p)
        types = []
        rt.wait_for(lambda: types.extend(marker_links(p.pid)) or types, "the marker's link")
        p.communicate(b"go\n", timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    release = tuple(int(x) for x in re.findall(r"\d+", os.uname().release)[:2])
    want = "uprobe_multi" if release >= (6, 6) else "perf"
    check(types == [want], "kernel %s: the marker fires through one %s link (%s)" % (
        os.uname().release, want, types))
    check(p.returncode == 0 and rt.detached(), "xpcap exits 0, nothing of ours left attached")
    corr = sorted(int(r["corr"]) for r in rt.dump(run) if r["kind"] == "launch")
    check(corr == [5, 6], "both marker calls recorded as launches (%s)" % corr)


def verified_insns(pid):
    """Program name -> instructions the verifier walked, of the BPF
    programs process pid holds (their fdinfo, Linux 5.16+)."""
    bpftool = shutil.which("bpftool") or "/usr/sbin/bpftool"
    progs = json.loads(subprocess.run([bpftool, "-j", "prog", "show"], capture_output=True,
                                      text=True).stdout or "[]")
    names = {p["id"]: p.get("name") for p in progs}
    out = {}
    for fd in os.listdir("/proc/%d/fdinfo" % pid):
        try:
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                info = f.read()
        except OSError:
            continue
        prog = re.search(r"^prog_id:\s+(\d+)", info, re.M)
        n = re.search(r"^verified_insns:\s+(\d+)", info, re.M)
        if prog and n and "link_type" not in info:
            out[names.get(int(prog.group(1)))] = int(n.group(1))
    return out


def t_verified(tmp):
    # issue 42 item 2: the stack copies' chunked read no longer makes the
    # verifier walk every length apart. With 64 KiB copies everywhere the
    # marker, sampling and off-CPU programs each took 60-70 thousand
    # verified instructions (0.16-1.2 s of xpcap's start-up); now about 3000
    lib = os.path.realpath(os.path.join(rt.MARKERDIR, "libxpmarker-test.so"))
    run = os.path.join(tmp, "verified")
    p = subprocess.Popen([rt.XPCAP, "record", "-q", "-o", run, "--cupti-lib", lib,
                          "--call-graph", "dwarf,65528", "--launch-stacks", "uprobe",
                          "--launch-call-graph", "dwarf,65528", "--off-cpu", "--",
                          "python3", "-c", "import sys; sys.stdin.readline()"],
                         stdin=subprocess.PIPE, **rt.QUIET)
    try:
        rt.wait_recording(run, p)
        counts = verified_insns(p.pid)
        p.communicate(b"go\n", timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    if not counts:
        print("note: this kernel's fdinfo has no verified_insns (before 5.16): not checked")
        return
    print("verified instructions: %s" % counts)
    progs = ("xp_marker", "xp_sample_cpu", "xp_switch")
    check(all(0 < counts.get(n, 0) < 10000 for n in progs),
          "the three programs with stack copies verify in under 10000 instructions each")
    check(p.returncode == 0 and rt.detached(), "xpcap exits 0, nothing of ours left attached")


TESTS = {name[2:]: fn for name, fn in globals().items() if name.startswith("t_")}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in TESTS:
        print("usage: gpulib_test.py " + "|".join(sorted(TESTS)))
        return 2
    rt.require_bpf()
    tmp = tempfile.mkdtemp(prefix="xp-gpulib-")
    try:
        TESTS[sys.argv[1]](tmp)
    except rt.Failure as e:
        print("FAIL:", e)
        print("(run left in %s)" % tmp)
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
