#!/usr/bin/env python3
"""cpu-pylines.py - `xpcorr report --by cpu` and `--by source` on CPU samples
whose stacks carry Python lines (xp_frames kind 6 with file, line and
qualified name, as the samplers are to record them, issue 39), and `xpcorr
info`'s warning for Python threads sampled without Python frames.

The synthetic golden run is ingested, then its samples are replaced by
stacks made here, with known samples per Python line:
  A: python3.12 main > eval > train.py:10 main > eval > model.py:20 Model.step > PyNumber_Add  x60
  B: python3.12 main > eval > train.py:10 main > eval > model.py:22 Model.step > xp_lib_leaf   x30
  C: python3.12 main > eval > train.py:11 main > eval > model.py:30 Model.loss > eval          x10
  F: python3.12 main > eval > train.py:12 main > eval > torch/.../linear.py:125 Linear.forward > eval  x7
  D: python3.12 main > Py_RunMain                                                              x5
  E: python3.12 main > eval (another thread: no Python frame)                                 x5
Checked against those counts, and the text/csv/json compared with
tests/golden/cpu-pylines/ (regenerate: add --regenerate, review git diff).

    cpu-pylines.py XPCORR GEN_RUN FIXTURE_EXE FIXTURE_LIB GOLDEN_DIR [--regenerate]
"""
import csv
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

PY = "/usr/bin/python3.12"
LIBPY = "/usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0"
TORCH = "/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py"
STACKS = {  # name: (tid, samples, frames root first: (symbol, module, kind, line))
    "A": (1001, 60, [("main", PY, 0, None), ("_PyEval_EvalFrameDefault", LIBPY, 0, None),
                     ("main", "/home/u/proj/train.py", 6, 10),
                     ("_PyEval_EvalFrameDefault", LIBPY, 0, None),
                     ("Model.step", "/home/u/proj/model.py", 6, 20), ("PyNumber_Add", LIBPY, 0, None)]),
    "B": (1001, 30, [("main", PY, 0, None), ("_PyEval_EvalFrameDefault", LIBPY, 0, None),
                     ("main", "/home/u/proj/train.py", 6, 10),
                     ("_PyEval_EvalFrameDefault", LIBPY, 0, None),
                     ("Model.step", "/home/u/proj/model.py", 6, 22), ("xp_lib_leaf", "LIB", 0, None)]),
    "C": (1001, 10, [("main", PY, 0, None), ("_PyEval_EvalFrameDefault", LIBPY, 0, None),
                     ("main", "/home/u/proj/train.py", 6, 11),
                     ("_PyEval_EvalFrameDefault", LIBPY, 0, None),
                     ("Model.loss", "/home/u/proj/model.py", 6, 30),
                     ("_PyEval_EvalFrameDefault", LIBPY, 0, None)]),
    "F": (1001, 7, [("main", PY, 0, None), ("_PyEval_EvalFrameDefault", LIBPY, 0, None),
                    ("main", "/home/u/proj/train.py", 6, 12),
                    ("_PyEval_EvalFrameDefault", LIBPY, 0, None),
                    ("Linear.forward", TORCH, 6, 125),
                    ("_PyEval_EvalFrameDefault", LIBPY, 0, None)]),
    "D": (1001, 5, [("main", PY, 0, None), ("Py_RunMain", LIBPY, 0, None)]),
    "E": (1002, 5, [("main", PY, 0, None), ("_PyEval_EvalFrameDefault", LIBPY, 0, None)]),
}


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check(cond, what):
    if not cond:
        fail(what)
    print("ok:", what)


