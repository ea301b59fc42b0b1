#!/usr/bin/env python3
"""check-copy.py DIR - the table of tests/gpu/copy-device.sh: for each run
under torch.profiler (tN.json: key_averages and its device copies) and
under xpcap (xN-op.json: --by op; xN-copies.txt: the run's copies), the
aten::copy_ GPU time, the number of copies and their time by kind: the
model's parameters (the first copies, before the first step), the input
batch x (1 MiB, pageable) and the labels y (2 KiB), as sum and median per
copy. A copy_ figure that moves with the copies' own durations from run to
run is the copies' variation, not an attribution difference.
  python3 tests/gpu/check-copy.py /tmp/out/copy"""
import glob
import json
import os
import statistics
import sys


def classes(copies):
    """copies: (kind, bytes or None, us) in time order. torch.profiler names
    no size: its host-to-device copies in order are the 4 parameters (the
    16 MiB weight first), then x and y a step; device-to-host ones are the
    .item() reads (aten::_local_scalar_dense, not copy_)."""
    big, params, x, y, d2h = [], [], [], [], []
    h2d = 0
    for kind, size, us in copies:
        if kind == "DtoH":
            d2h.append(us)
            continue
        if size is not None:
            cls = big if size == 16 << 20 else x if size == 1 << 20 else y if size == 2048 else params
        else:
            cls = big if h2d == 0 else params if h2d < 4 else x if (h2d - 4) % 2 == 0 else y
        cls.append(us)
        h2d += 1
    return big, params, x, y, d2h


def row(name, copy_us, copies):
    big, p, x, y, d2h = classes(copies)
    med = lambda v: statistics.median(v) if v else 0.0
    print(f"{name:<4} {copy_us:9.1f} {copy_us - sum(big):13.1f} {len(copies):6d} {sum(big):9.1f}"
          f" {sum(p):7.1f} {len(x):3d} {sum(x):7.1f} {med(x):6.2f} {len(y):3d} {sum(y):6.1f}"
          f" {len(d2h):4d} {sum(d2h):6.1f}")
    return copy_us, copy_us - sum(big), sum(big)


def main():
    d = sys.argv[1]
    print(f"{'run':<4} {'copy_ us':>9} {'w/o 16 MiB':>13} {'copies':>6} {'16 MiB us':>9}"
          f" {'params':>7} {'nx':>3} {'x us':>7} {'x med':>6} {'ny':>3} {'y us':>6} {'DtoH':>4} {'us':>6}")
    res = {"torch.profiler": [], "xpcap": []}
    for f in sorted(glob.glob(os.path.join(d, "t*.json"))):
        t = json.load(open(f))
        copy_us = sum(v["self_gpu_us"] for k, v in t["ops"].items() if k == "aten::copy_")
        copies = [(c["name"][7:11], None, c["dur_us"]) for c in sorted(t["copies"], key=lambda c: c["start_us"])]
        res["torch.profiler"].append(row(os.path.basename(f)[:-5], copy_us, copies))
    for f in sorted(glob.glob(os.path.join(d, "x*-op.json"))):
        name = os.path.basename(f)[:-8]
        ops = json.load(open(f))["ops"]
        copy_us = sum(o["gpu_ns"] for o in ops if o["op"].startswith("aten::copy_")) / 1000.0
        rows = [list(map(int, l.split("|")[:4])) for l in open(os.path.join(d, name + "-copies.txt"))
                if l.strip()]
        # copyKind 1 host to device, 2 device to host (CUPTI_ACTIVITY_MEMCPY_KIND)
        res["xpcap"].append(row(name, copy_us, [("DtoH" if k == 2 else "HtoD", b, (e - s) / 1000.0)
                                                for s, e, b, k in rows]))
    for who, v in res.items():
        if len(v) >= 2:
            for i, what in ((0, "copy_"), (1, "copy_ without the 16 MiB copy"), (2, "the 16 MiB copy")):
                c = [r[i] for r in v]
                print(f"{who}: {what} {min(c):.1f}..{max(c):.1f} us"
                      f" (spread {100 * (max(c) - min(c)) / min(c):.1f}% of the least)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
