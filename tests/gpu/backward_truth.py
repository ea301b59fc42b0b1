"""backward_truth.py - does each backward kernel sit at the forward line
torch.profiler links it to? torch.profiler's own linkage is the truth: its
backward ops carry the node's sequence number and forward thread, its forward
ops the same number; with_stack, its Python tracer's event tree holds each
op's Python callers: the built-in call that ran the op names its caller's
file, line and function (PyCCall.caller), each Python call above it the line
that called it (PyCall.caller). An op reached without a built-in call (an
operator: x @ w) has its function but no line. Ours is the launch stack
ingest gave the backward launch (ingest/backward.h). The two runs are
separate (one CUPTI subscriber a process), so kernels are matched by name
and order within each process. A frame is "file.py:LINE function" (the
basename; the qualname's last part), "file.py:? function" without a line.
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

# ---- torch.profiler's side

def frame(path, line, func):
    return "%s:%s %s" % (os.path.basename(path), "?" if line is None else line, func.split(".")[-1])


def tree_stack(ev):
    """The Python frames above a TorchOp event of the experimental event
    tree, innermost first: the built-in call's caller (file, line), then
    each Python call's caller; a Python call reached first (no built-in
    call: an operator) gives its function without a line."""
    from torch._C._profiler import _EventType
    out, p = [], ev.parent
    while p is not None and len(out) < 40:
        f = p.extra_fields
        if p.tag == _EventType.PyCCall or p.tag == _EventType.PyCall:
            try:
                if not out and p.tag == _EventType.PyCall and f.module is None:
                    out.append(frame(f.callsite.file_name, None, f.callsite.function_name))
                c = f.caller
                out.append(frame(c.file_name, c.line_number, c.function_name))
            except (AttributeError, RuntimeError):
                pass
        p = p.parent
    return out


def torch_ops(tree):
    """TorchOp events of the tree by (start ns, name): the key KinetoEvent
    and the tree share."""
    from torch._C._profiler import _EventType
    ops, todo = {}, list(tree)
    while todo:
        e = todo.pop()
        if e.tag == _EventType.TorchOp:
            ops[(e.start_time_ns, e.name)] = e
        todo.extend(e.children)
    return ops


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


def is_collective(name):
    """An NCCL kernel (ncclDevKernel_AllReduce_Sum_f32_RING_LL, ncclKernel_...):
    DDP's reducer launches its buckets' all-reduces from a hook, not a node."""
    return name.startswith(("ncclDevKernel", "ncclKernel"))


def collective_of(p, o, acc):
    """What each side says of one NCCL kernel: torch.profiler's CPU op, node
    and forward frames; our node note, other notes and Python line."""
    import collections
    for k in ("n", "ns", "prof_backward_n", "prof_line_n", "ours_backward_n", "ours_line_n",
              "ours_line_ns"):
        acc.setdefault(k, 0)
    for k in ("prof_ops", "prof_nodes", "ours_notes", "ours_lines"):
        acc.setdefault(k, collections.Counter())
    acc["n"] += 1
    acc["ns"] += o["dur"]
    acc["prof_backward_n"] += bool(p["backward"])
    acc["prof_line_n"] += bool(p.get("frames"))
    acc["prof_ops"][p.get("op")] += 1
    acc["prof_nodes"]["%s%s" % (p["backward"], " (in its hook)" if p.get("in_hook") else "")] += 1
    acc["ours_backward_n"] += bool(o["backward"])
    acc["ours_line_n"] += bool(o["frames"])
    acc["ours_line_ns"] += o["dur"] if o["frames"] else 0
    acc["ours_notes"][" | ".join(n for n in o.get("notes", []) if not n.startswith("[backward()"))] += 1
    acc["ours_lines"][o["frames"][0] if o["frames"] else None] += 1


def node_of(note):
    """"AddmmBackward0" of torch.profiler's node name or of our note
    ("AccumulateGrad from AddmmBackward0", "torch::autograd::AccumulateGrad",
    "ViewBackward0, between two launches of this line")."""
    return note.split(" from ")[0].split(",")[0].split("::")[-1] if note else None


def same_node(ours, theirs):
    """Our node's name is theirs, or its start where the recorder cut it
    ("ScaledDotProductEfficientAttentionBa\u2026")."""
    if ours and theirs and ours.endswith("\u2026"):
        return theirs.startswith(ours[:-1])
    return ours == theirs


def enclosing(spans, starts, at):
    """The innermost (latest-starting) span of a thread's (start, end, event)
    list, sorted by start, that holds time at."""
    i = bisect.bisect_right(starts, at)
    while i > 0:
        i -= 1
        if spans[i][1] >= at:
            return spans[i]
    return None


def own_of(frames, own_dir):
    mine = set(os.listdir(own_dir)) - {"backward_truth.py"}
    return next((f for f in frames if f.split(":")[0] in mine), None)


def profile(out, script, args):
    """torch.profiler's raw (kineto) events: a kernel's CPU op by its linked
    correlation id; the backward node (scope 1) around that op on its thread,
    or the one inside the engine's evaluate_function around it; the forward
    op of the node's (forward thread, sequence number) and its Python
    frames from the event tree. Light: with_stack only (no shapes, no
    Chrome trace), only the fields compared are written."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as tprofile
    from torch.autograd import DeviceType
    sys.argv = [script] + args
    with tprofile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], with_stack=True,
                  acc_events=True) as prof:
        runpy.run_path(script, run_name="__main__")
    res = getattr(prof.profiler, "kineto_results", None)
    if res is None:
        sys.exit("backward_truth: this torch.profiler keeps no kineto results")
    tree_ops = torch_ops(res.experimental_event_tree())
    ops, nodes, engine, fwd, devs, notes = {}, {}, {}, {}, [], 0
    for e in res.events():
        if e.device_type() != DeviceType.CPU:
            # record_function spans kineto also draws on the GPU timeline
            # (Optimizer.step#AdamW.step, gloo:all_reduce): no GPU work
            if getattr(e, "is_user_annotation", lambda: False)():
                notes += 1
            else:
                devs.append(e)
            continue
        t, span = e.start_thread_id(), (_ns(e, "start"), _ns(e, "end"), e)
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
    for d in (nodes, engine):
        for v in d.values():
            v.sort(key=lambda sp: sp[0])
    nstart = dict((t, [sp[0] for sp in v]) for t, v in nodes.items())
    estart = dict((t, [sp[0] for sp in v]) for t, v in engine.items())
    own_dir = os.path.dirname(os.path.abspath(script))
    kernels, sample, stacks = [], {}, {}
    for d in devs:
        name = d.name()
        k = {"name": name, "start": _ns(d, "start"), "dur": _ns(d, "end") - _ns(d, "start"),
             "backward": None, "frames": [], "own": None}
        kernels.append(k)
        op = ops.get(d.linked_correlation_id())
        if op is None or is_copy(name):
            continue
        t, at = op.start_thread_id(), _ns(op, "start")
        k["op"] = op.name()
        node = enclosing(nodes.get(t, []), nstart.get(t, []), at)
        if node is None:    # in evaluate_function, outside the node's own range (a hook)
            ev = enclosing(engine.get(t, []), estart.get(t, []), at)
            node = ev and next((sp for sp in nodes.get(t, []) if ev[0] <= sp[0] <= ev[1]), None)
            k["in_hook"] = node is not None
        if node is None:
            continue
        n = node[2]
        k["backward"] = n.name()
        f = fwd.get((n.fwd_thread_id(), n.sequence_nr())) or by_seq.get(n.sequence_nr())
        if f is not None:
            key = (_ns(f, "start"), f.name())
            if key not in stacks:
                te = tree_ops.get(key)
                stacks[key] = tree_stack(te) if te is not None else []
            k["frames"] = stacks[key][:16]
            k["own"] = own_of(k["frames"], own_dir)
            k["forward_op"] = f.name()
            sample.setdefault("forward", [f.name(), f.sequence_nr(), k["frames"][:4]])
        sample.setdefault("node", [n.name(), n.fwd_thread_id(), n.start_thread_id(), n.sequence_nr()])
    kernels.sort(key=lambda k: k["start"])
    rank = os.environ.get("RANK")
    if rank is not None:
        out = out.replace(".json", "-rank%s.json" % rank)
    stats = dict(devs=len(devs), gpu_annotations=notes, ops=len(ops), fwd=len(fwd),
                 nodes=sum(len(v) for v in nodes.values()), tree_ops=len(tree_ops),
                 backward_kernels=sum(1 for k in kernels if k["backward"]),
                 with_forward_frames=sum(1 for k in kernels if k["frames"]),
                 with_forward_line=sum(1 for k in kernels if k["frames"] and ":?" not in k["frames"][0]))
    print("backward_truth profile:", stats, sample, file=sys.stderr)
    with open(out, "w") as f:
        json.dump({"kernels": kernels, "stats": stats, "sample": sample}, f)


