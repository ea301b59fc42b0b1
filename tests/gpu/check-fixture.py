#!/usr/bin/env python3
"""check-fixture.py - the offline stages on real runs recorded on the H100
(fixtures/, recorded by tests/gpu/record-fixtures.sh), without a GPU.

  check-fixture.py XPCORR fixtures/h100-workload   # the CUDA workload's ground truth
  check-fixture.py XPCORR fixtures/h100-torch      # the PyTorch loop vs torch.profiler
  check-fixture.py XPCORR fixtures/h100-torch-1024 # the same loop, larger tensors
  check-fixture.py XPCORR fixtures/h100-torch-inproc # the loop at the defaults (in-process, Python lines)
  check-fixture.py XPCORR fixtures/h100-hf         # transformers GPT-2/LLaMA at the defaults

Workload: re-ingests the raw run here and checks every ground-truth kernel's
instance count, graph replays, copies and memsets, and that every GPU record
is attributed exactly to a launch record; then, in device.db (ingested on the
GPU machine, where libcuda's CFI let the launch stacks be unwound), that each
kernel's launching stack goes through the CPU function that launched it.
Torch: our GPU record count equals torch.profiler's, exact coverage, and, in
device.db, the share of launch stacks and of GPU time that reach a Python frame
(py::, after offline DWARF unwinding of the stack copies) stays above a floor.
"""
import importlib.util
import json
import lzma
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def report(xpcorr, target, *args):
    p = subprocess.run([xpcorr, "report", "--format", "json", "--top", "0", *args, target],
                       capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stderr, file=sys.stderr)
        sys.exit(1)
    return json.loads(p.stdout)


