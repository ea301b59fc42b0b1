"""check-nccl-counts.py DB COUNT_DIR - per rank, GPU records in an ingested
run of tests/gpu/nccl_jobs.py against torch.profiler's events of the same job
(nccl_jobs.py --count, a separate run of the same deterministic program):
kernels by name, copies and memsets by kind, named as Kineto names them.
Prints the names whose counts differ; exit 1 if any GPU-work name differs.
"""
import collections
import json
import os
import sqlite3
import sys

COPY = ["Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"]
MEM = ["Unknown", "Pageable", "Pinned", "Device", "Array", "Managed", "Device Static",
       "Managed Static"]


def name_of(table, k):
    return table[k] if 0 <= k < len(table) else "Unknown"


def ours(db, pid):
    n = collections.Counter()
    gp = pid << 24
    for name, c in db.execute("SELECT s.value, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN"
                              " StringIds s ON s.id = k.demangledName WHERE k.globalPid = ?"
                              " GROUP BY 1", (gp,)):
        n[name] += c
    for ck, sk, dk, c in db.execute("SELECT copyKind, srcKind, dstKind, count(*) FROM"
                                    " CUPTI_ACTIVITY_KIND_MEMCPY WHERE globalPid = ?"
                                    " GROUP BY 1, 2, 3", (gp,)):
        n["Memcpy %s (%s -> %s)" % (name_of(COPY, ck), name_of(MEM, sk), name_of(MEM, dk))] += c
    for mk, c in db.execute("SELECT memKind, count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET"
                            " WHERE globalPid = ? GROUP BY 1", (gp,)):
        n["Memset (%s)" % name_of(MEM, mk)] += c
    return n


def main():
    db = sqlite3.connect(sys.argv[1])
    bad = 0
    for pid, rank in db.execute("SELECT pid, rank FROM xp_ranks ORDER BY rank").fetchall():
        path = os.path.join(sys.argv[2], "count-%d.json" % rank)
        if not os.path.exists(path):
            print("rank %d: no %s" % (rank, path))
            bad += 1
            continue
        theirs = collections.Counter(json.load(open(path))["names"])
        mine = ours(db, pid)
        diff = sorted(k for k in set(mine) | set(theirs) if mine[k] != theirs[k])
        # Kineto's GPU-side spans of CPU annotations (record_function, as
        # "nccl:all_reduce") are events too, but no GPU work: a name without
        # a parameter list that no record of ours has
        spans = [k for k in diff if mine[k] == 0 and not k.startswith(("Memcpy", "Memset"))
                 and "(" not in k]
        work = [k for k in diff if k not in spans]
        total = sum(mine.values())
        print("rank %d (pid %d): xpcap %d GPU records, torch.profiler %d events; %d names differ"
              " (%d of them annotation spans, no GPU work)"
              % (rank, pid, total, sum(theirs.values()), len(diff), len(spans)))
        for k in diff:
            print("   %5d xpcap  %5d torch.profiler  %s%s" % (mine[k], theirs[k], k[:100],
                                                        "  [span]" if k in spans else ""))
        print("%s rank %d: every kernel, copy and memset counted alike (%d names, %d records)"
              % ("ok  " if not work else "FAIL", rank, len(mine), total))
        bad += bool(work)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
