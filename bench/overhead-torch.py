"""overhead-torch.py - one process of bench/gpu-overhead's PyTorch loops.

Runs the launch-heavy and/or the compute-bound loop of tests/gpu/torch_loop.py
in one process (one Python and CUDA start-up for both), each after its own
warm-up, optionally under torch.profiler, and prints each block's times:
  python3 bench/overhead-torch.py --loops launch,compute [--profiler off|on|stack]
  python3 bench/overhead-torch.py --count 20   # CUDA activities per launch-loop step
  --pin-main: after each warm-up, the main thread alone on the first CPU the
  process may use, its other threads (CUDA's, CUPTI's, a profiler's) on the
  rest: the launching thread never shares a CPU with them
  --main-cpus N: with --pin-main, the main thread may use the first N allowed
  CPUs (the rest take the other threads); before each block it runs on the
  one that runs a fixed Python loop fastest just then: a virtual machine's
  CPUs run at two speeds as the host's load comes and goes, unseen from the
  inside (no steal; bench/results/cpu-speed-probe-*), and a block on a slow
  one is 1.4x slower whatever is measured. That loop's time right before
  and after each block is printed with it (calib0_us, calib1_us): the
  harness uses the blocks that ran at full speed
stdout: one deterministic `mode=M steps=N result=R` line per loop (the same
with and without any profiler; the launch loop runs last, and under a
profiler the process ends inside it once that loop's figures are out,
skipping seconds of post-processing that no block times); stderr: `xpbench-block loop=L wall_us=W
cuda_us=C [calib0_us=A calib1_us=B]` per block (per step: wall clock with
the block's final sync, and CUDA events around its steps), and with --count `xpbench-count
launches_per_step=X` (kernels, copies and sets per step, seen by
torch.profiler, outside the timed runs).
"""
import argparse
import contextlib
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "gpu"))
import torch  # noqa: E402
import torch_loop  # noqa: E402


def profiler(kind):
    if kind == "off":
        return contextlib.nullcontext()
    from torch.profiler import ProfilerActivity, profile
    return profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                   with_stack=(kind == "stack"))


ALLOWED = sorted(os.sched_getaffinity(0))   # the process's CPUs, as started
CALIBRATION_ITERATIONS = 10000              # about 0.3 ms of Python at full speed


def pin_main_thread(main_cpus):
    """The main thread on the first main_cpus allowed CPUs, every other thread
    of the process on the others (threads come and go: called after each
    warm-up)."""
    if len(ALLOWED) <= main_cpus:
        return
    mine, theirs = set(ALLOWED[:main_cpus]), set(ALLOWED[main_cpus:])
    me = threading.get_native_id()
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), mine if int(tid) == me else theirs)
        except OSError:
            pass                # a thread that ended meanwhile


def calibration_us():
    """A fixed pure-Python loop's time: this CPU's speed just now."""
    t0 = time.perf_counter_ns()
    x = 0
    for i in range(CALIBRATION_ITERATIONS):
        x += i
    return (time.perf_counter_ns() - t0) / 1e3


def fastest_cpu_calibration(main_cpus):
    """Moves the main thread to whichever of its CPUs runs the loop fastest
    now; returns the loop's time there (taken again, after the move)."""
    cpus = ALLOWED[:main_cpus]
    if len(cpus) > 1:
        speed = {}
        for c in cpus:
            os.sched_setaffinity(0, {c})
            speed[c] = calibration_us()
        os.sched_setaffinity(0, {min(speed, key=speed.get)})
    return calibration_us()


def count(steps):
    """GPU activities per launch-loop step: the divisor of the per-launch cost."""
    from torch.profiler import ProfilerActivity, profile
    state = torch_loop.make_state("launch", 64)
    for _ in range(10):
        torch_loop.step_launch_heavy(state)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            torch_loop.step_launch_heavy(state)
        torch.cuda.synchronize()
    events = prof.events()
    gpu = sum(1 for e in events if e.device_type == torch.autograd.DeviceType.CUDA)
    calls = sum(1 for e in events if e.name in ("cudaLaunchKernel", "cuLaunchKernel",
                                                "cudaLaunchKernelExC", "cuLaunchKernelEx"))
    print(f"xpbench-count loop=launch launches_per_step={gpu / steps:.3f} "
          f"launch_calls_per_step={calls / steps:.3f}", file=sys.stderr)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--loops", default="launch,compute")
    p.add_argument("--launch-steps", type=int, default=300)
    p.add_argument("--launch-block", type=int, default=20)
    p.add_argument("--launch-warmup", type=int, default=40)
    p.add_argument("--compute-steps", type=int, default=100)
    p.add_argument("--compute-block", type=int, default=10)
    p.add_argument("--compute-warmup", type=int, default=10)
    p.add_argument("--profiler", choices=["off", "on", "stack"], default="off")
    p.add_argument("--count", type=int, metavar="STEPS", help="only count launches per step")
    p.add_argument("--pin-main", action="store_true", help="the main thread alone on one CPU")
    p.add_argument("--main-cpus", type=int, default=1, metavar="N",
                   help="with --pin-main: the main thread on the fastest of N CPUs before each block")
    args = p.parse_args()
    if args.count:
        count(args.count)
        return 0
    # the launch loop last: a profiler's post-processing of its ~30k events
    # (about 8 s, after every timed block) is skipped by ending the process
    # inside the profiler once the figures are out
    loops = sorted(args.loops.split(","), key=lambda lp: lp == "launch")
    for i, loop in enumerate(loops):
        a = argparse.Namespace(mode=loop, size=64, steps=getattr(args, loop + "_steps"),
                               block=getattr(args, loop + "_block"),
                               warmup=getattr(args, loop + "_warmup"),
                               after_warmup=None, around_block=None)
        if args.pin_main:
            a.after_warmup = lambda: pin_main_thread(args.main_cpus)
            a.around_block = (lambda: fastest_cpu_calibration(args.main_cpus), calibration_us)
        with profiler(args.profiler):
            wall, cuda, around, results = torch_loop.run(a)
            for w, c, (c0, c1) in zip(wall, cuda, around):
                calib = f" calib0_us={c0:.1f} calib1_us={c1:.1f}" if c0 is not None else ""
                print(f"xpbench-block loop={loop} wall_us={w:.3f} cuda_us={c:.3f}{calib}",
                      file=sys.stderr)
            print(f"mode={loop} steps={a.steps} result={sum(results):.6e}")
            if args.profiler != "off" and i == len(loops) - 1:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
