#!/usr/bin/env python3
"""check-idle.py XPCORR RUN OPS_JSON SCRIPT - what idle-device.sh checks on the
recording of tests/gpu/idle_train.py: --by idle names the loader
(load_batch) among its top three idle causes and the loss.item() line as the
call that drained the queue before the most idle time, and
--by op's GPU time per operator is within 5% of torch.profiler's self GPU
time (key_averages) for every aten:: op above 1% of the aten:: ops' GPU time.
Like with like: key_averages also lists its kernels, copies ("Memcpy HtoD"),
driver events ("Lazy Function Loading") and annotations
("Optimizer.step#SGD.step") with the same self device time as the op that
ran them; only the aten:: ops that launched device work themselves (self
device time > 0) are operators in our sense. RUN may be a run directory
or an xpcorr.db.
  python3 tests/gpu/check-idle.py build/bin/xpcorr run/ ops.json tests/gpu/idle_train.py"""
import json
import subprocess
import sys

xpcorr, run, ops_json, script = sys.argv[1:5]
item_line = next(n for n, line in enumerate(open(script), 1) if "xp:item-line" in line)
bad = 0


def report(view):
    p = subprocess.run([xpcorr, "report", "--by", view, "--format", "json", "--top", "0", run],
                       capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


idle = report("idle")
for d in idle["devices"]:
    top = d["causes"][:3]
    for c in top:
        print(f"  {c['share_percent']:6.1f}%  {c['cause']:<8} {c['where']}")
    loader = any(c["cause"] == "host" and "load_batch" in c["where"] for c in top)
    print(("ok  " if loader else "FAIL") + " the loader (load_batch) among the top 3 idle causes")
    # the .item() line emptied the queue before the loader's gaps: the top
    # blocking call under "Queue drained by", with a share of idle time
    # about the loader's
    calls = [c for c in d["drained_by"] if c["cause"] == "sync"]
    for c in d["drained_by"][:3]:
        print(f"  {c['share_percent']:6.1f}%  drained by {c['cause']:<4} {c['where']}")
    item = bool(calls) and (f":{item_line} " in calls[0]["where"] or calls[0]["where"].endswith(f":{item_line}"))
    loader_share = sum(c["share_percent"] for c in d["causes"] if "load_batch" in c["where"])
    share = calls[0]["share_percent"] if item else 0
    print(("ok  " if item else "FAIL") + f" the .item() line ({item_line}) drained the queue first:"
          f" {share:.1f}% of idle time (the loader's gaps: {loader_share:.1f}%)")
    bad += (not loader) + (not item)


# An op by its at::_ops name, both sides the same rule: key_averages names
# an op without its overload ("aten::sum"), ours is the at::_ops identifier
# split at its last underscore before a capital ("aten::sum_dim.IntList" for
# at::_ops::sum_dim_IntList, which is aten::sum.dim_IntList): both written
# with "_" for "." and an op of ours counted under the longest of theirs that
# is its identifier or begins it before a "_" ("sum" of "sum_dim_IntList",
# "add_" rather than "add" of "add__Tensor").
def ident(op):
    return op.split("::", 1)[1].replace(".", "_")


theirs = {k: v["self_gpu_us"] * 1000 for k, v in json.load(open(ops_json)).items()
          if k.startswith("aten::") and v["self_gpu_us"] > 0}
ours = {}
for o in report("op")["ops"]:
    if not o["op"].startswith("aten::"):
        continue
    mine = ident(o["op"])
    match = [t for t in theirs if mine == ident(t) or mine.startswith(ident(t) + "_")]
    base = max(match, key=len) if match else o["op"]
    ours[base] = ours.get(base, 0) + o["gpu_ns"]
if not theirs:
    sys.exit(f"check-idle.py: {ops_json} has no aten:: op with self device time")
total = sum(theirs.values())
for op, ns in sorted(theirs.items(), key=lambda kv: -kv[1]):
    if ns < 0.01 * total:
        continue
    got = ours.get(op, 0)
    ok = abs(got - ns) <= 0.05 * ns
    bad += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {op}: ours {got} ns, torch.profiler {ns:.0f} ns"
          f" ({100.0 * (got - ns) / ns:+.1f}%)")
sys.exit(1 if bad else 0)