def build_db(db, lib, halve=""):
    c = sqlite3.connect(db)
    c.execute("DELETE FROM xp_samples")
    sid = c.execute("SELECT coalesce(max(id), 0) FROM StringIds").fetchone()[0]
    fid = c.execute("SELECT coalesce(max(id), 0) FROM xp_frames").fetchone()[0]
    nid = c.execute("SELECT coalesce(max(id), 0) FROM xp_stacks").fetchone()[0]
    strings, frames, nodes = {}, {}, {}

    def string(s):
        nonlocal sid
        if s not in strings:
            sid += 1
            c.execute("INSERT INTO StringIds(id, value) VALUES(?, ?)", (sid, s))
            strings[s] = sid
        return strings[s]

    def frame(sym, mod, kind, line):
        nonlocal fid
        key = (sym, mod, kind, line)
        if key not in frames:
            fid += 1
            c.execute("INSERT INTO xp_frames(id, symbol, module, kind, line) VALUES(?, ?, ?, ?, ?)",
                      (fid, string(sym), string(mod), kind, line))
            frames[key] = fid
        return frames[key]

    ts = 10**9
    for name, (tid, n, fr) in sorted(STACKS.items()):
        parent = 0
        for depth, (sym, mod, kind, line) in enumerate(fr):
            key = (parent, frame(sym, lib if mod == "LIB" else mod, kind, line))
            if key not in nodes:
                nid += 1
                c.execute("INSERT INTO xp_stacks(id, parent, frame, depth) VALUES(?, ?, ?, ?)",
                          (nid, key[0], key[1], depth))
                nodes[key] = nid
            parent = nodes[key]
        for _ in range(n // 2 if name in halve else n):
            ts += 1000
            c.execute("INSERT INTO xp_samples(ts, pid, tid, cpu, stack_id, period)"
                      " VALUES(?, 1000, ?, 0, ?, 1)", (ts, tid, parent))
    c.commit()
    c.close()


def run(xpcorr, args):
    p = subprocess.run([xpcorr] + args, capture_output=True, text=True)
    if p.returncode:
        fail("xpcorr %s: rc %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()))
    return p.stdout


def check_values(xpcorr, db):
    doc = json.loads(run(xpcorr, ["report", "--format", "json", db]))
    check(doc["report"] == "cpu" and doc["cpu"]["samples"] == 117 and
          doc["cpu"]["python_samples"] == 107, "--by cpu: 117 samples, 107 with a Python frame")
    f = {r["name"]: (r["self_samples"], r["total_samples"]) for r in doc["cpu_functions"]}
    ln = {r["name"]: (r["self_samples"], r["total_samples"]) for r in doc["cpu_lines"]}
    # the interpreter's own frames under a line are the line's time; a
    # native function the line calls keeps its own (A, C vs B)
    check(doc["cpu_functions"][0]["name"] == "Model.step (model.py)" and
          f["Model.step (model.py)"] == (60, 90), "Model.step first: self 60 (A), total 90 (A+B)")
    check(f["xp_lib_leaf (libxptarget.so)"] == (30, 30), "xp_lib_leaf: self 30 (B)")
    check(f["Model.loss (model.py)"] == (10, 10), "Model.loss: self 10 (C, an eval leaf)")
    check(f["main (train.py)"] == (0, 107), "train.py's main: total 107, no self")
    check(f["Linear.forward (linear.py)"] == (7, 7), "a library's function named by its file (F)")
    check(f["_PyEval_EvalFrameDefault (libpython3.12.so.1.0)"] == (5, 112),
          "the evaluator: self 5 (E, no Python frame), total once per stack (112)")
    check(ln == {"model.py:20 Model.step": (60, 60), "model.py:22 Model.step": (0, 30),
                 "model.py:30 Model.loss": (10, 10), "train.py:10 main": (0, 90),
                 "train.py:11 main": (0, 10), "train.py:12 main": (0, 7),
                 "linear.py:125 Linear.forward": (7, 7)},
          "lines as file.py:LINE qualname (as launch stacks name them), self and total")
    src = list(csv.reader(io.StringIO(run(xpcorr, ["report", "--by", "source", "--format", "csv",
                                                    db]))))
    rows = {(r[0], r[1], r[2], r[3]): (int(r[4]), int(r[5])) for r in src[1:]}
    check(src[1][:3] == ["function", "model.py", "Model.step"] and
          rows[("function", "model.py", "Model.step", "")] == (90, 90),
          "--by source: Model.step first, self 90 (its lines' own and what they call, py-spy)")
    check(rows[("line", "model.py", "Model.step", "20")] == (60, 60) and
          rows[("line", "model.py", "Model.step", "22")] == (30, 30),
          "--by source: its lines 20 and 22 with 60 and 30")
    check(rows[("function", "torch/nn/modules/linear.py", "Linear.forward", "")] == (7, 7),
          "--by source: a library's file from its package, as the GPU source view lists it")
    check(rows[("function", "train.py", "main", "")] == (0, 107) and
          rows[("function", "libpython3.12.so.1.0", "Py_RunMain", "")] == (5, 5),
          "--by source: train.py's main total 107; samples with no Python at their native leaf")
    check(("function", "libxptarget.so", "xp_lib_leaf", "") not in rows,
          "--by source: a native function under a Python line is the line's")
    info = json.loads(run(xpcorr, ["info", "--format", "json", db]))
    ps = info.get("python_samples", {})
    check(ps == {"threads": 2, "samples": 117, "with_python_frames": 107,
                 "interpreter_without_python_frames": 5, "threads_without_python_frames": 1},
          "info: 2 Python threads, 5 samples in the interpreter with no Python frame (%s)" % ps)
    check(any("Python threads sampled without their Python frames: 1 thread (process 1000):"
              " 5 of 5 samples ran the interpreter" in w["message"]
              for w in info["warnings"]), "info warns of the thread sampled without Python frames")


def check_diff(xpcorr, a, b):
    doc = json.loads(run(xpcorr, ["diff", "--format", "json", a, b]))
    t = {x["section"]: {r["name"]: (r["base_ns"], r["new_ns"]) for r in x["rows"]}
         for x in doc["tables"]}
    check(list(t) == ["cpu_self", "cpu_total", "cpu_line", "cpu_stack"],
          "diff of CPU-only runs with Python lines: functions, lines, stacks (%s)" % list(t))
    check(t["cpu_line"] == {"model.py:20 Model.step": (60, 30), "model.py:30 Model.loss": (10, 10),
                            "linear.py:125 Linear.forward": (7, 7)},
          "diff: Python lines by self samples, A's line halved (%s)" % t["cpu_line"])
    check(t["cpu_self"]["Model.step (model.py)"] == (60, 30) and
          t["cpu_total"]["main (train.py)"] == (107, 77) and
          t["cpu_self"]["xp_lib_leaf (libxptarget.so)"] == (30, 30),
          "diff: functions by self and total, native ones by function and module")


def main():
    if len(sys.argv) < 6:
        print(__doc__)
        return 2
    xpcorr, gen, exe, lib, golden = sys.argv[1:6]
    regen = sys.argv[6:] == ["--regenerate"]
    tmp = tempfile.mkdtemp()
    try:
        subprocess.run([gen, "golden", exe, lib, tmp + "/run"], check=True)
        run(xpcorr, ["ingest", "--quiet", tmp + "/run"])
        db = tmp + "/cpu.db"
        shutil.copy(tmp + "/run/xpcorr.db", db)
        build_db(db, os.path.realpath(lib))
        check_values(xpcorr, db)
        shutil.copy(tmp + "/run/xpcorr.db", tmp + "/half.db")
        build_db(tmp + "/half.db", os.path.realpath(lib), halve="A")
        check_diff(xpcorr, db, tmp + "/half.db")
        out = {}
        for fmt in ("text", "csv", "json"):
            out["cpu." + fmt] = run(xpcorr, ["report", "--format", fmt, "--width", "0", db])
            out["source." + fmt] = run(xpcorr, ["report", "--by", "source", "--format", fmt,
                                                "--width", "0", db])
        out["info.txt"] = run(xpcorr, ["info", db]).split("warnings:")[1]
        out = {k: v.replace(os.path.realpath(lib), "@LIB@").replace(tmp, "@TMP@")
               for k, v in out.items()}
        if regen:
            os.makedirs(golden, exist_ok=True)
            for k, v in out.items():
                open(os.path.join(golden, k), "w").write(v)
            print("golden files written to", golden)
            return 0
        bad = 0
        for k, v in sorted(out.items()):
            want = open(os.path.join(golden, k)).read()
            if want != v:
                print("FAIL: %s differs from %s:" % (k, os.path.join(golden, k)))
                sys.stdout.writelines(__import__("difflib").unified_diff(
                    want.splitlines(True), v.splitlines(True), "golden", "now"))
                bad = 1
        check(not bad, "text, csv and json as the golden files")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
