#!/usr/bin/env python3
"""idle-waits.py - `xpcorr report --by idle` names every idle gap, on a
synthetic rank (tests/synthgaps.c, "waits" mode) whose thread sleeps 1 ms in
py::save_checkpoint every 4th step (an off-CPU interval, as xpcap records
waits) and whose gaps from step 4k's synchronize to step 4k+1's launch hold
no sample at all:
  - the sleep is "host waiting" at where it blocked, within 1% of its time:
    "xp_idle (EXE) at ckpt.py:? save_checkpoint", and no logging time is
    charged in its stead; a wait without a stack (a normal user's) is named
    by the thread's last sample, a preemption said;
  - the unsampled gaps' time is estimated from the samples of the gaps of
    the same kind (between the same launch sites), each function in
    proportion, within 0.5%, marked as estimated (rows and footer);
  - nothing is left "host not seen", and no label says "no sample";
  - --skip-steps N leaves the first N steps out.

    idle-waits.py XPCORR GEN_RUN FIXTURE_EXE FIXTURE_LIB
"""
import json
import os
import subprocess
import sys
import tempfile

xpcorr, gen_run, exe, lib = sys.argv[1:5]
STEPS = 16
failed = []


def run(*args):
    p = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, COLUMNS=""))
    if p.returncode:
        sys.exit(f"FAIL {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def close(name, got, want, tol=0.01):
    ok = abs(got - want) <= tol * want if want else got == 0
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {got} ns, truth {want} ns")
    if not ok:
        failed.append(name)


def check(name, cond, what=""):
    print(f"{'ok  ' if cond else 'FAIL'} {name} {what}")
    if not cond:
        failed.append(name)


with tempfile.TemporaryDirectory() as tmp:
    run_dir, truth_path = os.path.join(tmp, "r"), os.path.join(tmp, "t.json")
    run(gen_run, "gaps", exe, lib, run_dir, "0", "1", str(STEPS), truth_path, "waits")
    t = json.load(open(truth_path))
    d = json.loads(run(xpcorr, "report", "--by", "idle", "--format", "json", run_dir))["devices"][0]
    causes = d["causes"]

    def ns(kind, where=""):
        return sum(c["ns"] for c in causes if c["cause"] == kind and where in c["where"])

    want = f"xp_idle ({os.path.basename(exe)}) at ckpt.py:? save_checkpoint"
    waits = {c["where"]: c["ns"] for c in causes if c["cause"] == "wait"}
    check("three wait rows", len(waits) == 3, str(waits))
    close("host waiting, where it blocked: " + want, waits.get(want, 0), t["wait_ns"])
    # without a stack (a normal user's): the thread's last sample before it
    close("host waiting, no stack: last seen at train.py:? log_metrics",
          waits.get("last seen at train.py:? log_metrics", 0), t["wait_stackless_ns"])
    close("host waiting, preempted", waits.get("preempted, last seen at train.py:? log_metrics", 0),
          t["preempted_ns"])
    close("host running log_metrics (the sleep not in it)", ns("host", "log_metrics"),
          t["sampled"]["log_metrics"])
    # the unseen time shared as the gaps of the same kind's samples
    est = ns("host_estimated") + ns("host_native_estimated")
    close("estimated, all", est, t["unseen_ns"])
    # the kind: from a step's copy to the next step's gemm (step 0's loading
    # is a gap of its own kind, with no work before it; the last step's
    # logging another, with no work after it)
    kind = dict(t["sampled"])
    kind["log_metrics"] -= t["last_log_ns"]
    load, native = t["first_load_ns"], t["native_ns_per_step"]
    tok = t["tokenize_ns_per_step"]
    kind["load_batch"] -= load - tok - native
    kind["tokenize"] -= tok
    kind["native"] -= native
    sampled = sum(kind.values())
    for fn in ("load_batch", "tokenize", "log_metrics"):
        close(f"estimated {fn}", ns("host_estimated", fn), t["unseen_ns"] * kind[fn] / sampled,
              0.005)
    close("estimated in libraries", ns("host_native_estimated"),
          t["unseen_ns"] * kind["native"] / sampled, 0.005)
    check("nothing left unseen", ns("host_unsampled") == 0, str(ns("host_unsampled")))
    check("estimated share in json", abs(d["estimated_ns"] - est) <= 1, str(d.get("estimated_ns")))
    # text: plain words, estimated rows and the footer
    text = run(xpcorr, "report", "--by", "idle", "--top", "0", run_dir)
    check("text: no 'no sample'", "no sample" not in text)
    check("text: estimated rows", "est. host running" in text)
    check("text: host waiting row", "host waiting" in text and want in text)
    share = 100.0 * est / (d["idle_ns"] + d["rank_wait_ns"])
    check("text: the estimated share said", f"Estimated: {share:.1f}% of idle time" in text,
          [l for l in text.splitlines() if "stimated:" in l])
    # steady state only: the first 2 steps left out
    s = json.loads(run(xpcorr, "report", "--by", "idle", "--skip-steps", "2", "--format", "json",
                       run_dir))["devices"][0]
    check("--skip-steps 2", s["steps"] == STEPS - 2, str(s["steps"]))
    close("--skip-steps 2 window", s["window_ns"], (STEPS - 2) * t["step_ns"])
print("FAIL: " + ", ".join(failed) if failed else "all ok")
sys.exit(1 if failed else 0)
