"""hf_train.py - a library's model in training: a small transformers GPT-2
built from a config (random weights, no download), AdamW, a few steps of
language-model loss. Its forward lines are transformers' own (modeling_gpt2.py);
its backward runs on autograd's engine threads.
  python3 tests/gpu/hf_train.py --steps 5
stdout holds only deterministic results (the losses, rounded)."""
import argparse

import torch
from transformers import GPT2Config, GPT2LMHeadModel


def train_step(model, opt, ids):
    loss = model(ids, labels=ids).loss
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=5)
    args = p.parse_args()
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=2, n_embd=128, n_head=4, vocab_size=1000, n_positions=128,
                     attn_implementation="eager")
    model = GPT2LMHeadModel(cfg).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    g = torch.Generator(device="cuda").manual_seed(1)
    ids = torch.randint(0, 1000, (4, 64), device="cuda", generator=g)
    losses = [train_step(model, opt, ids) for _ in range(args.steps)]
    torch.cuda.synchronize()
    print("losses", [round(l.item(), 2) for l in losses])


if __name__ == "__main__":
    main()
