#!/bin/sh
# report-views.sh - every `xpcorr report` view in every format on the real
# H100 fixtures: golden files, and what a person must be able to read off
# them whatever the golden files say: no text line over 120 columns without
# $COLUMNS, csv of one field count, json valid against report-schema.json,
# each kernel's first launch site in user code, and --by source putting the
# PyTorch loop's GPU time on its own lines.
#   report-views.sh XPCORR FIXTURES_DIR GOLDEN_DIR [--regenerate]
set -eu
xpcorr=$1 fixtures=$2 golden=$3 mode=${4:-compare}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/out"
unxz() { python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$@"; }
unxz "$fixtures/h100-torch-inproc/device.db.xz" "$tmp/torch.db"
unxz "$fixtures/h100-hf/device.db.xz" "$tmp/hf.db"
unxz "$fixtures/h100-torch/device.db.xz" "$tmp/uprobe.db"
unxz "$fixtures/h100-train/device.db.xz" "$tmp/train.db"
cp "$fixtures/h100-workload/device.db" "$tmp/workload.db"
unxz "$fixtures/h100x2-tp/device.db.xz" "$tmp/tp2.db"
cd "$tmp"
unset COLUMNS
for view in kernel stack api memop thread graph nvtx source; do
	for fmt in text csv json; do
		"$xpcorr" report --by $view --format $fmt --top 5 --stacks 2 torch.db \
			> out/torch-$view.$fmt 2> err.txt
	done
done
for fmt in text json; do
	"$xpcorr" report --by source --format $fmt --top 5 hf.db > out/hf-source.$fmt
	"$xpcorr" report --format $fmt --top 5 --stacks 1 workload.db > out/workload-kernel.$fmt
done
"$xpcorr" report --format text --top 5 --stacks 1 hf.db > out/hf-kernel.text
# CUDA graphs captured per batch size and replayed (H100): the raw run ingested
# here, with no symbols, so the links come from the graph events alone
mkdir graphs nosym
cp "$fixtures/h100-graphs"/*.xpr "$fixtures/h100-graphs/meta.json" graphs/
"$xpcorr" ingest --quiet --symfs nosym graphs
for fmt in text csv json; do
	"$xpcorr" report --by graph --format $fmt --stacks 4 graphs > out/graphs-graph.$fmt
done
python3 "$here/gpu/check-graphs.py" "$xpcorr" graphs "$fixtures/h100-graphs/truth.json"
# diff matches graphs by where they were captured: the same run against a copy
# whose graph and exec ids are all moved by 100 shows no change
cp graphs/xpcorr.db moved.db
python3 -c "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); d.executescript('UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET graphId = graphId + 100 WHERE graphId > 0; UPDATE xp_graph_events SET graphId = graphId + 100 WHERE graphId > 0; UPDATE xp_graph_events SET execId = execId + 100 WHERE execId > 0; UPDATE xp_graph_events SET origGraphId = origGraphId + 100 WHERE origGraphId > 0'); d.commit()" moved.db
"$xpcorr" diff --format csv graphs/xpcorr.db moved.db > graph-diff.csv 2>/dev/null
"$xpcorr" export --format chrome -o graphs.json graphs
# GPU time rooted at the outermost Python frame: one tower, interpreter frames left out
"$xpcorr" export --format folded --weight gpu --root python torch.db > out/torch-gpu-python.folded
"$xpcorr" export --format folded --weight gpu --root python --native torch.db > native.folded
# backward on autograd's threads: named for the node, the footer says why
"$xpcorr" report --format json --top 8 --stacks 2 train.db > out/train-kernel.json
"$xpcorr" report --format text --top 4 --stacks 2 train.db > out/train-kernel.text
"$xpcorr" info --format json train.db > train-info.json
# two ranks on two GPUs (NCCL): ranks named, copies between the GPUs with both ends
for view in memop thread rank; do
	"$xpcorr" report --by $view --top 6 --stacks 1 tp2.db > out/tp2-$view.text
done
"$xpcorr" report --format json --top 4 --stacks 1 tp2.db > out/tp2-kernel.json
"$xpcorr" report --format json --top 0 --stacks 1 tp2.db > tp2-all.json
"$xpcorr" export --format chrome -o tp2.json tp2.db
"$xpcorr" report --by rank --format json tp2.db > tp2-rank.json
"$xpcorr" report --by idle --format json tp2.db > tp2-idle.json
"$xpcorr" report --by wait --format json --top 0 tp2.db > tp2-wait.json
# recorded with 8 KiB stack copies: part of the GPU time stops short of Python
"$xpcorr" report --format json --top 3 --stacks 1 uprobe.db > out/uprobe-kernel.json

# every view of every bundled fixture fits 120 columns (checked below with the rest)
unxz "$fixtures/h100-torch-1024/device.db.xz" "$tmp/t1024.db"
mkdir wide
for db in torch uprobe t1024 hf workload train tp2; do
	for view in kernel stack api memop thread graph nvtx source; do
		"$xpcorr" report --by $view $db.db > wide/$db-$view.text 2>/dev/null
	done
done

# the first user's edges: a thread by its name; csv and json whole unless --top;
# -o FILE as stdout; --since/--until as an offset from the run's start
"$xpcorr" report --by thread train.db > edges-thread.text
for fmt in csv json; do
	"$xpcorr" report --format $fmt hf.db > edges-all.$fmt 2>/dev/null
	"$xpcorr" report --format $fmt --top 0 hf.db > edges-top0.$fmt 2>/dev/null
	"$xpcorr" report --format $fmt --top 2 hf.db > edges-top2.$fmt 2>/dev/null
	cmp edges-all.$fmt edges-top0.$fmt
done
"$xpcorr" report --top 3 --stacks 1 -o edges-o.text torch.db > edges-o.stdout
"$xpcorr" report --top 3 --stacks 1 torch.db > edges-stdout.text
cmp edges-o.text edges-stdout.text && [ ! -s edges-o.stdout ]
t0=$(python3 -c "import sqlite3; print(sqlite3.connect('torch.db').execute(\"SELECT value FROM META_DATA_EXPORT WHERE name = 'meta.start_monotonic_ns'\").fetchone()[0])")
"$xpcorr" report --format json --since +4.4s --until +4450ms torch.db > edges-offset.json
"$xpcorr" report --format json --since $((t0 + 4400000000)) --until $((t0 + 4450000000)) torch.db > edges-ns.json
cmp edges-offset.json edges-ns.json
if "$xpcorr" report --since +4.4x torch.db > /dev/null 2> edges-bad.err; then
	echo "FAIL --since +4.4x (no such unit) was taken"; exit 1
fi
grep -q "expected +SECONDS with a unit" edges-bad.err

python3 - "$here/report-schema.json" <<'PY'
import csv, glob, json, subprocess, sys
# a thread the program named (autograd's) is shown by its name
thread = open("edges-thread.text").read()
assert "pt_autograd_0 " in thread and "python3 " in thread, thread
# csv and json carry every row unless --top: the 78 kernels, not the text's 30
rows = list(csv.reader(open("edges-all.csv")))
assert len(rows) - 1 == 78, len(rows)
assert len(list(csv.reader(open("edges-top2.csv")))) == 3
doc = json.load(open("edges-all.json"))
assert len(doc["rows"]) == len(rows) - 1 == doc["groups"], (len(doc["rows"]), len(rows), doc["groups"])
assert len(json.load(open("edges-top2.json"))["rows"]) == 2
# the window: some of the run's GPU work, not all, not none
win = json.load(open("edges-offset.json"))
assert 0 < win["coverage"]["records"] < 2625, win["coverage"]
for name in glob.glob("out/*.text") + glob.glob("wide/*.text"):
    for n, line in enumerate(open(name, encoding="utf-8"), 1):
        assert len(line.rstrip("\n")) <= 120, f"{name}:{n}: {len(line) - 1} columns"
for name in glob.glob("out/*.csv"):
    widths = {len(row) for row in csv.reader(open(name, encoding="utf-8"))}
    assert len(widths) == 1, f"{name}: rows of {sorted(widths)} fields"
checker = sys.argv[1].replace("report-schema.json", "check-report-json.py")
subprocess.run([sys.executable, checker, sys.argv[1]] + glob.glob("out/*.json"), check=True)
# each kernel's first launch site names user code
for run, want in (("torch", "torch_loop.py:"), ("workload", None)):
    doc = json.load(open(f"out/{run}-kernel.json"))
    for row in doc["rows"]:
        first = row["stacks"][0]["frames"]
        if want:
            assert first.startswith(want), (run, row["name"], first[:80])
        else:   # a C function of the program: not the kernel's host stub, not a library
            site = first.split(" <- ")[0]
            assert site not in row["name"] and ".so" not in site, (row["name"], first[:80])
# --by source: the loop's GPU time on torch_loop.py lines (self), all of it in total
doc = json.load(open("out/torch-source.json"))
self_ns = sum(f["self_ns"] for f in doc["functions"] if f["file"] == "torch_loop.py")
assert self_ns >= 0.99 * doc["total_ns"], (self_ns, doc["total_ns"])
lines = [l.rsplit(" ", 1) for l in open("out/torch-gpu-python.folded")]
assert {l[0].split(";")[0] for l in lines} == {"torch_loop.py:119 <module>"}, {l[0].split(";")[0] for l in lines}
assert not any("python3.12+" in l[0] or "PyObject_" in l[0] for l in lines), [l[0] for l in lines][:2]
import sqlite3
db = sqlite3.connect("torch.db")
gpu_ns = sum(db.execute(f"SELECT ifnull(sum(end - start), 0) FROM CUPTI_ACTIVITY_KIND_{t}").fetchone()[0]
             for t in ("KERNEL", "MEMCPY", "MEMSET"))
assert sum(int(l[1]) for l in lines) == gpu_ns, (sum(int(l[1]) for l in lines), gpu_ns)
assert "PyObject_Vectorcall" in open("native.folded").read()
# the trace: each replay a slice around its kernels, an arrow from its capture
trace = json.load(open("graphs.json"))["traceEvents"]
replays = [e for e in trace if e.get("cat") == "cuda_graph"]
kernels = [e for e in trace if e.get("cat") == "kernel" and "graph id" in e["args"]]
assert len(replays) == 24 and all(e["name"] == "graph: graphs_serving.py:37 capture_graphs" for e in replays), replays[:2]
for r in replays:
    inside = [k for k in kernels if (k["pid"], k["tid"]) == (r["pid"], r["tid"]) and
              r["ts"] <= k["ts"] and k["ts"] + k["dur"] <= r["ts"] + r["dur"] + 0.001]
    assert len(inside) == r["args"]["kernels"] == 4, (r, len(inside))
captures = [e for e in trace if e.get("cat") == "graph_capture"]
assert len(captures) == 48 and {e["ph"] for e in captures} == {"s", "f"}, len(captures)
rows = [r for r in csv.DictReader(open("graph-diff.csv")) if r["section"] == "graph"]
assert len(rows) == 4 and all(r["diff_ns"] == "0" and "capture_graphs [" in r["name"] for r in rows), rows
# the footer says why GPU time has no Python frame, with the remedy
doc = json.load(open("out/uprobe-kernel.json"))
cut = [w for w in doc["not_python"] if w["reason"] == "truncated"]
assert cut and "--launch-stacks inproc" in cut[0]["why"], doc["not_python"]
assert abs(doc["python"]["pct"] + sum(w["pct"] for w in doc["not_python"]) - 100) < 0.2, doc
doc = json.load(open("out/train-kernel.json"))
auto = [w for w in doc["not_python"] if w["reason"] == "autograd"]
assert auto and 20 < auto[0]["pct"] < 30, doc["not_python"]
sites = [s["frames"] for r in doc["rows"] for s in r["stacks"]]
assert any(s.startswith("autograd backward: AddmmBackward0") for s in sites), sites
assert not doc["losses"], doc["losses"]     # no Python on a thread is no loss
info = json.load(open("train-info.json"))
by = {w["launcher"]: w for w in info["python"]["gpu_by_launcher"]}
assert set(by) == {"python", "autograd"} and "autograd's backward threads" in by["autograd"]["why"], by
assert abs(by["autograd"]["pct"] - auto[0]["pct"]) < 0.1, (by, auto)
assert not [l for l in info["losses"] if l["reason"] == "python_no_thread"], info["losses"]
# NCCL on two GPUs: each rank's copy to the other GPU names both devices, in
# the report and the trace; every NCCL kernel of the tensor-parallel forward
# has the Python line of its collective
memop = open("out/tp2-memop.text").read()
assert "[CUDA memcpy Peer-to-Peer 0 -> 1]" in memop and "[CUDA memcpy Peer-to-Peer 1 -> 0]" in memop, memop
assert "rank 0: " in open("out/tp2-thread.text").read()
peer = [e for e in json.load(open("tp2.json"))["traceEvents"] if e.get("name", "").startswith("Memcpy PtoP")]
assert sorted((e["args"]["src device"], e["args"]["dst device"]) for e in peer) == [(0, 1), (1, 0)], peer
# --by rank names the rank the others waited for in a collective (the last
# to start it), as --by idle's "waiting for rank" does, not the rank whose
# collective kernel lasted longest (the one that waited)
coll = [r for r in json.load(open("tp2-rank.json"))["spread"] if r["collective"]]
assert coll and all(r["slowest_rank"] == 1 and r["waited_for_slowest_ns"] > 0.8 * r["waited_ns"]
                    for r in coll), coll
idle = json.dumps(json.load(open("tp2-idle.json")))
assert "rank 1 (the last to start the collective)" in idle
# --by wait charges the same waits, all of them, most to rank 1's host; the
# trace draws them as flows from the waiting slices
wait = json.load(open("tp2-wait.json"))
assert wait["total_wait_ns"] > 0 and sum(r["ns"] for r in wait["blame"]) == wait["total_wait_ns"], wait
assert sum(r["ns"] for r in wait["blame"] if r["late_rank"] == 1) > 0.8 * wait["total_wait_ns"], wait
assert any(e.get("cat") == "blame" for e in json.load(open("tp2.json"))["traceEvents"])
doc = json.load(open("tp2-all.json"))
nccl = [r for r in doc["rows"] if r["name"].startswith("ncclDevKernel")]
assert nccl and all(s["frames"].startswith("distributed_c10d.py:") for r in nccl for s in r["stacks"]), nccl
assert doc["python"]["line_pct"] == 100.0, doc["python"]
# transformers between the program and the GPU: its own lines lead to all of it
doc = json.load(open("out/hf-source.json"))
own = sum(l["gpu_ns"] for l in doc["own_code_lines"])
assert doc["own_code_lines"][0]["file"] == "hf_model.py" and own >= 0.99 * doc["total_ns"], doc["own_code_lines"]
PY

if [ "$mode" = --regenerate ]; then
	mkdir -p "$golden"
	cp out/* "$golden/"
	echo "golden files written to $golden; review them with git diff"
	exit 0
fi
status=0
for f in out/*; do
	diff -u "$golden/$(basename "$f")" "$f" || status=1
done
exit $status
