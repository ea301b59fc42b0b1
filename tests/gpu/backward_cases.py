"""backward_cases.py - the training patterns of issue 31 item 2 whose
backward kernels must land on the right forward line or an honest unknown,
one function each, a few steps of each:
  accumulate  gradient accumulation: two micro-batches' backward() per step
  checkpoint  activation checkpointing (torch.utils.checkpoint, not
              reentrant): the block's forward runs again inside backward
  grad        torch.autograd.grad instead of backward()
  two_losses  two backward() calls a step, each on its own loss
  python3 tests/gpu/backward_cases.py --steps 3
stdout holds only deterministic results (the losses, rounded)."""
import argparse

import torch
from torch.utils.checkpoint import checkpoint


def make(width):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(width, 2 * width), torch.nn.GELU(),
                               torch.nn.Linear(2 * width, width)).cuda()


def accumulate(model, opt, xs):
    opt.zero_grad(set_to_none=True)
    for x in xs:
        loss = model(x).square().mean()
        loss.backward()
    opt.step()
    return loss


def checkpointed(model, opt, xs):
    opt.zero_grad(set_to_none=True)
    h = checkpoint(model, xs[0], use_reentrant=False)
    loss = h.square().mean()
    loss.backward()
    opt.step()
    return loss


def autograd_grad(model, opt, xs):
    params = list(model.parameters())
    loss = model(xs[0]).abs().mean()
    grads = torch.autograd.grad(loss, params)
    for p, g in zip(params, grads):
        p.grad = g
    opt.step()
    return loss


def two_losses(model, opt, xs):
    opt.zero_grad(set_to_none=True)
    first = model(xs[0]).tanh().mean()
    first.backward()
    second = model(xs[1]).sigmoid().mean()
    second.backward()
    opt.step()
    return first + second


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--width", type=int, default=256)
    args = p.parse_args()
    g = torch.Generator(device="cuda").manual_seed(1)
    xs = [torch.randn(64, args.width, device="cuda", generator=g) for _ in range(2)]
    out = []
    for case in (accumulate, checkpointed, autograd_grad, two_losses):
        model = make(args.width)
        opt = torch.optim.SGD(model.parameters(), lr=1e-2, foreach=True)
        out += [case(model, opt, xs) for _ in range(args.steps)]
    torch.cuda.synchronize()
    print("losses", [round(l.item(), 3) for l in out])


if __name__ == "__main__":
    main()
