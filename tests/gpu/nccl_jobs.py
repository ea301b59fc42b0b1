"""nccl_jobs.py - two small NCCL programs for the 2-GPU machine, one process
per GPU under torchrun: a DDP training loop (its gradients all-reduced by
DDP's reducer in buckets, from autograd's thread) and a tensor-parallel
forward (two all-reduces per layer, from the program's own lines) whose
result each rank then copies to the other GPU (a peer-to-peer copy).
  torchrun --nproc-per-node 2 tests/gpu/nccl_jobs.py ddp
  torchrun --nproc-per-node 2 tests/gpu/nccl_jobs.py tp --count DIR
--count: torch.profiler over the whole program (process group set-up to
tear-down, as xpcap sees it) writes DIR/count-RANK.json: its GPU events per
name (kernels by name, copies and memsets by kind).
"""
import collections
import json
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
    other = x.to("cuda:%d" % (1 - torch.cuda.current_device()))   # peer to peer
    torch.cuda.synchronize()
    return float(other.sum())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("job", choices=["ddp", "tp"])
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--count", metavar="DIR", help="write torch.profiler's GPU event count per rank")
    args = p.parse_args()
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    prof = None
    if args.count:
        from torch.profiler import profile, ProfilerActivity
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        prof.__enter__()
    dist.init_process_group("nccl")
    result = ddp_steps(args.steps) if args.job == "ddp" else tp_forward(args.steps)
    dist.barrier()
    dist.destroy_process_group()
    if prof:
        prof.__exit__(None, None, None)
        write_count(prof, os.path.join(args.count, "count-%d.json" % rank))
    print("rank %d %s %.3f" % (rank, args.job, result))


def write_count(prof, path):
    """GPU events per name: kernels by name; copies ("Memcpy PtoP (...)")
    and memsets by kind, as the profiler names them."""
    names = collections.Counter(e.name for e in prof.events()
                                if e.device_type == torch.autograd.DeviceType.CUDA)
    with open(path, "w") as f:
        json.dump({"total": sum(names.values()), "names": names}, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
