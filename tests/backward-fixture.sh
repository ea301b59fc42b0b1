#!/bin/bash
# backward-fixture.sh - backward kernels at the forward line that made their
# autograd node, on a real training run from the H100 (fixtures/h100-train-
# backward: tests/gpu/train_loop.py at the defaults, ingested there) against
# torch.profiler's own linkage of the same program (its backward ops' sequence
# numbers, its forward ops' Python lines from its event tree), kept beside it:
# every backward kernel of the run reaches a forward line, the same line
# torch.profiler links it to;
# the report names the site with its node, --by source puts backward time on
# the forward lines, the flame graph under them, the Chrome trace links them,
# info accounts for all of it.
# With NAME ddp (fixtures/h100x2-ddp-nccl: rank 0 of tests/gpu/ddp_nccl.py,
# DDP over NCCL on two H100s): the bucket all-reduces DDP's reducer launched
# from AccumulateGrad's hook sit at no forward line (torch.profiler links
# them to no forward op either), named by their bucket.
# With NAME gpt2 (fixtures/h100-train-backward-gpt2: tests/gpu/hf_train.py,
# a transformers GPT-2): its view nodes (no launch of their own) sit at the
# line of the launches around them or under the enclosing line, said so in
# their note and in info, and that line is among torch.profiler's frames.
#   backward-fixture.sh XPCORR FIXTURE_DIR TESTS_GPU_DIR [mlp|gpt2|ddp]
set -eu
xpcorr=$1; fixture=$2; gpu=$3; name=${4:-mlp}
[ -f "$fixture/device.db.xz" ] || { echo "skip: no fixture $fixture"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/run"
[ ! -f "$fixture/meta.json" ] || cp "$fixture/meta.json" "$tmp/run/"
xz -dc "$fixture/device.db.xz" > "$tmp/run/xpcorr.db"
cd "$tmp"
python3 "$gpu/backward_truth.py" ours run/xpcorr.db ours.json
python3 "$gpu/backward_truth.py" compare "$name" ours.json "$fixture/torch-profiler-backward.json" \
	--truth truth.json
"$xpcorr" info run > info.txt
if [ "$name" = ddp ]; then
	"$xpcorr" report --format json --top 0 --stacks 5 run > kernel.json
	"$xpcorr" info --format json run > info.json
	python3 - "$fixture/backward-truth.json" <<'PY'
import json, sqlite3, sys
t = json.load(open("truth.json"))["ddp"]
kept = json.load(open(sys.argv[1]))["rank0"]
# every kernel matched by name and order; the backward ones as on the GPU machine
assert t["ours_kernels"] == t["profiler_kernels"] == t["matched"] > 0, t
assert t["bwd_n"] == kept["bwd_n"] > 0 and t["prof_bwd_n"] == t["ours_bwd_n"], (t, kept)
assert t["backward_with_line_pct"] + t["backward_enclosing_pct"] >= 99.9, t
assert t["same_node_pct"] == 100, t     # ScaledDotProductEfficientAttentionBa... too
assert t["prof_line_ns"] >= 0.9 * t["line_ns"] and t["agree_line_pct"] == 100, t
# the bucket all-reduces: in AccumulateGrad's hook for torch.profiler, with no
# forward line; ours at none either, named by their bucket
c = t["collectives"]
assert c["prof_backward_n"] == c["ours_backward_n"] == kept["collectives"]["ours_backward_n"] > 0, c
assert c["prof_line_n"] == 0 and c["ours_line_n"] == c["n"] - c["ours_backward_n"], c
ours = json.load(open("ours.json"))["processes"]
bucket = [k for v in ours.values() for k in v if any(n.startswith("[DDP bucket ") for n in k["notes"])]
assert len(bucket) == c["ours_backward_n"], len(bucket)
assert all(not k["frames"] and k["backward"] == "AccumulateGrad, DDP reducer hook" for k in bucket), \
    [k for k in bucket if k["frames"]][:2]
for r in json.load(open("kernel.json"))["rows"]:
    if r["name"].startswith("ncclDevKernel_AllReduce"):
        sites = [s["frames"] for s in r["stacks"]]
        assert any(s.startswith("NCCL: DDP reducer, bucket ") for s in sites), sites
        assert not any("AccumulateGrad from" in s or s.startswith("linear.py") for s in sites), sites
ag = json.load(open("info.json"))["autograd"]
why = [u for u in ag["unknown"] if u["why"].startswith("DDP's reducer: a gradient bucket's all-reduce")]
assert why and why[0]["launches"] == len(bucket), ag["unknown"]
db = sqlite3.connect("run/xpcorr.db")
assert not db.execute("SELECT count(*) FROM xp_autograd WHERE node = 'generated'").fetchone()[0]
print("ok: %d kernels matched, %d backward kernels at torch.profiler's node and line (%.1f%% at a"
      " forward line); %d bucket all-reduces at no forward line, as torch.profiler" % (
          t["matched"], t["bwd_n"], t["backward_with_line_pct"], len(bucket)))
PY
	exit 0
fi
if [ "$name" = gpt2 ]; then
	"$xpcorr" report --format json --top 0 --stacks 5 run > kernel.json
	"$xpcorr" info --format json run > info.json
	"$xpcorr" report --by source --format json --top 0 run > source.json
	python3 - "$fixture/backward-truth.json" <<'PY'
import json, sys
t = json.load(open("truth.json"))["gpt2"]
kept = json.load(open(sys.argv[1]))["hf"]
assert t["bwd_n"] == kept["bwd_n"] > 0 and t["prof_bwd_n"] == t["ours_bwd_n"], (t, kept)
assert t["ours_kernels"] == t["profiler_kernels"], t
# every backward kernel at a line or under an enclosing one; at a line, the
# same line as torch.profiler's where it has one, for most of the time
assert t["backward_with_line_pct"] >= 90 and t["backward_enclosing_pct"] > 0, t
assert t["backward_with_line_pct"] + t["backward_enclosing_pct"] >= 99.9, t
assert t["prof_line_ns"] >= 0.8 * t["line_ns"] and t["agree_line_pct"] >= 95, t
assert t["enclosing_prof_ns"] == t["enclosing_ns"] and t["enclosing_agree_pct"] == 100, t
sites = [s["frames"] for r in json.load(open("kernel.json"))["rows"] for s in r["stacks"]]
assert any("made in GPT2Attention.forward between lines" in s for s in sites), sites
assert not any(s.startswith("autograd backward") for s in sites), sites
ag = json.load(open("info.json"))["autograd"]
assert ag["under_enclosing_line_launches"] == 16 and not ag["unknown"], ag
assert ag["at_forward_line_launches"] + ag["under_enclosing_line_launches"] == ag["backward_launches"], ag
assert "under an enclosing forward line" in open("info.txt").read()
# --by source: the views' time in a row of its own, no line's self time
src = json.load(open("source.json"))
assert src["under_enclosing_line"]["instances"] == 16, src.get("under_enclosing_line")
call = [f for f in src["functions"] if f["function"] == "Module._call_impl"]
assert call and call[0]["self_ns"] == 0 and call[0]["total_ns"] > 0, call
print("ok: %d backward kernels, %.1f%% at a forward line (%.1f%% at torch.profiler's line),"
      " %.1f%% under an enclosing one (all among torch.profiler's frames)" % (
          t["bwd_n"], t["backward_with_line_pct"], t["agree_line_pct"], t["backward_enclosing_pct"]))
PY
	exit 0
fi
"$xpcorr" report --format json --top 0 --stacks 3 run > kernel.json
"$xpcorr" report --by source --format json --top 0 run > source.json
"$xpcorr" report --by source --top 4 run > source.txt
"$xpcorr" info --format json run > info.json
"$xpcorr" export --format folded --weight gpu run > gpu.folded
"$xpcorr" export --format chrome -o trace.json run
python3 - "$fixture/backward-truth.json" <<'PY'
import json, sys
t = json.load(open("truth.json"))["mlp"]
kept = json.load(open(sys.argv[1]))["mlp"]
# the same comparison as on the GPU machine, from the database alone
assert t["bwd_n"] == kept["bwd_n"] and t["bwd_n"] > 0, (t["bwd_n"], kept["bwd_n"])
assert t["prof_bwd_n"] == t["ours_bwd_n"], (t["prof_bwd_n"], t["ours_bwd_n"])
assert t["backward_with_line_pct"] >= 95, t
# at torch.profiler's line (its event tree: the line that called the op),
# where it names one, for most of the time (not vacuous)
assert t["prof_line_ns"] >= 0.9 * t["line_ns"] and t["agree_line_pct"] >= 95, t
assert t["ours_kernels"] == t["profiler_kernels"], (t["ours_kernels"], t["profiler_kernels"])
# sites: the forward line, its op and the node
sites = [s["frames"] for r in json.load(open("kernel.json"))["rows"] for s in r["stacks"]]
assert any("aten::linear \u2039backward: AddmmBackward0\u203a" in s for s in sites), sites
assert not any(s.startswith("autograd backward") for s in sites), sites
# --by source: backward time on the forward lines, none without a line
src = json.load(open("source.json"))
assert src["backward_ns"] > 0, src.keys()
lin = [f for f in src["functions"] if f["function"] == "Linear.forward"]
assert lin and lin[0]["backward_ns"] > 0.3 * lin[0]["total_ns"], lin
assert "no_python_line" not in src, src.get("no_python_line")
assert "Backward (%)" in open("source.txt").read()
# folded GPU stacks: the node under the forward line
assert any("Linear.forward" in l and "\u2039backward: AddmmBackward0\u203a" in l
           for l in open("gpu.folded")), "folded"
# Chrome trace: a fwdbwd arrow from the forward launch's API call to each
# backward kernel, as the GPU slice it binds to starts
ev = json.load(open("trace.json"))["traceEvents"]
api = {(e["pid"], e["tid"], e["ts"]) for e in ev if e.get("ph") == "X" and e.get("cat") in
       ("cuda_runtime", "cuda_driver")}
gpu = {(e["pid"], e["tid"], e["ts"]) for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"}
fb = [e for e in ev if e.get("cat") == "fwdbwd"]
starts = [e for e in fb if e["ph"] == "s"]
ends = [e for e in fb if e["ph"] == "f"]
assert len(starts) == len(ends) == t["ours_bwd_n"], (len(starts), len(ends), t["ours_bwd_n"])
assert all((e["pid"], e["tid"], e["ts"]) in api for e in starts), "fwdbwd starts off an API call"
assert all((e["pid"], e["tid"], e["ts"]) in gpu and e["bp"] == "e" for e in ends), "fwdbwd ends"
# info: every backward launch at a forward line, the library's words
ag = json.load(open("info.json"))["autograd"]
assert ag["backward_launches"] > 0 and ag["at_forward_line_launches"] == ag["backward_launches"], ag
assert ag["processes"][0]["reads_nodes"] and ag["processes"][0]["rejected"] == 0, ag
print("ok: %d backward kernels, %.1f%% of their GPU time at a forward line, %.1f%% at"
      " torch.profiler's line" % (t["bwd_n"], t["backward_with_line_pct"], t["agree_line_pct"]))
PY
