"""pyframes_check.py OUTFILE - checks what pyframes_workload.py recorded:
every launch taken on a Python thread has an XP_REC_PYSTACK right after it,
and each of its frames resolves (through its XP_REC_PYCODE line table,
decoded by xpr_py.py) to the file, qualified name and line Python reported;
the innermost line is the source line of the xpt_take call; C->Python entry
frames are marked; the thread that never ran Python is counted, not walked.
Prints one line per failure and a summary; exit 1 on any failure."""
import json
import linecache
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xpr_py  # noqa: E402

out = sys.argv[1]
with open(out + ".expect.json", encoding="utf-8") as f:
    exp = json.load(f)
run = xpr_py.PyRun(xpr_py.read_records(out))
fails = []


def cut(s):
    """A name as the walker keeps it: 4096 UTF-8 bytes at most, whole characters."""
    return s.encode()[:4096].decode(errors="ignore")


def fail(msg):
    if len(fails) < 20:
        print("FAIL: %s: %s" % (os.path.basename(out), msg))
    fails.append(msg)


minor = exp["hexversion"] >> 16 & 0xff
if minor < 10 or minor > 13:
    # an interpreter the walker does not know: nothing taken, and said why
    info = run.infos[0] if len(run.infos) == 1 else None
    nlaunch = len(exp["takes"]) + 1
    if not info or info["flags"] or info["hexversion"] != exp["hexversion"] or \
            "3.10 to 3.13" not in info["reason"]:
        fail("PYINFO %r for Python %x" % (info, exp["hexversion"]))
    if run.stacks or run.codes:
        fail("%d stacks, %d code records from an unknown interpreter" % (len(run.stacks),
                                                                        len(run.codes)))
    if len(run.launches) != nlaunch or \
            run.lost != {(xpr_py.REC_PYSTACK, xpr_py.LOST_PY_UNSUPPORTED): nlaunch}:
        fail("%d launches, losses %r: expected %d unsupported" % (len(run.launches), run.lost,
                                                                 nlaunch))
    print("%s: Python %s: no stacks, %d launches counted unsupported (%s)%s" % (
        os.path.basename(out), exp["python"].split()[0], nlaunch, info and info["reason"],
        ", %d FAILURES" % len(fails) if fails else ""))
    sys.exit(1 if fails else 0)
if len(run.infos) != 1:
    fail("%d PYINFO records, expected 1" % len(run.infos))
elif not run.infos[0]["flags"] & xpr_py.PYINFO_SUPPORTED or \
        run.infos[0]["hexversion"] != exp["hexversion"]:
    fail("PYINFO %r for Python %x" % (run.infos[0], exp["hexversion"]))
for e in run.order_errors:
    fail(e)

launches = {l["corr"]: l for l in run.launches}
nframes = 0
for t in exp["takes"]:
    l = launches.get(t["corr"])
    if not l or not l["py"]:
        fail("launch %d: %s" % (t["corr"], "no Python stack" if l else "no launch record"))
        continue
    st = l["py"]
    want = t["frames"]
    trunc = len(want) > xpr_py.PY_MAX_FRAMES
    want = want[:xpr_py.PY_MAX_FRAMES]
    if bool(st["flags"] & xpr_py.PYSTACK_TRUNCATED) != trunc:
        fail("launch %d: truncated flag %d for %d frames" % (t["corr"], st["flags"],
                                                             len(t["frames"])))
    got = [list(run.resolve(f)) for f in st["frames"]]
    want = [[cut(w[0]), cut(w[1]), w[2]] for w in want]
    if got != want:
        fail("launch %d: frames differ\n  recorded %s\n  python   %s" % (t["corr"], got, want))
        continue
    nframes += len(got)
    src = linecache.getline(got[0][0], got[0][2])
    if os.path.exists(got[0][0]) and "take(" not in src:
        fail("launch %d: innermost line %s:%d is not a take: %r" % (t["corr"], got[0][0],
                                                                    got[0][2], src))
    for i, f in enumerate(st["frames"]):
        is_entry = bool(f["flags"] & xpr_py.PYFRAME_ENTRY)
        if minor == 10:
            should = True                   # every 3.10 frame is its own eval call
        elif i in t["maybe"]:
            continue
        else:
            should = i in t["entry"]
        if is_entry != should:
            fail("launch %d frame %d (%s): entry %s, expected %s" % (t["corr"], i, got[i][1],
                                                                     is_entry, should))

native = launches.get(exp["native_corr"])
if not native or native["py"]:
    fail("the native thread's launch: %s" % ("missing" if not native else "has a Python stack"))
if run.lost.get((xpr_py.REC_PYSTACK, xpr_py.LOST_PY_NO_THREAD), 0) != 1:
    fail("no-thread losses %r, expected 1" % run.lost)
for reason in (xpr_py.LOST_PY_UNSUPPORTED, xpr_py.LOST_PY_UNREADABLE):
    if run.lost.get((xpr_py.REC_PYSTACK, reason)):
        fail("losses %r" % run.lost)
if exp["reused_addresses"] < 5:
    fail("only %d code objects reused an address: the test of ids proves little"
         % exp["reused_addresses"])
print("%s: Python %s: %d launches, %d frames checked, %d code records (%d at a reused"
      " address)%s%s" % (os.path.basename(out), exp["python"].split()[0], len(exp["takes"]),
                         nframes, len(run.codes), exp["reused_addresses"],
                         ", skipped: " + ", ".join(exp["skipped"]) if exp["skipped"] else "",
                         ", %d FAILURES" % len(fails) if fails else ""))
sys.exit(1 if fails else 0)
