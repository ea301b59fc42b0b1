"""window_prog.py - a PyTorch loop with marked phases, for xpcap record
--capture-range (tests/gpu/window-device.sh).

Phases: out, in, out, in, out. An "in" phase launches cos and mul kernels,
an "out" phase sin and add kernels, so a kernel recorded on the wrong side
shows by its name. Each "in" phase is marked as --mark asks:
  python3 window_prog.py --mark profiler   # torch.cuda.profiler.start()/stop()
  python3 window_prog.py --mark nvtx       # NVTX range "window", "layer" ranges nested
  python3 window_prog.py --mark none       # nothing: every phase is outside
  python3 window_prog.py --truth           # torch.profiler over each "in" phase instead
--truth prints one JSON line: the CUDA kernels torch.profiler saw in each
"in" phase (the ground truth); otherwise the program prints its result only.
No synchronization before a phase ends: kernels still run when it closes.
"""
import argparse
import json

import torch

STEPS = 4          # steps per phase
OPS = 20           # kernel pairs per step


def out_step(x):
    for _ in range(OPS):
        x = torch.sin(x)
        x = x + 0.5
    return x


def in_step(x):
    for _ in range(OPS):
        x = torch.cos(x)
        x = x * 1.5
    return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mark", choices=["profiler", "nvtx", "none"], default="none")
    ap.add_argument("--truth", action="store_true")
    a = ap.parse_args()
    x = torch.ones(1 << 16, device="cuda")
    for f in (out_step, in_step):       # warm-up: first launches, lazy loading
        x = f(x)
    torch.cuda.synchronize()
    truth = []
    for phase in ("out", "in", "out", "in", "out"):
        if phase == "out":
            torch.cuda.nvtx.range_push("other")
            for _ in range(STEPS):
                x = out_step(x)
            torch.cuda.nvtx.range_pop()
            continue
        prof = None
        if a.truth:
            prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA])
            prof.__enter__()
        elif a.mark == "profiler":
            torch.cuda.profiler.start()
        elif a.mark == "nvtx":
            torch.cuda.nvtx.range_push("window")
        for _ in range(STEPS):
            if a.mark == "nvtx":
                torch.cuda.nvtx.range_push("layer")
            x = in_step(x)
            if a.mark == "nvtx":
                torch.cuda.nvtx.range_pop()
        if prof:
            prof.__exit__(None, None, None)
            names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
            truth.append({"kernels": len(names), "sin": sum("sin" in n for n in names),
                          "cos": sum("cos" in n for n in names)})
        elif a.mark == "profiler":
            torch.cuda.profiler.stop()
        elif a.mark == "nvtx":
            torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    if a.truth:
        print(json.dumps({"truth": truth}))
    print("result=%.6f" % float(x.sum()))


if __name__ == "__main__":
    main()