def check_width(xpcorr, target):
    """Every view as text, as a person reads it in a pipe: no line over 120
    characters (the default width without $COLUMNS)."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    widest = {}
    for view in ("kernel", "stack", "api", "memop", "thread", "graph", "nvtx", "source"):
        p = subprocess.run([xpcorr, "report", "--by", view, "--top", "0", target],
                           capture_output=True, text=True, env=env)
        widest[view] = max((len(line) for line in p.stdout.splitlines()), default=0)
    check(max(widest.values()) <= 120, "every report view fits 120 columns (%s)" %
          ", ".join("%s %d" % kv for kv in widest.items()))


def device_db(fixture, tmp):
    """device.db, or device.db.xz unpacked (large databases are kept compressed)."""
    plain = os.path.join(fixture, "device.db")
    if os.path.exists(plain):
        return plain
    out = os.path.join(tmp, "device.db")
    with lzma.open(plain + ".xz") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def reingest(xpcorr, fixture, tmp):
    """A copy of the raw run, ingested here (no device.db)."""
    run = os.path.join(tmp, "run")
    shutil.copytree(fixture, run, ignore=shutil.ignore_patterns("device.db*", "report.*"))
    p = subprocess.run([xpcorr, "ingest", "--quiet", run], capture_output=True, text=True)
    check(p.returncode == 0, "xpcorr ingest of the raw run (%s)" % p.stderr.strip()[:200])
    return run


def short(name):
    return name.split("(")[0].split("<")[0].split()[-1]


def exact_share(rep):
    cov = rep["coverage"]
    exact = sum(r["gpu_ns"] for r in cov["by_how"] if r["how"] == "exact")
    return 100.0 * exact / cov["gpu_ns"] if cov["gpu_ns"] else 0.0


def check_workload(xpcorr, fixture, tmp):
    truth = json.load(open(os.path.join(fixture, "truth.json")))
    want = dict(truth["parent"]["kernels"])
    want.update(truth["child_early"]["kernels"])
    run = reingest(xpcorr, fixture, tmp)
    rep = report(xpcorr, run)
    got = {short(r["name"]): r["instances"] for r in rep["rows"]}
    for k, n in sorted(want.items()):
        check(got.get(k) == n, "kernel %s: %s instances, ground truth %d" % (k, got.get(k), n))
    check(set(got) == set(want), "no kernels beyond the ground truth (%s)" % sorted(set(got) - set(want)))
    mem = report(xpcorr, run, "--by", "memop")
    print("     memops: " + ", ".join("%s x%d" % (r["name"], r["instances"]) for r in mem["rows"]))
    graph = report(xpcorr, run, "--by", "graph")
    replays = sum(g["replays"] for g in graph["graphs"])
    check(replays == truth["parent"]["graph_launches"],
          "graph replays: %d, ground truth %d" % (replays, truth["parent"]["graph_launches"]))
    # NVTX: each phase holds the kernels launched inside it
    k = truth["parent"]["kernels"]
    want_nvtx = {"phase_alpha": k["k_alpha"], "phase_beta": k["k_beta"],
                 "phase_graph": k["k_graph_a"] + k["k_graph_b"]}
    nvtx = {r["name"]: r["instances"] for r in report(xpcorr, run, "--by", "nvtx")["rows"]}
    check(nvtx == want_nvtx, "kernels by NVTX range: %s, expected %s" % (nvtx, want_nvtx))
    check(exact_share(rep) == 100.0, "GPU time attributed exactly: %.1f%%" % exact_share(rep))
    rep = report(xpcorr, device_db(fixture, tmp), "--frames", "12")
    launchers = truth["parent"]["launchers"]
    for row in rep["rows"]:
        k = short(row["name"])
        if k not in launchers:
            continue
        top = row["stacks"][0] if row["stacks"] else {"frames": "", "share_pct": 0}
        check(launchers[k] in top["frames"] and top["share_pct"] == 100.0,
              "%s launched from %s: %s (%.1f%%)" % (k, launchers[k], top["frames"][:120],
                                                     top["share_pct"]))


def load_script(file, name):
    """A function of a sibling script (named with a dash, so not importable)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), file)
    spec = importlib.util.spec_from_file_location(file.replace("-", "_")[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def load_python_share(name="python_share"):
    """python-share.py's python_share() (or python_line_share()), the one
    definition of the measure."""
    return load_script("python-share.py", name)


# Floors on the recorded fixtures (default 8 KiB stack copies, unwound on the
# GPU machine): cuBLAS and reduction launches have frames larger than the
# copy, so a few launch stacks stop before Python; a broken unwinder gives 0.
PYTHON_FLOORS = {"h100-torch": (97.0, 90.0), "h100-torch-1024": (96.0, 60.0),
                 # the defaults (in-process 64 KiB copies): every launch reaches Python
                 "h100-torch-inproc": (99.0, 99.0), "h100-hf": (99.0, 99.0)}


def check_torch(xpcorr, fixture, tmp):
    run = reingest(xpcorr, fixture, tmp)
    kern = report(xpcorr, run)
    mem = report(xpcorr, run, "--by", "memop")
    ours = sum(r["instances"] for r in kern["rows"]) + sum(r["instances"] for r in mem["rows"])
    count = os.path.join(fixture, "torch-profiler-count.txt")
    if os.path.exists(count):
        with open(count) as f:
            prof = int(f.read().strip().split("=")[1])
        # the profiled loop ran the same steps; torch.profiler counts kernels, copies and memsets
        check(ours == prof, "GPU records: ours %d, torch.profiler %d" % (ours, prof))
    else:
        print("     GPU records: %d (no torch.profiler count recorded for this run)" % ours)
    check(exact_share(kern) >= 99.0, "exact attribution %.2f%% of GPU time (>= 99%%)" % exact_share(kern))
    # Python lines come from the Python stacks the library took at the launches:
    # they stand even here, where libtorch is missing and the native unwind stops
    lines = load_python_share("python_line_share")(sqlite3.connect(os.path.join(run, "xpcorr.db")))
    if lines is None:
        print("     Python lines: none (recorded without Python stacks)")
    else:
        check(lines[0] >= 99.0, "GPU time of Python threads with a Python line, ingested here:"
              " %.2f%% (>= 99%%)" % lines[0])
    truth = os.path.join(fixture, "truth-lines.json")
    if os.path.exists(truth):
        # the lines against the dispatch-mode ground truth taken on the GPU machine
        check(load_script("check-pylines.py", "check_lines")(xpcorr, run, truth, 99.0),
              "launch lines (ingested here) agree with truth-lines.json for >= 99% of GPU time")
        # report --by source: GPU time per launching line, the same answer
        with open(truth) as f:
            sites = {(os.path.basename(k.rsplit(":", 1)[0]), k.rsplit(":", 1)[1])
                     for k in json.load(f)["sites"]}
        src = report(xpcorr, run, "--by", "source", "--top", "0")
        lines_self = [("%s:%s" % (f["file"], l["line"]), l["self_ns"])
                      for f in src["functions"] for l in f["lines"] if l["self_ns"]]
        lines_self.sort(key=lambda x: -x[1])
        on_truth = 100.0 * sum(ns for name, ns in lines_self
                               if (os.path.basename(name.rsplit(":", 1)[0]), name.rsplit(":", 1)[1])
                               in sites) / max(src["total_ns"], 1)
        check(on_truth >= 99.0, "report --by source: %.1f%% of GPU time on lines the truth"
              " confirms (>= 99%%); first line %s" % (on_truth, lines_self[0][0] if lines_self else "-"))
        # the text report names a launch site by its line, then PyTorch's operation
        # (from libtorch's symbols: the database made on the GPU machine), and
        # merges the stacks that read the same
        text = subprocess.run([xpcorr, "report", "--top", "1", "--stacks", "1",
                               device_db(fixture, tmp)],
                              capture_output=True, text=True).stdout.splitlines()
        site = next((line for line in text if "exact" in line), "")
        share = float(site.split("%")[0]) if "%" in site else 0.0
        want = {"h100-torch-inproc": "torch_loop.py:28 tiny_elementwise \u203a aten::mul.Tensor | "}
        name = os.path.basename(os.path.normpath(fixture))
        if name in want:
            check(want[name] in site and share >= 99.0,
                  "the top kernel's site, merged: %s" % site.strip()[:90])
            # json: the same stack as an array of frames, the Python line with its file and line
            top = report(xpcorr, device_db(fixture, tmp), "--top", "1", "--stacks", "1")
            lines = [f for f in top["rows"][0]["stacks"][0].get("frame_list", [])
                     if f["kind"] == "python_line"]
            check(bool(lines) and lines[0]["file"].endswith("torch_loop.py") and
                  lines[0]["line"] == 28, "json frame_list: innermost Python line %s"
                  % (lines[0] if lines else None))
    info = json.loads(subprocess.run([xpcorr, "info", "--format", "json", run],
                                     capture_output=True, text=True).stdout)
    missing = info["symbolization"]["modules_missing"]
    warned = any("missing or unreadable here" in w["message"] for w in info["warnings"])
    check(warned == (missing > 0), "info warns of the %d modules missing here: %s" % (missing, warned))
    share, reached, launches, _ = load_python_share()(sqlite3.connect(device_db(fixture, tmp)))
    launch_floor, gpu_floor = PYTHON_FLOORS.get(os.path.basename(os.path.normpath(fixture)), (0, 0))
    launch_pct = 100.0 * reached / (launches or 1)
    check(launch_pct >= launch_floor, "launch stacks reaching a Python frame: %d of %d, %.2f%% (>= %.0f%%)"
          % (reached, launches, launch_pct, launch_floor))
    check(share >= gpu_floor, "GPU time launched from a Python frame: %.2f%% (>= %.0f%%)"
          % (share, gpu_floor))
    # the report says the same, and names the Python function of each launch stack
    dev = report(xpcorr, device_db(fixture, tmp))
    check(abs(dev["python"]["pct"] - share) < 0.05,
          "report's Python share %.1f%% = python-share.py's %.2f%%" % (dev["python"]["pct"], share))
    row = next((r for r in dev["rows"] if "vectorized_elementwise_kernel" in r["name"]), None)
    if row and "torch" in os.path.basename(os.path.normpath(fixture)):
        top = row["stacks"][0]["frames"]
        check((top.startswith("py::tiny_elementwise:") or
               top.startswith("torch_loop.py:28 tiny_elementwise")) and " | " in top,
              "the top elementwise kernel's launch stack starts with its Python function: %s"
              % top[:80])


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    xpcorr, fixture = sys.argv[1], sys.argv[2]
    if not os.path.isdir(fixture):
        print("skip: no fixture %s (record it with tests/gpu/record-fixtures.sh)" % fixture)
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        if os.path.exists(os.path.join(fixture, "truth.json")):
            check_workload(xpcorr, fixture, tmp)
        else:
            check_torch(xpcorr, fixture, tmp)
        check_width(xpcorr, device_db(fixture, tmp))
        # the CPU flame graph opens in a browser: minimum frame width 1 px
        svg = os.path.join(tmp, "cpu.svg")
        subprocess.run([xpcorr, "export", "--format", "svg", "-o", svg, device_db(fixture, tmp)],
                       capture_output=True)
        size = os.path.getsize(svg) if os.path.exists(svg) else 0
        # (h100-torch: 62.7 MB and 189,038 frames at 0.1 px, 2.15 MB at 1 px; the
        # deepest stacks, 147 frames of single samples 1.8 px wide, make 9 MB)
        check(0 < size < 10e6, "CPU flame graph: %.2f MB (< 10 MB)" % (size / 1e6))
    print("SUMMARY: %d failed check(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
