"""straggler_ddp.py - DDP under torchrun, rank 1 the straggler: its loader
takes SLOW_MS more per step. Each step: load (Python), forward, backward
(DDP's reducer all-reduces the gradients' buckets as they are ready and
waits for them at backward's end), an optimizer step. For
tests/gpu/gloo-job-device.sh (PROG=straggler_ddp.py).
  torchrun --nproc-per-node 2 tests/gpu/straggler_ddp.py --backend gloo --device 0
"""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from straggler_nccl import load_batch, start


def main():
    args, rank, dev = start()
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
