"""torch_loop.py - a small PyTorch loop with known Python launch sites.

Used on the GPU machine to check that launch stacks reach Python functions,
to compare kernel counts with torch.profiler, and to measure overhead.
  python3 tests/gpu/torch_loop.py --steps 50                # launch-heavy (many tiny kernels)
  python3 tests/gpu/torch_loop.py --mode compute --steps 20  # large matmuls
  python3 tests/gpu/torch_loop.py --profile prof.json        # torch.profiler active inside
  python3 tests/gpu/torch_loop.py --size 1024                # the same loop on bigger tensors
  python3 tests/gpu/torch_loop.py --block 20                 # time 20 steps per sync (CPU cost)
  python3 tests/gpu/torch_loop.py --block-times              # also each block's times on stderr
stdout holds only deterministic results (identical with and without a
profiler); timings go to stderr as `step_us=<median>` (wall time per step),
with --block-times also one `block wall_us=W cuda_us=C` line per block (per
step: wall clock, and CUDA events recorded around the block's steps).
bench/gpu-overhead runs run() through bench/overhead-torch.py.
"""
import argparse
import statistics
import sys
import time

import torch


def tiny_elementwise(x):
    # 100 small kernels per call: the worst case for per-launch cost
    for _ in range(50):
        x = x * 1.0001
        x = x + 0.0001
    return x


def small_mlp(x, w1, w2):
    return torch.relu(x @ w1) @ w2


def big_matmul(a, b):
    return a @ b


def step_launch_heavy(state):
    x = tiny_elementwise(state["x"])
    y = small_mlp(x, state["w1"], state["w2"])
    state["x"] = x
    return y.sum()


def step_compute(state):
    c = big_matmul(state["a"], state["b"])
    return c.float().mean()


def make_state(mode, size):
    g = torch.Generator(device="cuda").manual_seed(1234)
    if mode == "compute":
        n = 8192
        return {"a": torch.randn(n, n, device="cuda", dtype=torch.bfloat16, generator=g),
                "b": torch.randn(n, n, device="cuda", dtype=torch.bfloat16, generator=g)}
    return {"x": torch.randn(size, size, device="cuda", generator=g),
            "w1": torch.randn(size, size, device="cuda", generator=g) * 0.1,
            "w2": torch.randn(size, size, device="cuda", generator=g) * 0.1}


def run(args):
    """Times blocks of args.block steps, each ended by one synchronize: with
    block 1 a step includes waiting for the GPU; with larger blocks the CPU
    launches ahead and a step's time is the CPU's cost to launch it (the GPU
    runs tiny kernels faster than Python launches them), free of the GPU's
    idle-to-busy latency that made per-step figures noisy. Returns the wall
    and CUDA-event times per step of each block (us), and the results: the
    two events add two cudaEventRecord calls per block, in every run alike.
    A benchmark's args.around_block (before, after) runs outside the timing
    around each block; the third list returned holds what they returned."""
    state = make_state(args.mode, args.size)
    step = step_compute if args.mode == "compute" else step_launch_heavy
    for _ in range(args.warmup):
        step(state)
    torch.cuda.synchronize()
    if getattr(args, "after_warmup", None):     # a benchmark's own step (bench/overhead-torch.py)
        args.after_warmup()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    before, after = getattr(args, "around_block", None) or (lambda: None, lambda: None)
    times, cuda_times, around, results = [], [], [], []
    for _ in range(0, args.steps, args.block):
        n = min(args.block, args.steps - len(results))
        ahead = before()
        t0 = time.perf_counter()
        e0.record()
        out = [step(state) for _ in range(n)]
        e1.record()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e6 / n)
        around.append((ahead, after()))
        cuda_times.append(e0.elapsed_time(e1) * 1e3 / n)
        results.extend(r.item() for r in out)
    return times, cuda_times, around, results


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["launch", "compute"], default="launch")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--block", type=int, default=1, help="steps timed together, one sync each")
    p.add_argument("--size", type=int, default=64, help="launch mode: tensors are SIZE x SIZE")
    p.add_argument("--profile", metavar="TRACE_JSON", help="run under torch.profiler (CPU+CUDA)")
    p.add_argument("--block-times", action="store_true", help="each block's times on stderr")
    args = p.parse_args()
    if args.profile:
        from torch.profiler import profile, ProfilerActivity
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            times, cuda_times, _, results = run(args)
        prof.export_chrome_trace(args.profile)
        kernels = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
        print(f"profiler_cuda_events={kernels}", file=sys.stderr)
    else:
        times, cuda_times, _, results = run(args)
    if args.block_times:
        for w, c in zip(times, cuda_times):
            print(f"block wall_us={w:.2f} cuda_us={c:.2f}", file=sys.stderr)
    print(f"mode={args.mode} steps={args.steps} result={sum(results):.6e}")
    print(f"step_us={statistics.median(times):.1f}", file=sys.stderr)


if __name__ == "__main__":
    main()
