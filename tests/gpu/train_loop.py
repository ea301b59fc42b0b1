"""train_loop.py - a small training loop for the GPU machine: forward in
Python, backward on PyTorch's autograd engine threads (no Python there),
an optimizer step. What its launches look like when half of them come from
a thread with no Python frame.
  python3 tests/gpu/train_loop.py --steps 20
  python3 tests/gpu/train_loop.py --profile prof.json   # torch.profiler's GPU event count
"""
import argparse
import sys

import torch


def make_model(width):
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(width, 4 * width), torch.nn.GELU(),
        torch.nn.Linear(4 * width, width), torch.nn.LayerNorm(width),
        torch.nn.Linear(width, 10)).cuda()


def train_step(model, opt, x, y):
    out = model(x)
    loss = torch.nn.functional.cross_entropy(out, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


def run(args):
    model = make_model(args.width)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(args.batch, args.width, device="cuda", generator=g)
    y = torch.randint(0, 10, (args.batch,), device="cuda", generator=g)
    losses = [train_step(model, opt, x, y) for _ in range(args.steps)]
    torch.cuda.synchronize()
    return [round(l.item(), 3) for l in losses]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--profile", metavar="TRACE_JSON", help="run under torch.profiler (CPU+CUDA)")
    args = p.parse_args()
    if args.profile:
        from torch.profiler import profile, ProfilerActivity
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            losses = run(args)
        cuda = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        print(f"profiler_cuda_events={len(cuda)}", file=sys.stderr)
        import collections, json
        with open(args.profile + ".names.json", "w") as f:   # what it counted, by name
            json.dump(collections.Counter(cuda).most_common(), f, indent=0)
    else:
        losses = run(args)
    print("first loss", losses[0], "last loss", losses[-1])


if __name__ == "__main__":
    main()
