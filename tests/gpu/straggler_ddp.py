"""straggler_ddp.py - DDP under torchrun, rank 1 the straggler: its loader
takes SLOW_MS more per step. Each step: load (Python), forward, backward
(DDP's reducer all-reduces the gradients' buckets as they are ready and
waits for them at backward's end), an optimizer step. For
tests/gpu/gloo-job-device.sh (PROG=straggler_ddp.py).
  torchrun --nproc-per-node 2 tests/gpu/straggler_ddp.py --backend gloo --device 0
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

LOAD_MS, SLOW_MS = 4, 6


def load_batch(rank, step):
    t0 = time.perf_counter()
    acc = 0
    while (time.perf_counter() - t0) * 1000 < LOAD_MS + (SLOW_MS if rank == 1 else 0):
        for i in range(200):
            acc = (acc * 31 + i + step) % 1000003
    return acc


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--backend", default="nccl", choices=["nccl", "gloo"])
    p.add_argument("--device", type=int, default=-1, help="every rank on this GPU")
    args = p.parse_args()
    rank = int(os.environ["RANK"])
    dev = args.device if args.device >= 0 else int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(dev)
    dist.init_process_group(args.backend)
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Linear(1024, 1024) for _ in range(6)]).cuda()
    ddp = DDP(model, device_ids=[dev], bucket_cap_mb=8)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-4)
    x = torch.randn(256, 1024, device="cuda")
    for step in range(args.steps):
        load_batch(rank, step)
        loss = ddp(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    dist.destroy_process_group()
    print(f"rank {rank} done")


if __name__ == "__main__":
    main()
