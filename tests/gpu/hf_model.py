"""hf_model.py - a library's model, not written here: a small transformers
GPT-2 built from a config (random weights, no download) generating text
greedily on the GPU, plus a LLaMA-style forward. Used on the GPU machine to
check that launch stacks carry the Python lines of transformers' own code.
  python3 tests/gpu/hf_model.py --tokens 16
stdout holds only deterministic results (the generated token ids)."""
import argparse
import sys

import torch
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM


def build(kind):
    torch.manual_seed(0)
    if kind == "gpt2":
        cfg = GPT2Config(n_layer=2, n_embd=128, n_head=4, vocab_size=1000, n_positions=128)
        return GPT2LMHeadModel(cfg)
    cfg = LlamaConfig(num_hidden_layers=2, hidden_size=128, intermediate_size=256,
                      num_attention_heads=4, num_key_value_heads=2, vocab_size=1000,
                      max_position_embeddings=128)
    return LlamaForCausalLM(cfg)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tokens", type=int, default=16)
    p.add_argument("--profile", metavar="TRACE_JSON",
                   help="run under torch.profiler (CPU+CUDA); its GPU event count to stderr")
    args = p.parse_args()
    if args.profile:
        from torch.profiler import profile, ProfilerActivity
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            run(args)
        prof.export_chrome_trace(args.profile)
        kernels = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
        print(f"profiler_cuda_events={kernels}", file=sys.stderr)
    else:
        run(args)


def run(args):
    ids = torch.arange(8, device="cuda").unsqueeze(0)
    with torch.no_grad():
        gpt2 = build("gpt2").cuda().eval()
        out = gpt2.generate(ids, max_new_tokens=args.tokens, do_sample=False, pad_token_id=0)
        print("gpt2", out[0].tolist())
        llama = build("llama").cuda().eval()
        logits = llama(ids).logits
        print("llama argmax", logits.argmax(-1)[0].tolist())
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
