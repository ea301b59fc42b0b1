"""compiled_graphs.py - torch.compile(mode="reduce-overhead") on a small
model: Inductor captures a CUDA graph and replays it on every later call.
Its ground truth (--truth FILE): the graphs, each with the function whose
call led to the capture (serve), the replays and the nodes, counted by
torch.profiler over the same calls.
  python3 tests/gpu/compiled_graphs.py --truth truth.json
"""
import argparse
import collections
import json
import sys

import torch


def serve(step, x, calls):
    y = None
    with torch.no_grad():
        for _ in range(calls):
            y = step(x)
    return y


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--calls", type=int, default=12)
    p.add_argument("--truth", metavar="FILE")
    args = p.parse_args()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.GELU(),
                                torch.nn.Linear(256, 256)).cuda()
    step = torch.compile(model, mode="reduce-overhead")
    x = torch.randn(8, 256, device="cuda")
    if not args.truth:
        y = serve(step, x, args.calls)
        torch.cuda.synchronize()
        print("ok", round(float(y.sum()), 2))
        return
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        y = serve(step, x, args.calls)
        torch.cuda.synchronize()
    print("ok", round(float(y.sum()), 2))
    # a replay is a cudaGraphLaunch; its kernels share its correlation id
    # (Kineto's raw events carry it; the FunctionEvents do not)
    kineto = prof.profiler.kineto_results.events()
    launches = {e.correlation_id() for e in kineto if e.name() == "cudaGraphLaunch"}
    per = collections.Counter(e.correlation_id() for e in kineto
                              if e.device_type() == torch.autograd.DeviceType.CUDA)
    replays = [per[c] for c in launches if per[c]]
    events = [e for e in kineto if e.device_type() == torch.autograd.DeviceType.CUDA]
    truth = {"graphs": [{"capture_site": "serve", "captures": 1, "replays": len(replays),
                         "nodes": max(replays) if replays else 0}],
             "profiler_cuda_events": len(events)}
    with open(args.truth, "w") as f:
        json.dump(truth, f, indent=1)


if __name__ == "__main__":
    main()
