"""pyingest_check.py XPCORR OUTFILE RUNDIR - the walker's harness output
(OUTFILE, OUTFILE.expect.json, OUTFILE.maps from pyingest_workload.py) made
into a run directory (cpu.xpr with the process's mappings, launch-PID.xpr as
written, gpu-PID.xpr with one API call and one kernel per launch), ingested
by the real xpcorr, and checked:
- every launch's stack in the database holds, as Python-line frames (kind 6),
  exactly the frames Python reported (file, qualname, line; 128 innermost at
  most), in order, as data: symbol the qualname, module the code's file,
  xp_frames.line the line (-1: none);
- `xpcorr export --format folded --weight gpu` (what report and the flame
  graphs read) shows the same frames as "file.py:LINE qualname";
- where the native unwind reached the root, the Python frames stand where
  _PyEval_EvalFrameDefault was (none left, no gap frame); elsewhere they are
  above the gap frame;
- `xpcorr report --by source --format csv` has the line of "train step.py"
  (a file name with a space) as Python says it;
- a merged job of the run and its copy (as from another host) has the same
  Python lines, once each, and the same line of "train step.py";
- xp_python_processes counts the launches, the Python stacks and the thread
  without Python.
Exit 1 on any failure, with a line per failure (the first 20)."""
import json
import os
import re
import shutil
import sqlite3
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xpr_py  # noqa: E402

xpcorr, out, run = sys.argv[1:4]
with open(out + ".expect.json", encoding="utf-8") as f:
    exp = json.load(f)
fails = []


def fail(msg):
    if len(fails) < 20:
        print("FAIL: %s: %s" % (os.path.basename(out), msg))
    fails.append(msg)


def record(rtype, fixed, tail=b""):
    body = fixed + tail
    body += b"\0" * (-len(body) % 8)
    return struct.pack("<II", rtype, 8 + len(body)) + body


def header(stream, pid):
    return b"XPCAPRAW" + struct.pack("<IIIIIIQ", 1, 40, stream, 1, pid, 0, 1)


def cpu_stream(pid, maps):
    recs = [record(4, struct.pack("<QIIII16s", 0, pid, pid, 0, 0, b"python3"))]
    for line in maps:
        parts = line.split(None, 5)
        if len(parts) < 6 or "x" not in parts[1] or not parts[5].startswith("/"):
            continue
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        path = parts[5].rstrip("\n").encode()
        fixed = struct.pack("<QIIQQQII", 0, pid, pid, lo, hi - lo, int(parts[2], 16), 5, 2)
        fixed += struct.pack("<B20sBH", 0, b"", 0, len(path))
        recs.append(record(6, fixed, path + b"\0"))
    return header(1, 0) + b"".join(recs)


def gpu_stream(pid, launches):
    recs = [record(32, struct.pack("<II", 1, 16), b"cudaLaunchKernel")]
    recs.append(record(33, struct.pack("<QIIIIIIIIIIII", 0, pid, pid, 1, pid, 130001, 13000,
                                       13000, 1, 0, 1, 0, 0)))
    for l in launches:
        name = ("k%d" % l["corr"]).encode()
        sid = 100 + l["corr"]
        recs.append(record(32, struct.pack("<II", sid, len(name)), name))
        recs.append(record(37, struct.pack("<QQQIIIIiI", l["ts"] - 500, l["ts"] + 500, l["corr"],
                                           pid, l["tid"], 13, 1, 0, 0)))
        recs.append(record(38, struct.pack("<QQQQIIII3i3iIiiIII", l["ts"] + 1000,
                                           l["ts"] + 2000 + l["corr"], l["corr"], 0, 0, 0, 1, 7,
                                           1, 1, 1, 32, 1, 1, 16, 0, 0, sid, 0, 0)))
    recs.append(record(36, struct.pack("<QIIiHH", 0, 6, 0, 0, 0, 0)))
    return header(2, pid) + b"".join(recs)


def short(path):
    """The file part of a Python-line frame (ingest/pystacks.c)."""
    base = path.rsplit("/", 1)[-1]
    if base in ("__init__.py", "__main__.py") and "/" in path:
        return "/".join(path.rsplit("/", 2)[-2:])
    return base


