"""graphs_serving.py - CUDA graphs as a server uses them (vLLM, SGLang): one
graph per batch size captured at start-up by one function, replayed in a
mixed order by another, with eager steps between. Prints its ground truth
as JSON (--truth FILE): per captured graph the capture site (function),
captures, replays and nodes (kernels per replay, counted by torch.profiler
on one replay of each graph).
  python3 tests/gpu/graphs_serving.py --steps 24 --truth truth.json
  python3 tests/gpu/graphs_serving.py --profile prof.json   # torch.profiler's GPU event count
"""
import argparse
import json
import sys

import torch

BATCHES = (1, 2, 4, 8)


def make_model(width):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.GELU(),
                               torch.nn.Linear(width, width), torch.nn.LayerNorm(width)).cuda()


def capture_graphs(model, width):
    """One graph per batch size, captured from static inputs."""
    graphs = {}
    side = torch.cuda.Stream()
    with torch.no_grad():
        for b in BATCHES:
            x = torch.zeros(b, width, device="cuda")
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):          # warm-up outside the graph
                model(x)
            torch.cuda.current_stream().wait_stream(side)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                y = model(x)
            graphs[b] = (g, x, y)
    return graphs


def serve(graphs, model, steps, width):
    """Replays in a mixed order, an eager step every fourth."""
    order = [BATCHES[(i * 3 + i // 4) % len(BATCHES)] for i in range(steps)]
    replays = {b: 0 for b in BATCHES}
    total = 0.0
    with torch.no_grad():
        for i, b in enumerate(order):
            g, x, y = graphs[b]
            x.fill_(0.01 * (i + 1))
            g.replay()
            replays[b] += 1
            total += float(y.sum())
            if i % 4 == 3:
                total += float(model(torch.ones(3, width, device="cuda")).sum())
    return replays, total


def nodes_per_graph(graphs):
    from torch.profiler import profile, ProfilerActivity
    nodes = {}
    for b, (g, _, _) in graphs.items():
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            g.replay()
            torch.cuda.synchronize()
        nodes[b] = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
    return nodes


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=24)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--truth", metavar="FILE")
    p.add_argument("--profile", metavar="TRACE_JSON")
    args = p.parse_args()
    if args.profile:
        from torch.profiler import profile, ProfilerActivity
        # the whole program in the window, the model's copies to the GPU too
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            model = make_model(args.width)
            graphs = capture_graphs(model, args.width)
            replays, total = serve(graphs, model, args.steps, args.width)
        cuda = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        print(f"profiler_cuda_events={len(cuda)}", file=sys.stderr)
        import collections
        with open(args.profile + ".names.json", "w") as f:     # what it counted, by name
            json.dump(collections.Counter(cuda).most_common(), f, indent=0)
    else:
        model = make_model(args.width)
        graphs = capture_graphs(model, args.width)
        replays, total = serve(graphs, model, args.steps, args.width)
    print("checksum %.3f" % total)
    if args.truth:
        nodes = nodes_per_graph(graphs)
        truth = {"graphs": [{"capture_site": "capture_graphs", "captures": 1, "replays": replays[b],
                             "nodes": nodes[b], "batch": b} for b in BATCHES]}
        with open(args.truth, "w") as f:
            json.dump(truth, f, indent=1)


if __name__ == "__main__":
    main()
