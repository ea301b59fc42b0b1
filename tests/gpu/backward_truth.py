"""backward_truth.py - does each backward kernel sit at the forward code
torch.profiler links it to? torch.profiler's own linkage is the truth: its
backward ops carry the node's sequence number and forward thread, its forward
ops the same number; with_stack, its Python tracer's function events around a
forward op are that op's Python stack. They name functions (file, first line,
name), not the line being run, so a frame is compared as its file and
function ("linear.py forward"): the innermost frame, and the innermost one
of the program's own files. Ours is the launch stack ingest gave the backward
launch (ingest/backward.h). The two runs are separate (one CUPTI subscriber
a process), so kernels are matched by name and order within each process.
  python3 backward_truth.py profile OUT.json SCRIPT [ARGS...]   # SCRIPT under torch.profiler
  torchrun ... -m backward_truth profile OUT.json SCRIPT ...     # one OUT-rankN.json a rank
  python3 backward_truth.py ours RUN/xpcorr.db OUT.json          # the same from our database
  python3 backward_truth.py compare NAME OURS.json PROF.json... [--truth TRUTH.json]
"""
import bisect
import difflib
import json
import os
import re
import runpy
import sqlite3
import sys

LIB = re.compile(r"(site-packages|dist-packages|/lib/python3\.\d+/|^<)")
OWN_SKIP = ("backward_truth.py", "runpy.py")


def short(path, func):
    return "%s %s" % (os.path.basename(path), func.split(".")[-1])


def pick(frames, own_dir=None):
    """(innermost, innermost of the program's own files) of (path, function)
    frames, innermost first. Own: outside site-packages and the standard
    library; with own_dir (paths may be cut short), also a file of that
    directory."""
    frames = [f for f in frames if not f[0].endswith(OWN_SKIP)]
    inner = short(*frames[0]) if frames else None
    mine = set(os.listdir(own_dir)) if own_dir else None
    own = next((short(*f) for f in frames if not LIB.search(f[0]) and
                (mine is None or os.path.basename(f[0]) in mine)), None)
    return inner, own


# ---- torch.profiler's side

STACK_RE = re.compile(r"^(.*)\((\d+)\): (.*)$")


def python_stack(spans, at):
    """The Python tracer's function events that hold time at, innermost first,
    as (path, function)."""
    out = []
    for s0, e0, name in spans:
        if s0 > at:
            break
        m = STACK_RE.match(name) if e0 >= at else None
        if m:
            out.append((s0, m.group(1), m.group(3)))
    return [(p, f) for _, p, f in sorted(out, reverse=True)]


def op_stack(e):
    """The Python stack torch.profiler keeps on an op's own event, innermost
    first, as (path, function): with its verbose experimental option the
    Python tracer's calls that hold the op (KinetoEvent::stack, from the
    event's parents); [] without."""
    try:
        names = list(e.stack())
    except (AttributeError, RuntimeError, TypeError):
        return []
    return [(m.group(1), m.group(3)) for m in map(STACK_RE.match, names) if m]


def _ns(e, what):
    f = getattr(e, what + "_ns", None)
    return f() if f else int(getattr(e, what + "_us")() * 1000)


def is_copy(name):
    """Not a kernel: copies, memsets and the synchronizations kineto lists on
    the device; and (in files written before profile() left them out) the
    record_function spans it draws there."""
    return name.startswith(("Memcpy", "Memset", "Context Sync", "Stream Sync", "Event Sync",
                            "Stream Wait", "Optimizer.step#", "gloo:", "nccl:",
                            "DistributedDataParallel."))


def node_of(note):
    """"AddmmBackward0" of torch.profiler's node name or of our note
    ("AccumulateGrad from AddmmBackward0", "torch::autograd::AccumulateGrad")."""
    return note.split(" from ")[0].split("::")[-1] if note else None


def enclosing(spans, starts, at):
    """The innermost (latest-starting) span of a thread's (start, end, event)
    list, sorted by start, that holds time at."""
    i = bisect.bisect_right(starts, at)
    while i > 0:
        i -= 1
        if spans[i][1] >= at:
            return spans[i]
    return None


