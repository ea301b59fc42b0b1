"""copy_truth.py - tests/gpu/idle_train.py under torch.profiler, for the
aten::copy_ question (tests/gpu/copy-device.sh): key_averages' self device
time per op, as idle_train.py --profile writes it, and every device copy
torch.profiler saw (name, start and duration in us), to compare copy by copy
with the copies of an xpcap recording of the same program.
  python3 tests/gpu/copy_truth.py OUT.json [--steps 30]
"""
import json
import os
import sys

import torch
from torch.profiler import profile, ProfilerActivity

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import idle_train  # noqa: E402


def main():
    out = sys.argv[1]
    args = idle_train.argparse.Namespace(steps=30, width=1024, batch=256, profile=None)
    if len(sys.argv) > 3 and sys.argv[2] == "--steps":
        args.steps = int(sys.argv[3])
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        idle_train.run(args)
    ops = {}
    for e in prof.key_averages():
        us = getattr(e, "self_device_time_total", None)
        if us is None:
            us = getattr(e, "self_cuda_time_total", 0)
        if us:
            ops[e.key] = {"self_gpu_us": us, "count": e.count}
    copies = [{"name": e.name, "start_us": e.time_range.start, "dur_us": e.time_range.elapsed_us()}
              for e in prof.events()
              if getattr(e.device_type, "name", "") == "CUDA" and e.name.startswith("Memcpy")]
    json.dump({"ops": ops, "copies": copies}, open(out, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
