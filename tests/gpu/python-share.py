#!/usr/bin/env python3
"""python-share.py DB - share of GPU time (kernels, copies, memsets) whose
exact launching stack reaches a Python frame (a Python line, frame kind 6,
from the Python stack taken at the launch, or a py:: frame from CPython's
perf map), read from an ingested database (xpcorr.db or a fixture's
device.db). Prints python_share_pct=..., the share of launch records whose
stack reaches Python, the leaf-most Python frames that launched most, and,
for runs with Python stacks, python_line_pct=...: the share of the GPU time
launched from Python threads (threads with at least one Python stack) whose
launch stack has a Python line."""
import sqlite3
import sys

GPU_TABLES = ("KERNEL", "MEMCPY", "MEMSET")   # xp_attribution.gpu_table


def python_frames(db):
    """stack node id -> (parent, Python frame name or None)"""
    rows = db.execute("SELECT s.id, s.parent, CASE WHEN f.kind = 6 OR (f.kind = 2 AND"
                      " n.value LIKE 'py::%') THEN n.value END FROM xp_stacks s"
                      " JOIN xp_frames f ON f.id = s.frame JOIN StringIds n ON n.id = f.symbol")
    return {i: (p, name) for i, p, name in rows}


def leaf_python(nodes, stack, memo):
    """The leaf-most py:: frame on the path from stack to the root, or None."""
    path = []
    while stack and stack not in memo:
        path.append(stack)
        parent, name = nodes.get(stack, (0, None))
        if name:
            memo[stack] = name
            break
        stack = parent
    found = memo.get(stack) if stack else None
    for s in path:
        memo[s] = found
    return found


def python_share(db):
    """(share of exactly attributed GPU time under Python %, launch records
    reaching Python, launch records, GPU ns by leaf-most Python frame)"""
    nodes, memo = python_frames(db), {}
    total = py = 0
    by_frame = {}
    for table in GPU_TABLES:
        q = ("SELECT g.end - g.start, a.stack_id FROM CUPTI_ACTIVITY_KIND_%s g JOIN xp_attribution a"
             " ON a.gpu_table = '%s' AND a.gpu_rowid = g.rowid WHERE a.how = 'exact'" % (table, table))
        for dur, stack in db.execute(q):
            total += dur
            name = leaf_python(nodes, stack, memo) if stack else None
            if name:
                py += dur
                by_frame[name] = by_frame.get(name, 0) + dur
    by_frame = {n: 100.0 * ns / (total or 1) for n, ns in by_frame.items()}
    launches = [leaf_python(nodes, s, memo) if s else None
                for (s,) in db.execute("SELECT stack_id FROM xp_launches")]
    reached = sum(1 for name in launches if name)
    return 100.0 * py / (total or 1), reached, len(launches), by_frame


def python_line_share(db):
    """(% of the exactly attributed GPU time of Python threads whose launch
    stack has a Python line, that GPU time in ns), or None for a database
    without Python lines. A Python thread is one with a Python stack at any
    of its launches."""
    nodes = {i: (p, k == 6) for i, p, k in db.execute(
        "SELECT s.id, s.parent, f.kind FROM xp_stacks s JOIN xp_frames f ON f.id = s.frame")}
    if not any(line for _, line in nodes.values()):
        return None
    memo = {}

    def has_line(stack):
        path = []
        while stack and stack not in memo:
            path.append(stack)
            parent, line = nodes.get(stack, (0, False))
            if line:
                memo[stack] = True
                break
            stack = parent
        found = memo.get(stack, False) if stack else False
        for s in path:
            memo[s] = found
        return found

    rows = []
    for table in GPU_TABLES:
        q = ("SELECT g.end - g.start, a.stack_id, r.globalTid FROM CUPTI_ACTIVITY_KIND_%s g"
             " JOIN xp_attribution a ON a.gpu_table = '%s' AND a.gpu_rowid = g.rowid"
             " JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.rowid = a.api_rowid"
             " WHERE a.how = 'exact'" % (table, table))
        rows += [(dur, tid, bool(stack) and has_line(stack)) for dur, stack, tid in db.execute(q)]
    threads = {tid for _, tid, line in rows if line}
    total = sum(dur for dur, tid, _ in rows if tid in threads)
    lines = sum(dur for dur, tid, line in rows if tid in threads and line)
    return 100.0 * lines / (total or 1), total


def main():
    db = sqlite3.connect(sys.argv[1])
    share, reached, launches, by_frame = python_share(db)
    print("python_share_pct=%.2f of exactly attributed GPU time; launch stacks reaching"
          " Python: %d of %d (%.2f%%)" % (share, reached, launches, 100.0 * reached / (launches or 1)))
    for name, pct in sorted(by_frame.items(), key=lambda x: -x[1])[:5]:
        print("  %5.1f%%  %s" % (pct, name))
    lines = python_line_share(db)
    if lines:
        print("python_line_pct=%.2f of the GPU time launched from Python threads (%d ns)" % lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
