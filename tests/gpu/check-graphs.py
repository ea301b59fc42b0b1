#!/usr/bin/env python3
"""check-graphs.py XPCORR RUN_OR_DB TRUTH_JSON - `xpcorr report --by graph`
against a workload's ground truth (tests/gpu/graphs_serving.py --truth):
as many graph execs as captured graphs, each named for the function that
captured it, with the replays and nodes the truth counts; every node of a
replay attributed to a capture-time line."""
import collections
import json
import subprocess
import sys


def function_of(site):
    """"graphs_serving.py:37 capture_graphs" -> capture_graphs; "build_graph()" -> build_graph."""
    return site.split(" ")[-1].split("(")[0]


def main():
    xpcorr, run, truth_path = sys.argv[1:4]
    doc = json.load(open(truth_path))
    truth = doc["graphs"] if "graphs" in doc else doc["parent"]["graphs"]     # workload.cu's
    out = subprocess.run([xpcorr, "report", "--by", "graph", "--format", "json", "--top", "0", run],
                         check=True, capture_output=True, text=True).stdout
    got = json.loads(out)["graphs"]
    bad = []
    if len(got) != sum(t["captures"] for t in truth):
        bad.append("%d graph execs, the truth captured %d graphs" % (len(got), sum(t["captures"] for t in truth)))
    want = collections.Counter((t["capture_site"], t["replays"], t["nodes"]) for t in truth)
    have = collections.Counter()
    for g in got:
        site = function_of(g["capture_site"])
        have[(site, g["replays"], g["nodes"])] += 1
        unattributed = [n for n in g.get("node_list", []) if "not recorded" in n.get("capture_site", "")]
        if unattributed:
            bad.append("exec %s: nodes without a capture site: %s" % (g["exec_id"], unattributed))
    if have != want:
        bad.append("(capture site, replays, nodes): report %s, truth %s" % (dict(have), dict(want)))
    for b in bad:
        print("FAIL " + b)
    if not bad:
        print("ok   %d graphs: captured at %s, replays and nodes as the truth counts"
              % (len(got), sorted({t["capture_site"] for t in truth})))
    return 1 if bad else 0


sys.exit(main())
