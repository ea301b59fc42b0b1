"""straggler_gloo.py - a CPU-only job over gloo: every step each rank runs
its loader (Python, rank 1's 6 ms longer) and all-reduces 16 MB with the
others; rank 0 waits for rank 1 in every all-reduce. Started by
tests/cpu/record-gloo-fixture.sh (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
in the environment, as torchrun sets them).
"""
import os
import time

import torch
import torch.distributed as dist


def load_batch(rank):
    # the loader's Python work: 6 ms, rank 1's 12 ms
    until = time.perf_counter() + (0.012 if rank == 1 else 0.006)
    n = 0
    while time.perf_counter() < until:
        n += 1
    return n


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    grads = torch.ones(int(os.environ.get("NUMEL", 1 << 22)))
    for _ in range(int(os.environ.get("STEPS", 30))):
        load_batch(rank)
        dist.all_reduce(grads)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
