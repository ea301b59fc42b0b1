"""ddp_nccl.py - a data-parallel training step over NCCL, one process per GPU
under torchrun, as multi-GPU training runs it: a small transformer block
(attention, MLP, LayerNorms) and a head, DistributedDataParallel with small
buckets (--bucket-mb, several all-reduces a step), AdamW. DDP's reducer
all-reduces each bucket from an AccumulateGrad hook on autograd's thread,
on NCCL's stream, during backward().
  torchrun --nproc-per-node 2 tests/gpu/ddp_nccl.py --steps 5
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(width)
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.proj = torch.nn.Linear(width, width)
        self.ln2 = torch.nn.LayerNorm(width)
        self.up = torch.nn.Linear(width, 4 * width)
        self.down = torch.nn.Linear(4 * width, width)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, c))
        x = x + self.down(F.gelu(self.up(self.ln2(x))))
        return x


class Net(torch.nn.Module):
    def __init__(self, width, heads, classes):
        super().__init__()
        self.block = Block(width, heads)
        self.head = torch.nn.Linear(width, classes)

    def forward(self, x):
        return self.head(self.block(x)).mean(dim=1)


def train_step(ddp, opt, x, y):
    loss = F.cross_entropy(ddp(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()              # DDP's reducer all-reduces the buckets here
    opt.step()
    return loss


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--bucket-mb", type=float, default=2.0)
    args = p.parse_args()
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl")
    torch.manual_seed(0)
    model = Net(args.width, 8, 10).cuda()
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank],
                                                    bucket_cap_mb=args.bucket_mb)
    opt = torch.optim.AdamW(ddp.parameters(), lr=1e-3, foreach=True)
    g = torch.Generator(device="cuda").manual_seed(1 + dist.get_rank())
    x = torch.randn(8, 64, args.width, device="cuda", generator=g)
    y = torch.randint(0, 10, (8,), device="cuda", generator=g)
    losses = [train_step(ddp, opt, x, y) for _ in range(args.steps)]
    torch.cuda.synchronize()
    print("rank %d of %d: loss %.4f -> %.4f" % (dist.get_rank(), dist.get_world_size(),
                                                losses[0].item(), losses[-1].item()), flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