def trace_functions(prof, ops, path):
    """The Python tracer's function events from the Chrome trace torch.profiler
    writes (where its raw events lack them), on the raw events' clock: the
    offset is that of a CPU op found in both by its External id."""
    prof.export_chrome_trace(path)
    # a transformers step's trace ran to 2.2 GB: past what json.load can hold
    if os.path.getsize(path) > (1 << 30):
        print("backward_truth: %s is %d MB: no Python stacks from it" %
              (path, os.path.getsize(path) >> 20), file=sys.stderr)
        os.remove(path)
        return {}
    with open(path) as f:
        tr = json.load(f)
    os.remove(path)
    evs = tr["traceEvents"] if isinstance(tr, dict) else tr
    off = None
    for ev in evs:
        x = (ev.get("args") or {}).get("External id")
        if ev.get("cat") == "cpu_op" and ev.get("ph") == "X" and x in ops:
            off = _ns(ops[x], "start") - int(round(float(ev["ts"]) * 1000))
            break
    spans = []
    for ev in evs:
        if off is not None and ev.get("cat") == "python_function" and ev.get("ph") == "X":
            s0 = int(round(float(ev["ts"]) * 1000)) + off
            spans.append((s0, s0 + int(round(float(ev.get("dur", 0)) * 1000)), ev["name"]))
    return {"trace": spans} if spans else {}


