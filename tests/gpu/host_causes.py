"""host_causes.py - a training loop whose GPU idles for three host causes that
the program times itself (tests/gpu/host-causes-device.sh, issue 39):
  - augment(): pure-Python work on each batch, ~AUGMENT_MS a step
  - save_checkpoint(): a time.sleep of SLEEP_MS every SLEEP_EVERY-th step
  - torch.cuda.synchronize() at the end of each step (the queue drains)
The GPU work of a step is short against them, so after each step's sync the
GPU is idle while the host augments (and sleeps, every 8th step). Each
cause's time is measured with time.perf_counter() around it and written to
TRUTH_JSON (totals over the steps after --warmup), with the function's
name and its file; steps are NVTX ranges ProfilerStep#N.
  python3 tests/gpu/host_causes.py --steps 40 --truth truth.json
"""
import argparse
import json
import os
import sys
import time

import torch

AUGMENT_MS = 6
SLEEP_MS = 25
SLEEP_EVERY = 8


def augment(step, x):
    """Pure Python on the CPU: the GPU has nothing meanwhile."""
    t0 = time.perf_counter()
    acc = 0
    while (time.perf_counter() - t0) * 1000 < AUGMENT_MS:
        for i in range(200):
            acc = (acc * 31 + i + step) % 1000003
    return x * (1.0 + acc * 1e-9)


def save_checkpoint(step):
    """A blocking wait: the thread is off CPU, so no CPU sample lands."""
    time.sleep(SLEEP_MS / 1000)


def run(args, truth):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(args.width, 4 * args.width), torch.nn.GELU(),
                                torch.nn.Linear(4 * args.width, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    x = torch.randn(args.batch, args.width, device="cuda")
    y = torch.randint(0, 10, (args.batch,), device="cuda")
    for step in range(args.steps):
        torch.cuda.nvtx.range_push(f"ProfilerStep#{step}")
        steady = step >= args.warmup
        t0 = time.perf_counter()
        xa = augment(step, x)
        t1 = time.perf_counter()
        if step % SLEEP_EVERY == SLEEP_EVERY - 1:
            save_checkpoint(step)
        t2 = time.perf_counter()
        loss = torch.nn.functional.cross_entropy(model(xa), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        t3 = time.perf_counter()
        torch.cuda.synchronize()        # xp:sync-line
        t4 = time.perf_counter()
        torch.cuda.nvtx.range_pop()
        if steady:
            truth["augment"]["ms"] += (t1 - t0) * 1000
            truth["save_checkpoint"]["ms"] += (t2 - t1) * 1000
            truth["synchronize"]["ms"] += (t4 - t3) * 1000
            truth["steps"] += 1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--warmup", type=int, default=8, help="steps left out of the truth")
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--truth", metavar="TRUTH_JSON")
    args = p.parse_args()
    me = os.path.basename(__file__)
    truth = {"file": me, "steps": 0, "warmup": args.warmup,
             "augment": {"ms": 0.0, "function": "augment"},
             "save_checkpoint": {"ms": 0.0, "function": "save_checkpoint"},
             "synchronize": {"ms": 0.0, "line": next(n for n, line in enumerate(open(__file__), 1)
                                                     if "xp:" + "sync-line" in line)}}
    run(args, truth)
    if args.truth:
        json.dump(truth, open(args.truth, "w"), indent=1)
    print("steps %d" % args.steps)


if __name__ == "__main__":
    sys.exit(main())
