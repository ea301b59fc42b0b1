#!/bin/bash
# graphs-device.sh - on the GPU machine: CUDA graphs captured and replayed
# (tests/gpu/graphs_serving.py, and the CUDA C workload's graphs) recorded at
# xpcap's defaults; the run, its database, the graph events and kernels'
# graph ids, the report --by graph and the ground truth land in $OUT.
#   CARRY=.devcarry/e2e OUT=/tmp/out bash tests/gpu/graphs-device.sh
. "$(dirname "$(realpath "$0")")/device-env.sh" graphs
run="$R/graphs"
python3 "$G/graphs_serving.py" > "$R/bare.out" 2>/dev/null; echo "rc=$?" >> "$R/bare.out"
"$C/xpcap" record -q -o "$run" -- python3 "$G/graphs_serving.py" > "$R/rec.out" 2>/dev/null; echo "rc=$?" >> "$R/rec.out"
if cmp -s "$R/bare.out" "$R/rec.out"; then echo "ok   graphs: output and exit status unchanged"
else echo "FAIL graphs: output differs"; diff "$R/bare.out" "$R/rec.out" | head -5; fi
python3 "$G/graphs_serving.py" --profile /tmp/prof.json 2>&1 >/dev/null | grep profiler_cuda_events > "$run/torch-profiler-count.txt"
python3 "$G/graphs_serving.py" --truth "$run/truth.json" > /dev/null 2>&1
cat "$run/truth.json"
"$X" ingest "$run"
db="$run/xpcorr.db"
q() { python3 -c "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); [print('|'.join(map(str,r))) for r in d.execute(sys.argv[2])]" "$db" "$1"; }
echo "== counts: ours vs torch.profiler"; cat "$run/torch-profiler-count.txt"
cp /tmp/prof.json.names.json "$OUT/torch-profiler-names.json" 2>/dev/null
q "SELECT s.value, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName GROUP BY 1 ORDER BY 2 DESC" > "$OUT/our-kernel-names.txt"
q "SELECT 'memcpy', copyKind, count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY GROUP BY 2 UNION ALL SELECT 'memset', 0, count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET" >> "$OUT/our-kernel-names.txt"
q "SELECT (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL)+(SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY)+(SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET)"
echo "== graph events by kind"; q "SELECT event, count(*), count(DISTINCT graphId), count(DISTINCT execId), sum(correlationId > 0) FROM xp_graph_events GROUP BY event"
echo "== first 40 graph events"; q "SELECT * FROM xp_graph_events ORDER BY ts LIMIT 40"
echo "== kernels by graphId"; q "SELECT graphId, count(*), count(DISTINCT graphNodeId), count(DISTINCT correlationId), min(graphNodeId), max(graphNodeId) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphId IS NOT NULL AND graphId > 0 GROUP BY graphId"
echo "== kernel node ids vs events"; q "SELECT k.graphNodeId, (SELECT group_concat(event) FROM xp_graph_events e WHERE e.nodeId = k.graphNodeId), (SELECT group_concat(origNodeId) FROM xp_graph_events e WHERE e.nodeId = k.graphNodeId) FROM (SELECT DISTINCT graphNodeId FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphId > 0) k LIMIT 12"
echo "== capture API calls"; q "SELECT s.value, count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId GROUP BY 1 ORDER BY 2 DESC"
"$X" report --by graph --stacks 4 "$run"
python3 "$G/check-graphs.py" "$X" "$run" "$run/truth.json" || echo "FAIL graphs: report against the truth"
# the CUDA C workload's graphs too
"$C/xpcap" record -q -o "$R/wl" -- "$C/workload" > /dev/null 2>&1
"$X" ingest "$R/wl"
db="$R/wl/xpcorr.db"
echo "== workload graph events"; q "SELECT event, count(*), count(DISTINCT graphId), sum(correlationId > 0) FROM xp_graph_events GROUP BY event"
q "SELECT graphId, count(*), count(DISTINCT graphNodeId) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphId > 0 GROUP BY graphId"
"$C/workload" --truth > "$R/wl-truth.json"
"$X" report --by graph --stacks 3 "$R/wl"
python3 "$G/check-graphs.py" "$X" "$R/wl" "$R/wl-truth.json" || echo "FAIL workload graphs"
python3 "$G/check-workload" --xpcorr "$X" "$R/wl" "$R/wl-truth.json" | tail -3
# torch.compile(mode="reduce-overhead"): the graph Inductor captures
"$C/xpcap" record -q -o "$R/compiled" -- python3 "$G/compiled_graphs.py" 2>/dev/null
python3 "$G/compiled_graphs.py" --truth "$R/compiled-truth.json" 2>&1 | tail -3
cat "$R/compiled-truth.json"
"$X" ingest "$R/compiled"
python3 "$G/check-graphs.py" "$X" "$R/compiled" "$R/compiled-truth.json" || echo "FAIL compiled graphs"
"$X" report --by graph --stacks 4 "$R/compiled"
mkdir -p "$OUT/fixture"
cp "$run"/*.xpr "$run/meta.json" "$run/truth.json" "$run/torch-profiler-count.txt" "$OUT/fixture/" 2>/dev/null
cp "$run"/perf-*.map "$OUT/fixture/" 2>/dev/null
xz -9 -c "$run/xpcorr.db" > "$OUT/fixture/device.db.xz"
ls -la "$OUT/fixture"
