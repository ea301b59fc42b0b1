"""ddp_gloo.py - a data-parallel training job on gloo, every rank on GPU 0
(one GPU is enough for the collectives to be real: gloo all-reduces the
gradients on the CPU and copies them back). Run by torchrun, or one rank by
hand with RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT set (two "hosts").
  torchrun --nproc-per-node 2 tests/gpu/ddp_gloo.py --steps 30
"""
import argparse
import os

import torch
import torch.distributed as dist


def train(steps, width):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(width, 4 * width), torch.nn.GELU(),
                                torch.nn.Linear(4 * width, width)).cuda()
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    x = torch.randn(64, width, device="cuda")
    for _ in range(steps):
        loss = ddp(x).square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()              # gradients all-reduced by gloo here
        opt.step()
    torch.cuda.synchronize()
    return loss.item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--width", type=int, default=512)
    args = p.parse_args()
    dist.init_process_group("gloo")
    loss = train(args.steps, args.width)
    print("rank %d of %d: loss %.4f" % (dist.get_rank(), dist.get_world_size(), loss))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