def cut(s):
    """A name as the walker keeps it (pyframes_check.py): 4096 UTF-8 bytes."""
    return s.encode()[:4096].decode(errors="ignore")


def frame_name(f):
    return "%s:%s %s" % (short(cut(f[0])), "?" if f[2] is None else f[2], cut(f[1]))


# the run directory
with open(out, "rb") as f:
    pid = struct.unpack_from("<I", f.read(40), 24)[0]
recs = xpr_py.read_records(out)
launches = xpr_py.PyRun(recs).launches
shutil.rmtree(run, ignore_errors=True)
os.makedirs(run)
shutil.copy(out, os.path.join(run, "launch-%d.xpr" % pid))
with open(out + ".maps") as f, open(os.path.join(run, "cpu.xpr"), "wb") as o:
    o.write(cpu_stream(pid, f.readlines()))
with open(os.path.join(run, "gpu-%d.xpr" % pid), "wb") as o:
    o.write(gpu_stream(pid, launches))
with open(os.path.join(run, "meta.json"), "w") as o:
    o.write('{"format_version": 1}\n')
p = subprocess.run([xpcorr, "ingest", "--quiet", run], capture_output=True, text=True)
if p.returncode:
    print(p.stderr)
    sys.exit("pyingest_check: xpcorr ingest failed")

db = sqlite3.connect(os.path.join(run, "xpcorr.db"))
stack_of = dict(db.execute("SELECT correlation_id, stack_id FROM xp_launches"))


def frames(node):
    """(kind, symbol, module, line) of a stack, leaf first."""
    got = []
    while node:
        node, kind, sym, mod, line = db.execute(
            "SELECT n.parent, f.kind, s.value, m.value, f.line FROM xp_stacks n"
            " JOIN xp_frames f ON f.id = n.frame JOIN StringIds s ON s.id = f.symbol"
            " JOIN StringIds m ON m.id = f.module WHERE n.id = ?", (node,)).fetchone()
        got.append((kind, sym, mod, line))
    return got


matched = gap = 0
for t in exp["takes"]:
    want = t["frames"][:xpr_py.PY_MAX_FRAMES]
    st = frames(stack_of.get(t["corr"], 0))
    py = [(sym, mod, line) for kind, sym, mod, line in st if kind == 6]
    if py != [(cut(f[1]), cut(f[0]), -1 if f[2] is None else f[2]) for f in want]:
        fail("launch %d: Python frames in the database\n  %s\n  python says\n  %s" % (
            t["corr"], py, [frame_name(f) for f in want]))
        continue
    kinds = [kind for kind, _, _, _ in st]
    evals = [sym for kind, sym, _, _ in st if sym.startswith("_PyEval_EvalFrameDefault")]
    if 7 in kinds:
        gap += 1
        # above the gap only Python frames and what called the outermost one
        if any(k != 6 for k in kinds[kinds.index(7) + 1:len(want) + kinds.index(7) + 1]):
            fail("launch %d: native frames among the Python frames above the gap" % t["corr"])
    else:
        matched += 1
        if evals and len(t["frames"]) <= xpr_py.PY_MAX_FRAMES:
            fail("launch %d: matched, yet %d evaluator frames left" % (t["corr"], len(evals)))
native = frames(stack_of.get(exp["native_corr"], 0))
if any(kind in (6, 7) for kind, _, _, _ in native):
    fail("the thread without Python has Python frames")

# the folded GPU stacks, one kernel (k<corr>) per launch
p = subprocess.run([xpcorr, "export", "--format", "folded", "--weight", "gpu", run],
                   capture_output=True, text=True)
lines = {}
for line in p.stdout.splitlines():
    stack = line.rsplit(" ", 1)[0].split(";")
    if re.fullmatch(r"k\d+", stack[-1]):
        lines[int(stack[-1][1:])] = stack


def is_python_text(f):
    """export/names/pyreach.h's xp_is_python_text: a ":LINE " before any '('."""
    m = re.match(r"[^(]*?[^:]:(\d+|\?) ", f)
    return bool(m) and m.start() == 0


