#!/usr/bin/env python3
"""idle-truth.py - the analyses of `xpcorr report` against a synthetic job
whose GPU idle causes are known (tests/synthgaps.c): two ranks, the second
a straggler, merged into a job, and one rank alone. --by idle: every part
of the step (compute, communication, memory, waiting for another rank,
idle) and every idle cause (the Python functions sampled in the gaps, the
synchronize call, the launch, the late rank) within 1% of the truth, for
all steps and for --step 3; --by overlap: communication, its overlapped
and exposed parts per rank; --by launch: delays, queue depths and call
costs as built; --by op: calls and GPU time. csv and text agree with the
json, and text fits 120 columns.

    idle-truth.py XPCORR GEN_RUN FIXTURE_EXE FIXTURE_LIB
"""
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile

xpcorr, gen_run, exe, lib = sys.argv[1:5]
STEPS = 40
failed = []


def run(*args):
    p = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, COLUMNS=""))
    if p.returncode:
        sys.exit(f"FAIL {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def close(name, got, want):
    ok = abs(got - want) <= 0.01 * want if want else got == 0
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {got} ns, truth {want} ns")
    if not ok:
        failed.append(name)


def check(label, device, truth, scale=1.0):
    for part in ("compute_ns", "communication_ns", "memory_ns", "rank_wait_ns", "idle_ns"):
        close(f"{label} {part}", device[part], truth[part] * scale)
    matched = 0
    for key, want in truth["causes"].items():
        kind, where = key.split(":", 1)
        got = sum(c["ns"] for c in device["causes"] if c["cause"] == kind and where in c["where"])
        matched += got
        close(f"{label} cause {key}", got, want * scale)
    # nothing unexplained: the causes named above are all of the idle time
    close(f"{label} all causes", matched, (truth["idle_ns"] + truth["rank_wait_ns"]) * scale)
    # what drained the queue before each gap: the blocking call the host was
    # in when the GPU ran out of work; one step alone has no first gap
    drained = dict(truth["drained"])
    if scale != 1.0:
        drained = {k: (truth["idle_ns"] * scale if k.startswith("sync:") else 0) / scale
                   for k in drained}
    for key, want in drained.items():
        kind, where = key.split(":", 1)
        got = sum(c["ns"] for c in device["drained_by"] if c["cause"] == kind and where in c["where"])
        close(f"{label} drained by {key or 'none'}", got, want * scale)
    close(f"{label} drained, all gaps", sum(c["ns"] for c in device["drained_by"]), truth["idle_ns"] * scale)


with tempfile.TemporaryDirectory() as tmp:
    truths = []
    for rank in (0, 1):
        t = os.path.join(tmp, f"t{rank}.json")
        run(gen_run, "gaps", exe, lib, os.path.join(tmp, f"r{rank}"), str(rank), "2", str(STEPS), t)
        truths.append(json.load(open(t)))
    alone = os.path.join(tmp, "alone")
    run(gen_run, "gaps", exe, lib, alone, "0", "1", str(STEPS), os.path.join(tmp, "ta.json"))
    truth_alone = json.load(open(os.path.join(tmp, "ta.json")))
    job = os.path.join(tmp, "job")
    run(xpcorr, "merge", "-q", "-o", job, os.path.join(tmp, "r0"), os.path.join(tmp, "r1"))

    report = json.loads(run(xpcorr, "report", "--by", "idle", "--format", "json", job))
    devices = {d["rank"]: d for d in report["devices"]}
    assert sorted(devices) == [0, 1], f"ranks {sorted(devices)}"
    for rank in (0, 1):
        assert devices[rank]["steps"] == STEPS, devices[rank]["steps"]
        check(f"job rank {rank}", devices[rank], truths[rank])
    one = json.loads(run(xpcorr, "report", "--by", "idle", "--step", "3", "--format", "json", job))
    for d in one["devices"]:
        assert d["steps"] == 1, d["steps"]
        check(f"job rank {d['rank']} step 3", d, truths[d["rank"]], 1.0 / STEPS)
    solo = json.loads(run(xpcorr, "report", "--by", "idle", "--format", "json", alone))
    check("one rank alone", solo["devices"][0], truth_alone)

    # json as the schema says, for both views
    here = os.path.dirname(os.path.abspath(__file__))
    for view in ("idle", "op", "launch", "overlap"):
        out = os.path.join(tmp, f"{view}.json")
        with open(out, "w") as f:
            f.write(run(xpcorr, "report", "--by", view, "--format", "json", job))
        run(sys.executable, os.path.join(here, "check-report-json.py"),
            os.path.join(here, "report-schema.json"), out)
    ops = json.load(open(os.path.join(tmp, "op.json")))["ops"]
    by_op = {o["op"]: o for o in ops}
    # no aten:: frames here: each CUDA call is its own operator; the gemm and
    # the all-reduce are both cudaLaunchKernel, 2 calls a step on 2 ranks
    assert by_op["cudaLaunchKernel"]["calls"] == 6 * STEPS, by_op
    assert by_op["cudaLaunchKernel"]["gpu_ns"] == sum(truths[r]["kernel_ns"] for r in (0, 1)), by_op
    assert by_op["cudaStreamSynchronize"]["gpu_ops"] == 0, by_op
    print("ok   json schema; --by op sums the calls and their GPU time")
    # overlap: the all-reduce's last 200 us under a kernel of another stream
    over = {d["rank"]: d for d in json.load(open(os.path.join(tmp, "overlap.json")))["devices"]}
    for rank in (0, 1):
        t = truths[rank]
        close(f"overlap rank {rank} communication", over[rank]["communication_ns"],
              (t["communication_ns"] + t["rank_wait_ns"] + t["overlapped_ns"]))
        close(f"overlap rank {rank} overlapped", over[rank]["overlapped_ns"], t["overlapped_ns"])
        coll = over[rank]["collectives"][0]
        assert coll["calls"] == STEPS and "xp_parse" in coll["site"], coll
    # launch: per step the gemm 10 us after its call, the all-reduce 2990 us,
    # each call 5 us; stream 7 holds 0, 1, 2 ops at its three launches
    launch = {d["rank"]: d for d in json.load(open(os.path.join(tmp, "launch.json")))["devices"]}
    s7 = [x for x in launch[0]["streams"] if x["stream"] == 7][0]
    assert s7["launches"] == 3 * STEPS and s7["queue_depth"] == {"min": 0, "median": 1, "p99": 2}, s7
    assert s7["delay_ns"]["min"] == 10000 and s7["verdict"] == "keeping up", s7
    s13 = [x for x in launch[0]["streams"] if x["stream"] == 13][0]
    assert s13["verdict"] == "waits on other work", s13     # queue empty, 4.9 ms late
    nccl = [k for k in launch[1]["kernels"] if k["name"].startswith("nccl")][0]
    assert nccl["delay_ns"] == {"min": 2990000, "median": 2990000, "p99": 2990000}, nccl
    api = [a for a in launch[0]["apis"] if a["name"] == "cudaLaunchKernel"][0]
    assert api["launches"] == 3 * STEPS and api["call_ns"]["median"] == 5000, api
    # text: the queue's columns say which statistic each is, alike in both
    # tables (issue 43: "Queue med p99" over min, med, p99, "Queue p99" over
    # med, p99); stream 7's 0, 1, 2 stand under Q min, Q med, Q p99
    text = run(xpcorr, "report", "--by", "launch", job).splitlines()
    heads = [l for l in text if "Delay min" in l]
    assert any(l.strip().startswith("Stream") and "Q min Q med Q p99" in l for l in heads), heads
    assert any("Kernel" in l and "Q med Q p99" in l for l in heads), heads
    head = next(l for l in heads if l.strip().startswith("Stream"))
    row = next(l for l in text if l.split()[:1] == ["7"])
    ends = [head.index(c) + len(c) for c in ("Q min", "Q med", "Q p99")]
    assert [row[e - 1] for e in ends] == ["0", "1", "2"], (head, row)
    print("ok   --by overlap and --by launch as built")
    # csv: one table, its device rows equal to the json's
    rows = list(csv.reader(io.StringIO(run(xpcorr, "report", "--by", "idle", "--format", "csv", job))))
    assert len({len(r) for r in rows}) == 1, "csv rows of different lengths"
    dev_rows = [r for r in rows[1:] if r[0] == "device"]
    assert len(dev_rows) == 2 and int(dev_rows[0][10]) == devices[0]["idle_ns"], dev_rows
    for view in ("op", "launch", "overlap"):
        rows = list(csv.reader(io.StringIO(run(xpcorr, "report", "--by", view, "--format", "csv", job))))
        assert len({len(r) for r in rows}) == 1, f"{view}: csv rows of different lengths"
        wide = [line for line in run(xpcorr, "report", "--by", view, job).splitlines() if len(line) > 120]
        assert not wide, f"{view}: text wider than 120 columns: {wide[0]}"
    text = run(xpcorr, "report", "--by", "idle", job)
    wide = [line for line in text.splitlines() if len(line) > 120]
    assert not wide, f"text wider than 120 columns: {wide[0]}"
    assert "waiting for rank" in text and "data.py:? load_batch" in text, text
    # one naming everywhere (issue 39): host causes, launch and sync sites
    # alike, a Python frame "file.py:LINE qualname" (LINE ? where CPython's
    # perf map has none), a native function "function (module)"
    for d in report["devices"]:
        for c in d["causes"] + d["drained_by"]:
            for where in c["where"].split(" at "):
                where = where.split(" \u203a")[0].split(" \u2039")[0]
                ok = (re.fullmatch(r"\S+\.py:(\d+|\?) \S+", where) or
                      re.fullmatch(r"\S.* \([^ ()]+\)", where) or
                      re.fullmatch(r"rank \d+( \(.*\))?|\(.*\)|\S+\+0x[0-9a-f]+|", where))
                assert ok, (f"{c['cause']} at {c['where']!r}: not file.py:LINE qualname or"
                            " function (module)")
    print("ok   one naming: file.py:LINE qualname, function (module)")
    # the Chrome trace: rank 0's waits for rank 1 as slices on its GPU idle track
    trace = os.path.join(tmp, "trace.json")
    run(xpcorr, "export", "--format", "chrome", "-o", trace, job)
    waits = [e for e in json.load(open(trace))["traceEvents"]
             if e.get("cat") == "gpu_idle" and e["name"] == "waiting for rank 1"]
    assert len(waits) == STEPS, len(waits)
    close("trace: waiting for rank 1", round(sum(e["dur"] for e in waits) * 1000), truths[0]["rank_wait_ns"])
    # --queue-depth: stream 7 holds the gemm, the all-reduce and the copy at once
    run(xpcorr, "export", "--format", "chrome", "--queue-depth", "-o", trace, job)
    depth = [e["args"]["ops"] for e in json.load(open(trace))["traceEvents"]
             if e["ph"] == "C" and e["name"] == "queue depth stream 7"]
    assert len(depth) == 2 * 2 * 3 * STEPS and max(depth) == 3 and depth[-1] == 0, (len(depth), max(depth))
    print("ok   trace: idle slices and queue depth counters")
    # steps without NVTX ranges: from the Python loop of the launches' stacks
    # (main() of tests/pylines/sample.py comes back to line 447 each step,
    # where the gemm is launched), exact to the ns; launches all at one line
    # are no loop: the whole run
    lines = os.path.join(here, "pylines", "lines-3.12.txt")
    for mode in ("loop", "flat"):
        run(gen_run, "gaps", exe, lib, os.path.join(tmp, mode), "0", "1", str(STEPS),
            os.path.join(tmp, f"{mode}.json"), f"{mode}:{lines}")
    t = json.load(open(os.path.join(tmp, "loop.json")))
    d = json.loads(run(xpcorr, "report", "--by", "idle", "--format", "json", os.path.join(tmp, "loop")))["devices"][0]
    want = {"steps_from": "python_loop", "steps": STEPS, "loop_line": "sample.py:447 main",
            "start_ns": t["loop_first_start_ns"], "end_ns": t["loop_last_end_ns"]}
    assert {k: d.get(k) for k in want} == want, ({k: d.get(k) for k in want}, want)
    d = json.loads(run(xpcorr, "report", "--by", "idle", "--step", "3", "--format", "json",
                       os.path.join(tmp, "loop")))["devices"][0]
    start = t["loop_first_start_ns"] + 3 * t["step_ns"]
    assert (d["steps"], d["start_ns"], d["end_ns"]) == (1, start, start + t["step_ns"]), d
    text = run(xpcorr, "report", "--by", "idle", os.path.join(tmp, "loop"))
    assert f"{STEPS} steps of the Python loop at sample.py:447 main" in text, text
    d = json.loads(run(xpcorr, "report", "--by", "idle", "--format", "json", os.path.join(tmp, "flat")))["devices"][0]
    assert (d["steps_from"], d["steps"], "loop_line" in d) == ("run", 1, False), d
    print("ok   steps from the Python loop, exact; no loop: the whole run")
    # a step that is not there says so
    p = subprocess.run([xpcorr, "report", "--by", "idle", "--step", "999", job], capture_output=True,
                       text=True)
    assert p.returncode == 0 and "No step 999" in p.stdout + p.stderr, p.stdout + p.stderr
    print("ok   csv, text and --step 999")

sys.exit(1 if failed else 0)