def profile(out, script, args):
    """torch.profiler's raw (kineto) events: a kernel's CPU op by its linked
    correlation id; the backward node (scope 1) around that op on its thread,
    or the one inside the engine's evaluate_function around it; the forward
    op of the node's (forward thread, sequence number) and its stack."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as tprofile
    from torch.autograd import DeviceType
    sys.argv = [script] + args
    kw = dict(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], with_stack=True,
              record_shapes=True, acc_events=True)
    try:    # verbose: each op's event keeps its Python stack (no Chrome trace to read)
        from torch._C._profiler import _ExperimentalConfig
        kw["experimental_config"] = _ExperimentalConfig(verbose=True)
    except (ImportError, TypeError):
        pass
    with tprofile(**kw) as prof:
        runpy.run_path(script, run_name="__main__")
    if getattr(prof.profiler, "kineto_results", None) is None:
        sys.exit("backward_truth: this torch.profiler keeps no kineto results")
    evts = prof.profiler.kineto_results.events()
    ops, nodes, engine, fwd, devs, pyfn, notes = {}, {}, {}, {}, [], {}, 0
    for e in evts:
        if e.device_type() != DeviceType.CPU:
            # record_function spans kineto also draws on the GPU timeline
            # (Optimizer.step#AdamW.step, gloo:all_reduce): no GPU work
            if getattr(e, "is_user_annotation", lambda: False)():
                notes += 1
            else:
                devs.append(e)
            continue
        t, span = e.start_thread_id(), (_ns(e, "start"), _ns(e, "end"), e)
        if STACK_RE.match(e.name()):      # the Python tracer's "file(line): function"
            pyfn.setdefault(t, []).append((span[0], span[1], e.name()))
            continue
        if e.linked_correlation_id() == 0:
            ops.setdefault(e.correlation_id(), e)
        if e.scope() == 1:
            nodes.setdefault(t, []).append(span)
        elif e.name().startswith("autograd::engine::evaluate_function"):
            engine.setdefault(t, []).append(span)
        elif e.sequence_nr() >= 0:
            k = (t, e.sequence_nr())
            if k not in fwd or span[0] >= _ns(fwd[k], "start"):
                fwd[k] = e
    by_seq = dict(((s, e) for (t, s), e in fwd.items()))
    op_stacks = sum(1 for e in fwd.values() if op_stack(e))
    # the Chrome trace only where the events keep no stacks: a transformers
    # step's ran to 2.2 GB, past what trace_functions reads
    if not pyfn and not op_stacks:    # one trace file a rank: ranks run this at once
        pyfn = trace_functions(prof, ops, "%s.%d.trace.json" % (out, os.getpid()))
    for v in pyfn.values():
        v.sort()
    for d in (nodes, engine):
        for v in d.values():
            v.sort(key=lambda sp: sp[0])
    nstart = dict((t, [sp[0] for sp in v]) for t, v in nodes.items())
    estart = dict((t, [sp[0] for sp in v]) for t, v in engine.items())
    kernels, sample = [], {}
    for d in devs:
        name = d.name()
        k = {"name": name, "start": _ns(d, "start"), "dur": _ns(d, "end") - _ns(d, "start"),
             "backward": None, "inner": None, "own": None}
        kernels.append(k)
        op = ops.get(d.linked_correlation_id())
        if op is None or is_copy(name):
            continue
        t, at = op.start_thread_id(), _ns(op, "start")
        node = enclosing(nodes.get(t, []), nstart.get(t, []), at)
        if node is None:    # in evaluate_function, outside the node's own range
            ev = enclosing(engine.get(t, []), estart.get(t, []), at)
            node = ev and next((sp for sp in nodes.get(t, []) if ev[0] <= sp[0] <= ev[1]), None)
        if node is None:
            continue
        n = node[2]
        k["backward"] = n.name()
        f = fwd.get((n.fwd_thread_id(), n.sequence_nr())) or by_seq.get(n.sequence_nr())
        if f is not None:
            spans = pyfn.get(f.start_thread_id()) or [sp for v in pyfn.values() for sp in v]
            frames = op_stack(f) or python_stack(spans, _ns(f, "start"))
            k["inner"], k["own"] = pick(frames, os.path.dirname(os.path.abspath(script)))
            sample.setdefault("forward", [f.name(), f.start_thread_id(), f.sequence_nr(), frames[:3]])
        sample.setdefault("node", [n.name(), n.fwd_thread_id(), n.start_thread_id(), n.sequence_nr()])
    kernels.sort(key=lambda k: k["start"])
    rank = os.environ.get("RANK")
    if rank is not None:
        out = out.replace(".json", "-rank%s.json" % rank)
    stats = dict(devs=len(devs), gpu_annotations=notes, ops=len(ops), fwd=len(fwd), nodes=sum(len(v) for v in nodes.values()),
                 ops_with_seq=sum(1 for e in ops.values() if e.sequence_nr() >= 0),
                 python_functions=sum(len(v) for v in pyfn.values()), op_stacks=op_stacks,
                 backward_kernels=sum(1 for k in kernels if k["backward"]),
                 with_forward_line=sum(1 for k in kernels if k["inner"]))
    print("backward_truth profile:", stats, sample, file=sys.stderr)
    with open(out, "w") as f:
        json.dump({"kernels": kernels, "stats": stats, "sample": sample}, f)


# ---- ours, from the database

def ours(db_path, out):
    db = sqlite3.connect(db_path)
    frames = {}
    for fid, sym, mod, kind in db.execute(
            "SELECT f.id, s.value, m.value, f.kind FROM xp_frames f JOIN StringIds s ON"
            " s.id = f.symbol LEFT JOIN StringIds m ON m.id = f.module"):
        frames[fid] = (sym, mod, kind)
    parent = dict((i, (p, f)) for i, p, f in db.execute("SELECT id, parent, frame FROM xp_stacks"))
    cache = {}

    def stack(sid):
        if sid in cache:
            return cache[sid]
        py, note, node = [], None, sid
        while node:
            p, f = parent[node]
            sym, mod, kind = frames[f]
            if kind == 8 and sym.startswith("\u2039backward: "):
                note = sym[len("\u2039backward: "):].rstrip("\u203a")
            if kind == 6:
                py.append((mod or sym.split(":")[0], sym.split(" ", 1)[-1]))
            node = p
        cache[sid] = (note, pick(py))
        return cache[sid]

    procs = {}
    for start, end, name, sid, gpid in db.execute(
            "SELECT k.start, k.end, s.value, a.stack_id, k.globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL k"
            " JOIN StringIds s ON s.id = k.demangledName LEFT JOIN xp_attribution a"
            " ON a.gpu_table = 'KERNEL' AND a.gpu_rowid = k.rowid ORDER BY k.start"):
        note, (inner, own) = stack(sid) if sid else (None, (None, None))
        procs.setdefault(str(gpid >> 24), []).append(
            {"name": name, "start": start, "dur": end - start, "backward": note,
             "inner": inner, "own": own})
    with open(out, "w") as f:
        json.dump({"processes": procs}, f)


# ---- the comparison

def align(a, b):
    sm = difflib.SequenceMatcher(None, [k["name"] for k in a], [k["name"] for k in b], autojunk=False)
    for blk in sm.get_matching_blocks():
        for i in range(blk.size):
            yield a[blk.a + i], b[blk.b + i]


def compare(name, ours_path, prof_paths, truth):
    procs = json.load(open(ours_path))["processes"]
    profs = [[k for k in json.load(open(p))["kernels"] if not is_copy(k["name"])] for p in prof_paths]
    res = {"program": name, "ours_kernels": sum(len(v) for v in procs.values()),
           "profiler_kernels": sum(len(p) for p in profs), "processes": []}
    free = dict(procs)
    tot = dict(bwd_ns=0, bwd_n=0, line_ns=0, own_ns=0, agree_own_ns=0, agree_inner_ns=0,
               prof_bwd_n=0, ours_bwd_n=0, matched=0, node_ns=0, prof_line_ns=0)
    for prof in profs:
        best = max(free, key=lambda pid: difflib.SequenceMatcher(
            None, [k["name"] for k in prof][:400], [k["name"] for k in free[pid]][:400],
            autojunk=False).ratio()) if free else None
        if best is None:
            break
        mine = free.pop(best)
        t = dict(bwd_ns=0, bwd_n=0, line_ns=0, own_ns=0, agree_own_ns=0, agree_inner_ns=0,
                 node_ns=0, prof_line_ns=0,
                 prof_bwd_n=sum(1 for k in prof if k["backward"]),
                 ours_bwd_n=sum(1 for k in mine if k["backward"]), matched=0, disagree=[])
        for p, o in align(prof, mine):
            t["matched"] += 1
            if not p["backward"]:
                continue
            t["bwd_ns"] += o["dur"]
            t["bwd_n"] += 1
            t["node_ns"] += o["dur"] if node_of(o["backward"]) == node_of(p["backward"]) else 0
            has_line = bool(o["backward"] and o["inner"])
            t["line_ns"] += o["dur"] if has_line else 0
            if not has_line:
                if len(t["disagree"]) < 8:
                    t["disagree"].append([p["name"][:60], p["backward"], "no line: %s" % o["backward"]])
            elif p["inner"]:        # torch.profiler has the forward op's Python stack
                t["prof_line_ns"] += o["dur"]
                t["agree_inner_ns"] += o["dur"] if o["inner"] == p["inner"] else 0
                t["agree_own_ns"] += o["dur"] if o["own"] == p["own"] else 0
                if o["own"] != p["own"] and len(t["disagree"]) < 8:
                    t["disagree"].append([p["name"][:60], p["backward"], p["own"], o["own"],
                                          p["inner"], o["inner"]])
        res["processes"].append(dict(pid=best, **t))
        for k in tot:
            tot[k] += t[k]
    pct = lambda a, b: round(100.0 * a / b, 2) if b else 0.0
    res.update(tot)
    res["backward_with_line_pct"] = pct(tot["line_ns"], tot["bwd_ns"])
    res["same_node_pct"] = pct(tot["node_ns"], tot["bwd_ns"])
    res["agree_own_line_pct"] = pct(tot["agree_own_ns"], tot["prof_line_ns"])
    res["agree_innermost_line_pct"] = pct(tot["agree_inner_ns"], tot["prof_line_ns"])
    print("%s: kernels ours %d, torch.profiler %d, matched by name and order %d; backward kernels"
          " %d (torch.profiler %d, ours %d): %.1f%% of their GPU time at a forward line, %.1f%% for"
          " the node torch.profiler names; where torch.profiler has the forward op's Python stack"
          " (%.1f%% of that time), %.1f%% at its function of the program (%.1f%% the same innermost"
          " function)" % (
              name, res["ours_kernels"], res["profiler_kernels"], tot["matched"], tot["bwd_n"],
              tot["prof_bwd_n"], tot["ours_bwd_n"], res["backward_with_line_pct"],
              res["same_node_pct"], pct(tot["prof_line_ns"], tot["bwd_ns"]),
              res["agree_own_line_pct"], res["agree_innermost_line_pct"]))
    for p in res["processes"]:
        for d in p["disagree"]:
            print("   differs:", d)
    import collections
    a = collections.Counter(k["name"] for p in profs for k in p)
    b = collections.Counter(k["name"] for v in procs.values() for k in v)
    res["count_differences"] = [[n[:80], a[n], b[n]] for n in set(a) | set(b) if a[n] != b[n]][:10]
    for d in res["count_differences"]:
        print("   count differs (torch.profiler, ours):", d)
    if truth:
        old = json.load(open(truth)) if os.path.exists(truth) else {}
        old[name] = res
        with open(truth, "w") as f:
            json.dump(old, f, indent=1)
    return res


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "profile":
        profile(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif len(sys.argv) == 4 and sys.argv[1] == "ours":
        ours(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 5 and sys.argv[1] == "compare":
        args = sys.argv[2:]
        truth = None
        if "--truth" in args:
            i = args.index("--truth")
            truth = args[i + 1]
            del args[i:i + 2]
        compare(args[0], args[1], args[2:], truth)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
