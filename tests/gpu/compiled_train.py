"""compiled_train.py - a torch.compile'd model in training (issue 31 item
4): Inductor compiles the forward and the backward graph (AOTAutograd), the
backward runs as one CompiledFunctionBackward node of Triton kernels on
autograd's engine thread. What the join gives its kernels.
  python3 tests/gpu/compiled_train.py --steps 5
stdout holds only deterministic results (the losses, rounded)."""
import argparse

import torch


class Block(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.up = torch.nn.Linear(width, 4 * width)
        self.down = torch.nn.Linear(4 * width, width)
        self.norm = torch.nn.LayerNorm(width)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.up(x))
        return self.norm(x + self.down(h))


def train_step(model, opt, x, y):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--width", type=int, default=256)
    args = p.parse_args()
    torch.manual_seed(0)
    model = torch.nn.Sequential(Block(args.width), Block(args.width),
                                torch.nn.Linear(args.width, 10)).cuda()
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(64, args.width, device="cuda", generator=g)
    y = torch.randint(0, 10, (64,), device="cuda", generator=g)
    losses = [train_step(cmodel, opt, x, y) for _ in range(args.steps)]
    torch.cuda.synchronize()
    print("losses", [round(l.item(), 2) for l in losses])


if __name__ == "__main__":
    main()
