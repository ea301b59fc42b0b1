#!/usr/bin/env python3
"""trim-job-db.py SRC DST - a job's database made small enough to commit as
a fixture (fixtures/h200-gloo: 25 MB -> 0.8 MB xz): the ranks' main threads'
CPU samples and off-CPU waits alone (tid = pid: where the loader ran and
the collectives were waited for), and each sample's stack cut to its three
innermost frames and its Python lines (the frames the idle engine names a
sample by); launch and wait stacks, GPU rows and strings as they were.
  python3 tests/gpu/trim-job-db.py gloo-h200-2ranks.db device.db && xz -9 device.db"""
import shutil
import sqlite3
import sys

PYTHON = 6                      # xp_frames.kind of a Python line

src, dst = sys.argv[1:3]
shutil.copy(src, dst)
d = sqlite3.connect(dst)
pids = ",".join(str(r[0]) for r in d.execute("SELECT DISTINCT pid FROM xp_ranks"))
# a merged job's pids are run << 22 | pid (db/dbmerge.h), its tids as recorded
MAIN = "tid = (pid & 4194303)"
d.execute(f"DELETE FROM xp_samples WHERE NOT (pid IN ({pids}) AND {MAIN})")
d.execute(f"DELETE FROM xp_switches WHERE NOT (pid IN ({pids}) AND {MAIN})")
node = {r[0]: (r[1], r[2]) for r in d.execute("SELECT id, parent, frame FROM xp_stacks")}
kind = dict(d.execute("SELECT id, kind FROM xp_frames"))
keep = set()
for sql in ("SELECT stack_id FROM xp_switches", "SELECT stack_id FROM xp_launches",
            "SELECT stack_id FROM xp_attribution", "SELECT stack_id FROM xp_report_kernel_stacks"):
    for (i,) in d.execute(sql):
        while i and i > 0 and i in node and i not in keep:
            keep.add(i)
            i = node[i][0]
made, depth = {}, {0: 0}
next_id = max(node) + 1


def cut(i):
    """The new stack of sample stack i: its 3 innermost frames and its Python lines."""
    global next_id
    frames = []
    while i > 0 and i in node:
        frames.append(node[i][1])
        i = node[i][0]
    parent = 0
    for f in reversed(frames[:3] + [f for f in frames[3:] if kind.get(f) == PYTHON]):
        if (parent, f) not in made:
            made[(parent, f)] = next_id
            depth[next_id] = depth[parent] + 1
            next_id += 1
        parent = made[(parent, f)]
    return parent


remap = {i: cut(i) for (i,) in d.execute("SELECT DISTINCT stack_id FROM xp_samples").fetchall()}
d.execute("CREATE TEMP TABLE keep(id INTEGER PRIMARY KEY)")
d.executemany("INSERT INTO keep VALUES (?)", [(i,) for i in keep])
d.execute("DELETE FROM xp_stacks WHERE id NOT IN (SELECT id FROM keep)")
d.executemany("INSERT INTO xp_stacks(id, parent, frame, depth) VALUES (?, ?, ?, ?)",
              [(i, p, f, depth[i]) for (p, f), i in made.items()])
d.execute("CREATE TEMP TABLE remap(old INTEGER PRIMARY KEY, new INTEGER)")
d.executemany("INSERT INTO remap VALUES (?, ?)", remap.items())
d.execute("UPDATE xp_samples SET stack_id = (SELECT new FROM remap WHERE old = stack_id)")
d.commit()
d.execute("VACUUM")
d.close()
print(f"{len(keep)} stack nodes kept, {len(made)} made for the samples")