for t in exp["takes"]:
    want = [frame_name(f) for f in reversed(t["frames"][:xpr_py.PY_MAX_FRAMES])]
    got = [f for f in lines.get(t["corr"], []) if is_python_text(f)]
    if got != want:
        fail("launch %d: folded Python frames\n  %s\n  python says\n  %s" % (t["corr"], got, want))

# a file name with a space: the source view has its line (the workload's
# "train step.py" takes on line 43)
spaced = [t for t in exp["takes"] if t["frames"][0][0].endswith("/train step.py")]
if not spaced:
    fail("the workload made no launch from train step.py")
p = subprocess.run([xpcorr, "report", "--by", "source", "--format", "csv", "--top", "0", run],
                   capture_output=True, text=True)
src_rows = [r for r in p.stdout.splitlines() if "train step.py" in r]
if p.returncode or not any(",43," in r or r.endswith(",43") for r in src_rows):
    fail("report --by source: no row of train step.py at line 43\n  %s" % (
        src_rows or p.stderr[-300:]))

# a job of the run twice carries the lines, each (qualname, file, line) once
job = run + "-job"
twin = run + "-twin"
for d in (job, twin):
    shutil.rmtree(d, ignore_errors=True)
shutil.copytree(run, twin)
# as if recorded on another host: merge refuses one recording given twice
tdb = sqlite3.connect(os.path.join(twin, "xpcorr.db"))
tdb.execute("UPDATE META_DATA_EXPORT SET value = 'twin-host' WHERE name = 'meta.hostname'")
tdb.commit()
tdb.close()
p = subprocess.run([xpcorr, "merge", "-o", job, run, twin], capture_output=True, text=True)
if p.returncode:
    fail("xpcorr merge: %s" % p.stderr[-300:])
else:
    jdb = sqlite3.connect(os.path.join(job, "xpcorr.db"))
    q = "SELECT count(*), count(DISTINCT line) FROM xp_frames WHERE kind = 6 AND line IS NOT NULL"
    if jdb.execute(q).fetchone() != db.execute(q).fetchone():
        fail("merged job's Python lines %r, the run's %r" % (jdb.execute(q).fetchone(),
                                                             db.execute(q).fetchone()))
    jdb.close()
    p = subprocess.run([xpcorr, "report", "--by", "source", "--format", "csv", "--top", "0", job],
                       capture_output=True, text=True)
    if not any(r.startswith('"line",') and "train step.py" in r and ",43," in r
               for r in p.stdout.splitlines()):
        fail("merged job: report --by source has no row of train step.py at line 43")
for d in (job, twin):
    shutil.rmtree(d, ignore_errors=True)

row = db.execute("SELECT launches, with_python, no_thread, unreadable, joined_gap"
                 " FROM xp_python_processes WHERE pid = ?", (pid,)).fetchone()
n = len(exp["takes"])
if not row or row[:4] != (n + 1, n, 1, 0) or row[4] != gap:
    fail("xp_python_processes %r, expected (%d, %d, 1, 0, %d)" % (row, n + 1, n, gap))
p = subprocess.run([xpcorr, "info", run], capture_output=True, text=True)
if "%d of %d launches on threads that run Python had a Python stack" % (n, n) not in p.stdout:
    fail("xpcorr info: %s" % p.stdout[-600:])
