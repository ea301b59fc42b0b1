"""overhead-fake.py - the stand-in for one GPU process of bench/gpu-overhead in
DRY=1 runs (no GPU, no CUDA): prints the lines overhead-torch.py and
launch-loop print, with synthetic times whose true added costs are TRUTH, so
the harness's scheduling, pairing, statistics and table run end to end.
Each round shares one drift (the machine's slow changes, which pairing must
cancel); each process gets its own offset and each block its own noise.
FAKE_SLOW=1: like the GPU machine's virtual CPUs, each block runs at full
speed or, half the time, 1.5x slower, and a calibration loop (1.7x slower
then) is timed before and after it (overhead-torch.py --main-cpus).
  python3 bench/overhead-fake.py --kind torch|cuda-c --config C --round R --seed S
"""
import argparse
import os
import random
import sys

# true added cost per configuration: (us per launch in the launch-heavy loop,
# us per launch in the CUDA C loop, percent of the compute-bound step)
TRUTH = {
    "bare": (0.0, 0.0, 0.0),
    "torch.profiler": (8.0, 0.0, 0.9),
    "torch.profiler-stack": (10.0, 0.0, 1.0),
    "cupti-floor": (4.0, 1.7, 0.3),
    "lib-callbacks": (4.5, 2.2, 0.4),
    "lib-inproc": (5.0, 2.6, 0.5),
    "lib-inproc-pyframes": (5.5, 2.7, 0.6),
    "xpcap": (6.5, 3.0, 2.6),
    "xpcap-no-sampler": (6.2, 2.9, 1.2),
}
BARE = {"launch": 1200.0, "cuda-c": 2.5, "compute": 1750.0}
LAUNCHES_PER_STEP = 104.0
BLOCKS = {"launch": 15, "compute": 10, "cuda-c": 40}


def added(loop, config):
    t = TRUTH.get(config, (0.0, 0.0, 0.0))
    if loop == "launch":
        return t[0] * LAUNCHES_PER_STEP
    if loop == "cuda-c":
        return t[1]
    return BARE["compute"] * t[2] / 100


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kind", choices=["torch", "cuda-c"], required=True)
    p.add_argument("--config", default="bare")
    p.add_argument("--round", type=int, default=1)
    p.add_argument("--seed", default="1")
    p.add_argument("--loops", default="launch,compute")
    p.add_argument("--count", action="store_true")
    args = p.parse_args()
    if args.count:
        print("xpbench-count loop=launch launches_per_step=%.3f launch_calls_per_step=%.3f" % (
            LAUNCHES_PER_STEP, LAUNCHES_PER_STEP), file=sys.stderr)
        return 0
    drift = random.Random("drift:%s:%d" % (args.seed, args.round)).uniform(-0.15, 0.15)
    loops = ["cuda-c"] if args.kind == "cuda-c" else args.loops.split(",")
    for loop in loops:
        rng = random.Random("%s:%d:%s:%s" % (args.seed, args.round, args.config, loop))
        step = (BARE[loop] + added(loop, args.config)) * (1 + drift) * (1 + rng.gauss(0, 0.02))
        slow = os.environ.get("FAKE_SLOW") == "1"
        for _ in range(BLOCKS[loop]):
            w = step * (1 + rng.gauss(0, 0.01))
            calib = ""
            if slow:
                state = 1.0 if rng.random() < 0.5 else 1.5
                w *= state
                calib = " calib0_us=%.1f calib1_us=%.1f" % tuple(
                    300 * (1.7 if state > 1 else 1.0) * (1 + abs(rng.gauss(0, 0.03))) for _ in range(2))
            print("xpbench-block loop=%s wall_us=%.4f cuda_us=%.4f%s" % (loop, w, w * 0.97, calib),
                  file=sys.stderr)
        if loop == "cuda-c":
            print("launch-loop launches=22500 counter=22500")
        else:
            print("mode=%s steps=300 result=1.000000e+00" % loop)
    return 0


if __name__ == "__main__":
    sys.exit(main())
