"""ddp_gloo.py - a data-parallel training job on gloo, every rank on GPU 0
(one GPU is enough for the collectives to be real: gloo all-reduces the
gradients on the CPU and copies them back). Run by torchrun, or one rank by
hand with RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT set (two "hosts"); with
--store-client the rendezvous store is another process's (as torchrun's
agent holds it: no rank owns it, so none has to outlive the others), started by
--store-server.
  torchrun --nproc-per-node 2 tests/gpu/ddp_gloo.py --steps 30
  python3 tests/gpu/ddp_gloo.py --store-server &     # then, per "host":
  RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29533 python3 tests/gpu/ddp_gloo.py --store-client
"""
import argparse
import datetime
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
    p.add_argument("--store-server", action="store_true", help="hold the rendezvous store, then exit")
    p.add_argument("--store-client", action="store_true", help="use the store --store-server holds")
    args = p.parse_args()
    port = int(os.environ.get("MASTER_PORT", "29533"))
    world = int(os.environ.get("WORLD_SIZE", "2"))
    if args.store_server:
        store = dist.TCPStore("127.0.0.1", port, world + 1, True, timeout=datetime.timedelta(seconds=120))
        store.wait(["done-%d" % r for r in range(world)])
        return
    if args.store_client:
        store = dist.TCPStore(os.environ.get("MASTER_ADDR", "127.0.0.1"), port, world + 1, False,
                              timeout=datetime.timedelta(seconds=120))
        dist.init_process_group("gloo", store=store, rank=int(os.environ["RANK"]), world_size=world)
    else:
        dist.init_process_group("gloo")
    loss = train(args.steps, args.width)
    rank = dist.get_rank()
    print("rank %d of %d: loss %.4f" % (rank, dist.get_world_size(), loss), flush=True)
    dist.destroy_process_group()
    if args.store_client:
        store.set("done-%d" % rank, "1")


if __name__ == "__main__":
    main()
