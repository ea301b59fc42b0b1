"""torch-loop.py - small PyTorch loops for the injection library's device test.

  python3 torch-loop.py profiler   # 50 small ops under torch.profiler
  python3 torch-loop.py profiler-first  # profiler started before CUDA is
  python3 torch-loop.py bench [STEPS]  # us per step of 100 tiny kernels

stdout is deterministic in `profiler` mode (compared with and without the
library); what torch.profiler saw goes to stderr.
"""
import sys
import time

import torch


def profiler_mode(first=False):
    from torch.profiler import ProfilerActivity, profile
    x = None if first else torch.ones(64, device="cuda")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        if x is None:
            x = torch.ones(64, device="cuda")
        for _ in range(50):
            x = x * 1.0001 + 0.5
        torch.cuda.synchronize()
    try:
        n = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
    except Exception as e:  # noqa: BLE001 - report, never fail the program
        n = f"unknown ({e})"
    print(f"torch-loop: torch.profiler recorded {n} CUDA events", file=sys.stderr)
    print(f"result {x.sum().item():.4f}")


def bench_mode(steps):
    x = torch.ones(16, device="cuda")
    ops = 100
    for _ in range(30):
        for _ in range(ops):
            x.add_(1.0)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        for _ in range(ops):
            x.add_(1.0)
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    print(f"torch bench steps={steps} ops_per_step={ops} us_per_step={dt / steps * 1e6:.1f} "
          f"us_per_op={dt / steps / ops * 1e6:.2f}")


if __name__ == "__main__":
    if sys.argv[1] == "profiler":
        profiler_mode()
    elif sys.argv[1] == "profiler-first":
        profiler_mode(first=True)
    else:
        bench_mode(int(sys.argv[2]) if len(sys.argv) > 2 else 300)