info_text = p.stdout
copy = os.environ.get("XPT_COPY", "0")
# 3.11+ tell where the innermost evaluation runs on the C stack: the
# copies of launches from Python stop there (XP_STACK_COPY_TO_PYTHON, 16)
minor = int(exp["python"].split()[0].split(".")[1])
from_py = [l for l in launches if l["py"]]
bounded = [l for l in from_py if l["stack_flags"] & 16]
copied = [l for l in from_py if not l["stack_flags"] & 64]
if copy != "0" and from_py:
    sizes = sorted(l["copy"] for l in copied)
    print("%s: copies of launches from Python: median %d bytes, %d of %d stopped at the"
          " innermost evaluation" % (os.path.basename(out), sizes[len(sizes) // 2],
                                    len(bounded), len(from_py)))
    if minor >= 11 and len(bounded) < 0.9 * len(from_py):
        fail("3.%d: only %d of %d copies stopped at the innermost evaluation"
             % (minor, len(bounded), len(from_py)))
    if minor < 11 and bounded:
        fail("3.%d: %d copies marked as stopped at an evaluation" % (minor, len(bounded)))
    if any(l["copy"] > int(copy) for l in copied):
        fail("a copy longer than %s bytes" % copy)
if any(l["stack_flags"] & 16 for l in launches if not l["py"]):
    fail("a launch without a Python stack has a copy stopped at an evaluation")
# launches that named an earlier copy (stackreuse.h): 200 from one line
# make one copy, a check in 64 and borrowers; each borrower has, in the
# database, the native frames of its key's latest copy, as that copy has
reuse = os.environ.get("XPCAP_STACK_REUSE", "1") != "0"
borrowed = [l for l in launches if l["stack_flags"] & 64]
keyed = [l for l in launches if l["stack_flags"] & 32]
if copy == "0" or not reuse:
    if borrowed or keyed:
        fail("%d launches borrowed, %d keyed, with copy %s and reuse %s"
             % (len(borrowed), len(keyed), copy, reuse))
elif len(borrowed) < 150 or len(borrowed) + len(keyed) > len(from_py):
    fail("%d launches borrowed, %d keyed of %d from Python" % (len(borrowed), len(keyed),
                                                                len(from_py)))
latest, differed = {}, 0
for l in launches:
    if l["stack_flags"] & 32:
        if l["key"] in latest:      # a check: count it as ingest should
            native = [[f for f in frames(stack_of.get(c, 0)) if f[0] not in (6, 7)]
                      for c in (latest[l["key"]], l["corr"])]
            differed += native[0] != native[1]
        latest[l["key"]] = l["corr"]
    elif l["stack_flags"] & 64:
        mine = [f for f in frames(stack_of.get(l["corr"], 0)) if f[0] not in (6, 7)]
        theirs = [f for f in frames(stack_of.get(latest.get(l["key"]), 0)) if f[0] not in (6, 7)]
        if not mine or mine != theirs:
            fail("launch %d borrowed key %s: native frames %d, its copy's %d, %s"
                 % (l["corr"], l["key"], len(mine), len(theirs),
                    "differ" if mine and theirs else "missing"))
facts = dict(db.execute("SELECT name, value FROM META_DATA_EXPORT WHERE name IN"
                        " ('xp.launches_borrowed', 'xp.borrowed_missing', 'xp.stack_checks',"
                        " 'xp.stack_checks_differed')"))
checks = len(keyed) - len({l["key"] for l in keyed})
want = {"xp.launches_borrowed": str(len(borrowed)), "xp.borrowed_missing": "0",
        "xp.stack_checks": str(checks), "xp.stack_checks_differed": str(differed)}
if facts != want:
    fail("ingest's counts %r, expected %r" % (facts, want))
if reuse and copy != "0" and not checks:
    fail("no launch checked its key again")
said = re.search(r"launch stacks: +(\d+) took an earlier copy's frames; (\d+) checks, (\d+) found",
                 info_text)
if (tuple(map(int, said.groups())) if said else (0, 0, 0)) != (
        (len(borrowed), checks, differed) if borrowed else (0, 0, 0)):
    fail("xpcorr info says %s, expected %d borrowed, %d checks, %d differed"
         % (said.group(0) if said else "nothing", len(borrowed), checks, differed))
dump = subprocess.run([xpcorr, "dump", "--type", "launch", out], capture_output=True, text=True)
keyed_lines = len(re.findall(r" key=\d+", dump.stdout))
if keyed_lines != len(borrowed) + len(keyed):
    fail("xpcorr dump shows %d keys, expected %d" % (keyed_lines, len(borrowed) + len(keyed)))
print("%s: Python %s, copy %s: %d launches, every Python frame as Python said; %d spliced"
      " in place of the evaluator's frames, %d above a gap%s" % (
          os.path.basename(out), exp["python"].split()[0], copy, n, matched, gap,
          ", %d FAILURES" % len(fails) if fails else ""))
if copy != "0" and matched < n * 0.9:
    fail("only %d of %d launches spliced in place with 64 KiB copies" % (matched, n))
sys.exit(1 if fails else 0)
