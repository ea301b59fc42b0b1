"""idle_train.py - a training loop whose GPU idles for two known reasons, for
`xpcorr report --by idle` on the GPU machine (tests/gpu/idle-device.sh): a
deliberately slow data loader (pure Python, ~LOADER_MS per batch, in
load_batch) and a loss.item() per step (its line marked so), which waits for
the GPU to drain. Steps are NVTX ranges ProfilerStep#N.
  python3 tests/gpu/idle_train.py --steps 30
  python3 tests/gpu/idle_train.py --profile ops.json   # torch.profiler key_averages per op
"""
import argparse
import json
import sys
import time

import torch

LOADER_MS = 8


def load_batch(step, batch, width):
    """The slow loader: Python work on the CPU while the GPU has nothing."""
    t0 = time.perf_counter()
    acc = 0
    while (time.perf_counter() - t0) * 1000 < LOADER_MS:
        for i in range(200):
            acc = (acc * 31 + i + step) % 1000003
    g = torch.Generator().manual_seed(step)
    return torch.randn(batch, width, generator=g), torch.randint(0, 10, (batch,), generator=g)


def run(args):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(args.width, 4 * args.width), torch.nn.GELU(),
                                torch.nn.Linear(4 * args.width, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    losses = []
    for step in range(args.steps):
        torch.cuda.nvtx.range_push(f"ProfilerStep#{step}")
        x, y = load_batch(step, args.batch, args.width)
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())      # xp:item-line (check-idle.py): waits for the GPU
        torch.cuda.nvtx.range_pop()
    return losses


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--profile", metavar="OPS_JSON", help="torch.profiler: self GPU time per op")
    args = p.parse_args()
    if args.profile:
        from torch.profiler import profile, ProfilerActivity
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            losses = run(args)
        ops = {}
        for e in prof.key_averages():
            us = getattr(e, "self_device_time_total", None)
            if us is None:
                us = getattr(e, "self_cuda_time_total", 0)
            if us:
                ops[e.key] = {"self_gpu_us": us, "count": e.count}
        json.dump(ops, open(args.profile, "w"), indent=1)
    else:
        losses = run(args)
    print("first loss %.3f last loss %.3f" % (losses[0], losses[-1]))


if __name__ == "__main__":
    sys.exit(main())