# ---- ours, from the database

ENCLOSING = "(no launch of its own)"


def ours(db_path, out):
    db = sqlite3.connect(db_path)
    frames = {}
    # a Python line is its qualname, file (module) and line (xp_frames.line);
    # databases made before that column hold "file.py:42 qualname" instead
    has_line = any(r[1] == "line" for r in db.execute("PRAGMA table_info(xp_frames)"))
    for fid, sym, mod, kind, line in db.execute(
            "SELECT f.id, s.value, m.value, f.kind, %s FROM xp_frames f JOIN StringIds s ON"
            " s.id = f.symbol LEFT JOIN StringIds m ON m.id = f.module"
            % ("f.line" if has_line else "NULL")):
        if kind == 6 and line is not None:
            sym = "%s:%d %s" % (mod or "?", line, sym)
        frames[fid] = (sym, mod, kind)
    parent = dict((i, (p, f)) for i, p, f in db.execute("SELECT id, parent, frame FROM xp_stacks"))
    cache = {}

    def stack(sid):
        if sid in cache:
            return cache[sid]
        py, note, notes, node = [], None, [], sid
        while node:
            p, f = parent[node]
            sym, mod, kind = frames[f]
            if kind == 8:
                notes.append(sym)
            if kind == 8 and sym.startswith("\u2039backward: "):
                note = sym[len("\u2039backward: "):].rstrip("\u203a")
            if kind == 6:
                loc, _, qual = sym.partition(" ")
                path, _, line = loc.rpartition(":")
                py.append(frame(path, line, qual))
            node = p
        cache[sid] = (note, py[:16], notes)
        return cache[sid]

    procs = {}
    for start, end, name, sid, gpid in db.execute(
            "SELECT k.start, k.end, s.value, a.stack_id, k.globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL k"
            " JOIN StringIds s ON s.id = k.demangledName LEFT JOIN xp_attribution a"
            " ON a.gpu_table = 'KERNEL' AND a.gpu_rowid = k.rowid ORDER BY k.start"):
        note, py, notes = stack(sid) if sid else (None, [], [])
        procs.setdefault(str(gpid >> 24), []).append(
            {"name": name, "start": start, "dur": end - start, "backward": note, "frames": py,
             "enclosing": bool(note and ENCLOSING in note), "notes": notes})
    with open(out, "w") as f:
        json.dump({"processes": procs}, f)


