"""nccl_jobs.py - two small NCCL programs for the 2-GPU machine, one process
per GPU under torchrun: a DDP training loop (its gradients all-reduced by
DDP's reducer in buckets, from autograd's thread) and a tensor-parallel
forward (two all-reduces per layer, from the program's own lines).
  torchrun --nproc-per-node 2 tests/gpu/nccl_jobs.py ddp
  torchrun --nproc-per-node 2 tests/gpu/nccl_jobs.py tp --count DIR   # torch.profiler's count per rank
"""
import argparse
import os

import torch
import torch.distributed as dist


def ddp_steps(steps):
    model = torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.GELU(),
                                torch.nn.Linear(2048, 512)).cuda()
    ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=1)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    x = torch.randn(32, 512, device="cuda")
    for _ in range(steps):
        loss = ddp(x).pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    return float(loss)


def tp_layer(x, w1, w2):
    h = torch.nn.functional.gelu(x @ w1)
    dist.all_reduce(h)                  # the first all-reduce of the layer
    y = h @ w2
    dist.all_reduce(y)                  # the second
    return y


def tp_forward(layers):
    torch.manual_seed(0)
    ws = [(torch.randn(512, 512, device="cuda") * 0.02, torch.randn(512, 512, device="cuda") * 0.02)
          for _ in range(layers)]
    x = torch.randn(16, 512, device="cuda")
    for w1, w2 in ws:
        x = tp_layer(x, w1, w2)
    torch.cuda.synchronize()
    return float(x.sum())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("job", choices=["ddp", "tp"])
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--count", metavar="DIR", help="write torch.profiler's GPU event count per rank")
    args = p.parse_args()
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl")
    run = (lambda: ddp_steps(args.steps)) if args.job == "ddp" else (lambda: tp_forward(args.steps))
    if args.count:
        from torch.profiler import profile, ProfilerActivity
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            result = run()
        n = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
        with open(os.path.join(args.count, "count-%d.txt" % rank), "w") as f:
            f.write("%d\n" % n)
    else:
        result = run()
    dist.barrier()
    dist.destroy_process_group()
    print("rank %d %s %.3f" % (rank, args.job, result))


if __name__ == "__main__":
    main()
