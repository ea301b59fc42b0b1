"""straggler_nccl.py - two ranks on two GPUs (NCCL) under torchrun, rank 1 the
straggler: its loader takes SLOW_MS more per step. Each step: load (Python),
a matmul chain, an all-reduce of the gradients-to-be on a side stream while
a second matmul chain runs (overlap), then loss.item(). For
tests/gpu/straggler-device.sh.
  torchrun --nproc-per-node 2 tests/gpu/straggler_nccl.py --steps 30
  (--backend gloo --device 0: both ranks on one GPU, gloo's host all-reduce)
"""
import argparse
import os
import time

import torch
import torch.distributed as dist

LOAD_MS, SLOW_MS = 4, 6


def load_batch(rank, step):
    t0 = time.perf_counter()
    acc = 0
    while (time.perf_counter() - t0) * 1000 < LOAD_MS + (SLOW_MS if rank == 1 else 0):
        for i in range(200):
            acc = (acc * 31 + i + step) % 1000003
    return acc


def start():
    """The options, this rank and its GPU, the process group begun."""
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--backend", default="nccl", choices=["nccl", "gloo"])
    p.add_argument("--device", type=int, default=-1, help="every rank on this GPU")
    args = p.parse_args()
    rank = int(os.environ["RANK"])
    dev = args.device if args.device >= 0 else int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(dev)
    dist.init_process_group(args.backend)
    return args, rank, dev


def main():
    args, rank, dev = start()
    a = torch.randn(2048, 2048, device="cuda")
    grads = torch.randn(16 << 20, device="cuda")
    side = torch.cuda.Stream()
    for step in range(args.steps):
        torch.cuda.nvtx.range_push(f"ProfilerStep#{step}")
        load_batch(rank, step)
        b = a
        for _ in range(4):
            b = b @ a
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            dist.all_reduce(grads)
        for _ in range(4):
            b = b @ a
        torch.cuda.current_stream().wait_stream(side)
        loss = b.sum().item()
        torch.cuda.nvtx.range_pop()
    dist.destroy_process_group()
    print(f"rank {rank} done {loss:.1f}")


if __name__ == "__main__":
    main()