# ---- the comparison

def align(a, b):
    """Pairs of the two runs' kernels by name and order; NCCL's apart from
    the others: on their own stream, they start earlier or later against
    the compute kernels from one run to the next."""
    for coll in (False, True):
        x = [k for k in a if is_collective(k["name"]) == coll]
        y = [k for k in b if is_collective(k["name"]) == coll]
        sm = difflib.SequenceMatcher(None, [k["name"] for k in x], [k["name"] for k in y],
                                     autojunk=False)
        for blk in sm.get_matching_blocks():
            for i in range(blk.size):
                yield x[blk.a + i], y[blk.b + i]


def compare(name, ours_path, prof_paths, truth):
    """Per backward kernel both runs have: ours at a forward line (its
    innermost Python frame), under an enclosing one (a view's note says
    so) or at none; where torch.profiler names the forward op's line, the
    same line or not; where it names only the function, the same function;
    an enclosing line agrees when it is one of torch.profiler's frames."""
    procs = json.load(open(ours_path))["processes"]
    profs = [[k for k in json.load(open(p))["kernels"] if not is_copy(k["name"])] for p in prof_paths]
    res = {"program": name, "ours_kernels": sum(len(v) for v in procs.values()),
           "profiler_kernels": sum(len(p) for p in profs), "processes": []}
    free = dict(procs)
    keys = ("bwd_ns", "bwd_n", "line_ns", "enclosing_ns", "node_ns", "prof_line_ns", "agree_line_ns",
            "prof_func_ns", "agree_func_ns", "enclosing_prof_ns", "enclosing_agree_ns", "prof_bwd_n",
            "ours_bwd_n", "matched")
    tot = dict((k, 0) for k in keys)
    for prof in profs:
        best = max(free, key=lambda pid: difflib.SequenceMatcher(
            None, [k["name"] for k in prof][:400], [k["name"] for k in free[pid]][:400],
            autojunk=False).ratio()) if free else None
        if best is None:
            break
        mine = free.pop(best)
        t = dict((k, 0) for k in keys)
        t.update(prof_bwd_n=sum(1 for k in prof if k["backward"] and not is_collective(k["name"])),
                 ours_bwd_n=sum(1 for k in mine if k["backward"] and not is_collective(k["name"])),
                 disagree=[], collectives={})
        for p, o in align(prof, mine):
            t["matched"] += 1
            if is_collective(p["name"]):
                collective_of(p, o, t["collectives"])
                continue
            if not p["backward"]:
                continue
            d = o["dur"]
            t["bwd_ns"] += d
            t["bwd_n"] += 1
            t["node_ns"] += d if same_node(node_of(o["backward"]), node_of(p["backward"])) else 0
            pf, of = p.get("frames") or [], o.get("frames") or []
            why = None
            if not o["backward"] or not of:
                why = "no line: %s" % o["backward"]
            elif o.get("enclosing"):
                t["enclosing_ns"] += d
                if pf:
                    t["enclosing_prof_ns"] += d
                    ok = of[0] in pf
                    t["enclosing_agree_ns"] += d if ok else 0
                    why = None if ok else "enclosing line not among torch.profiler's frames"
            else:
                t["line_ns"] += d
                if pf and ":?" not in pf[0]:
                    t["prof_line_ns"] += d
                    ok = of[0] == pf[0]
                    t["agree_line_ns"] += d if ok else 0
                    why = None if ok else "another line"
                elif pf:
                    t["prof_func_ns"] += d
                    ok = of[0].split(":")[0] == pf[0].split(":")[0] and \
                        of[0].split(" ")[-1] == pf[0].split(" ")[-1]
                    t["agree_func_ns"] += d if ok else 0
                    why = None if ok else "another function"
            if why and len(t["disagree"]) < 10:
                t["disagree"].append([p["name"][:50], p["backward"], o["backward"], why,
                                      pf[:2], of[:2]])
        res["processes"].append(dict(pid=best, **t))
        for k in tot:
            tot[k] += t[k]
    pct = lambda a, b: round(100.0 * a / b, 2) if b else 0.0
    res.update(tot)
    res["backward_with_line_pct"] = pct(tot["line_ns"], tot["bwd_ns"])
    res["backward_enclosing_pct"] = pct(tot["enclosing_ns"], tot["bwd_ns"])
    res["same_node_pct"] = pct(tot["node_ns"], tot["bwd_ns"])
    res["agree_line_pct"] = pct(tot["agree_line_ns"], tot["prof_line_ns"])
    res["agree_function_pct"] = pct(tot["agree_func_ns"], tot["prof_func_ns"])
    res["enclosing_agree_pct"] = pct(tot["enclosing_agree_ns"], tot["enclosing_prof_ns"])
    print("%s: kernels ours %d, torch.profiler %d, matched by name and order %d; backward kernels"
          " %d (torch.profiler %d, ours %d): %.1f%% of their GPU time at a forward line, %.1f%%"
          " under an enclosing one, %.1f%% for the node torch.profiler names; at a line where"
          " torch.profiler has the forward op's line (%.1f%% of the time at a line): %.1f%% the"
          " same line; where it has the function only (%.1f%%): %.1f%% the same function;"
          " enclosing lines among torch.profiler's frames: %.1f%%" % (
              name, res["ours_kernels"], res["profiler_kernels"], tot["matched"], tot["bwd_n"],
              tot["prof_bwd_n"], tot["ours_bwd_n"], res["backward_with_line_pct"],
              res["backward_enclosing_pct"], res["same_node_pct"],
              pct(tot["prof_line_ns"], tot["line_ns"]), res["agree_line_pct"],
              pct(tot["prof_func_ns"], tot["line_ns"]), res["agree_function_pct"],
              res["enclosing_agree_pct"]))
    for p in res["processes"]:
        for d in p["disagree"]:
            print("   differs:", d)
        c = p["collectives"]
        if c:
            print("   NCCL kernels (process %s): %d, %.3f ms; torch.profiler: %d in a backward node,"
                  " %d with a forward line, ops %s, nodes %s; ours: %d under a node note, %d at a"
                  " Python line (%.3f ms), notes %s, lines %s" % (
                      p["pid"], c["n"], c["ns"] / 1e6, c["prof_backward_n"], c["prof_line_n"],
                      dict(c["prof_ops"]), dict(c["prof_nodes"]), c["ours_backward_n"],
                      c["ours_line_n"], c["ours_line_ns"] / 1e6, dict(c["ours_notes"]),
                      dict(c["ours_lines"])))
    res["collectives"] = dict((k, sum(p["collectives"].get(k, 0) for p in res["processes"]))
                              for k in ("n", "ns", "prof_backward_n", "prof_line_n",
                                        "ours_backward_n", "ours_line_n", "ours_line_ns"))
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
