"""overhead_stats.py - the statistics and the table of bench/gpu-overhead.

Pure Python (no numpy), so the table can be made anywhere from a raw file and
the statistics are unit-tested on any machine (bench/test-overhead-stats.py).

The raw file holds one measurement a line, `key=value` tokens:
  # seed=S rounds=R configs=a,b,c loops=launch,compute,cuda-c   (header)
  info loop=launch launches_per_step=104.000                    (counts, notes)
  info kind=torch config=xpcap lost=0 xpcap_cpu_pct=4.2
  m round=3 pos=5 loop=launch config=xpcap wall_us=1534.2 cuda_us=1498.3 blocks=15 rc=0
A measurement is one process's median over its timed blocks, per step (per
launch for cuda-c). Each configuration is compared with the bare run of the
same round (paired differences, which cancel the machine's drift between
rounds); the figure is the median over rounds, with a percentile bootstrap
confidence interval that resamples rounds.
"""
import math
import random
import re

LOOP_TITLES = {
    "launch": "launch-heavy PyTorch loop",
    "compute": "compute-bound PyTorch loop",
    "cuda-c": "CUDA C launch loop (no Python)",
}
LOOP_ORDER = ["launch", "cuda-c", "compute"]
FULL_SPEED_TITLE = "Blocks at full CPU speed"
REFERENCE = "torch.profiler"     # the ratio column compares with this configuration
METRICS = ("wall_us", "cuda_us")   # per step: wall clock, CUDA events
# a block ran at full speed when the calibration loop before and after it took
# at most FAST_FACTOR x its fastest time in the run (the 2nd percentile); the
# two speeds of the GPU machine's CPUs differ by 1.5-1.9x, within one by ~15%
FAST_FACTOR, FAST_REF_QUANTILE, MIN_FAST_BLOCKS = 1.25, 0.02, 3


def quantile(xs, q):
    """q-quantile by linear interpolation between order statistics."""
    s = sorted(xs)
    if not s:
        raise ValueError("quantile of no values")
    pos = (len(s) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def median(xs):
    return quantile(xs, 0.5)


def schedule(jobs, rounds, seed):
    """The order of the jobs in each round: every job once per round, shuffled
    by a generator of its own per round (seed and round number), so a round's
    order does not depend on how many rounds run."""
    out = []
    for r in range(1, rounds + 1):
        order = list(jobs)
        random.Random("%s:%d" % (seed, r)).shuffle(order)
        out.append(order)
    return out


def paired(values, base):
    """values, base: {round: x}. The per-round differences values - base, in
    round order, for the rounds that have both."""
    return [(r, values[r] - base[r]) for r in sorted(values) if r in base]


def bootstrap_ci(samples, stat, resamples=2000, level=0.95, rng=None):
    """Percentile bootstrap: samples are the per-round units (any objects),
    resampled with replacement; stat(list) -> float or None. Returns (lo, hi),
    or None when there are fewer than 2 samples or the statistic is undefined
    in most resamples."""
    if len(samples) < 2:
        return None
    rng = rng or random.Random(1)
    n, got = len(samples), []
    for _ in range(resamples):
        v = stat([samples[rng.randrange(n)] for _ in range(n)])
        if v is not None:
            got.append(v)
    if len(got) < resamples / 2:
        return None
    got.sort()
    a = (1 - level) / 2
    lo = got[int(math.floor(a * len(got)))]
    hi = got[min(len(got) - 1, int(math.ceil((1 - a) * len(got))) - 1)]
    return lo, hi


def median_ci(values, resamples=2000, level=0.95, rng=None):
    return bootstrap_ci(list(values), median, resamples, level, rng)


def ratio_of_medians(pairs):
    """pairs: [(a, b)] per round; median(a) / median(b), None unless b's median is > 0."""
    b = median([p[1] for p in pairs])
    return median([p[0] for p in pairs]) / b if b > 0 else None


def ratio_ci(pairs, resamples=2000, level=0.95, rng=None):
    """CI of median(a)/median(b), resampling rounds: a and b of a round stay together."""
    return bootstrap_ci(list(pairs), ratio_of_medians, resamples, level, rng)


def read_raws(paths):
    """The lines of several raw files (device calls on one machine) as one:
    each file's rounds stay distinct (round 3 of the second file is 10003)."""
    lines = []
    for i, path in enumerate(paths):
        with open(path) as f:
            lines += [re.sub(r"\bround=(\d+)", lambda m: "round=%d" % (i * 10000 + int(m.group(1))), line)
                      for line in f]
    return lines


def parse_raw(lines):
    """-> (header dict, info {(loop or kind, config or '', key): value},
    meas {(loop, config): {round: {metric: float}}})"""
    header, info, meas, blocks = {}, {}, {}, {}
    for line in lines:
        tok = line.split()
        if not tok:
            continue
        kv = dict(t.split("=", 1) for t in tok[1:] if "=" in t)
        if tok[0] == "#":
            for k, v in kv.items():       # pooled files: the first file's header
                header.setdefault(k, v)
        elif tok[0] == "info":
            where = (kv.get("loop", kv.get("kind", "")), kv.get("config", ""))
            for k, v in kv.items():
                if k not in ("loop", "kind", "config"):
                    info[where + (k,)] = v
        elif tok[0] == "m" and kv.get("rc", "0") == "0" and "wall_us" in kv:
            d = meas.setdefault((kv["loop"], kv["config"]), {})
            d[int(kv["round"])] = {k: float(kv[k]) for k in METRICS if k in kv}
        elif tok[0] == "b":
            blocks.setdefault((kv["loop"], kv["config"], int(kv["round"])), []).append(
                (float(kv["wall_us"]), max(float(kv["calib0_us"]), float(kv["calib1_us"]))))
    full_speed(blocks, info, meas)
    return header, info, meas


def full_speed(blocks, info, meas):
    """Each process's median over its blocks that ran at full CPU speed, as
    metric fast_us (none with fewer than MIN_FAST_BLOCKS of them); how many
    blocks of each loop did, as info (loop, '', 'fast_blocks')."""
    for loop in sorted({k[0] for k in blocks}):
        mine = {k: v for k, v in blocks.items() if k[0] == loop}
        ref = quantile([c for v in mine.values() for _, c in v], FAST_REF_QUANTILE)
        fast_n = total = 0
        for (_, config, rnd), v in mine.items():
            fast = [w for w, c in v if c <= FAST_FACTOR * ref]
            fast_n, total = fast_n + len(fast), total + len(v)
            if len(fast) >= MIN_FAST_BLOCKS and rnd in meas.get((loop, config), {}):
                meas[(loop, config)][rnd]["fast_us"] = median(fast)
        info[(loop, "", "fast_blocks")] = "%d/%d" % (fast_n, total)
        info[(loop, "", "calibration_ref_us")] = "%.1f" % ref


def per_round(meas, loop, config, metric):
    return {r: v[metric] for r, v in meas.get((loop, config), {}).items() if metric in v}


def added(meas, loop, config, metric, scale):
    """{round: cost} of config over bare in that round; scale(d, bare) makes the
    unit (us per launch, or percent of the bare step)."""
    base = per_round(meas, loop, "bare", metric)
    return {r: scale(d, base[r]) for r, d in paired(per_round(meas, loop, config, metric), base)}


def scaler(loop, info):
    """(unit label, scale function, note) of a loop's added cost."""
    if loop == "compute":
        return "added %", (lambda d, b: 100.0 * d / b), "percent of the bare step added"
    if loop == "cuda-c":
        return "us/launch", (lambda d, b: d), "one launch a step"
    n = float(info.get((loop, "", "launches_per_step"), 0))
    if not n:
        return "us/step", (lambda d, b: d), "launches per step not counted: us per step"
    return "us/launch", (lambda d, b, n=n: d / n), "%.1f launches per step" % n


def fmt(v, width, prec=2):
    return ("%*.*f" % (width, prec, v)) if v is not None else "%*s" % (width, "-")


def fmt_ci(ci, prec=2):
    return "[%.*f, %.*f]" % (prec, ci[0], prec, ci[1]) if ci else "-"


def notes(info):
    """What the recorded configurations said of themselves (lost records, CPU)."""
    out, by = [], {}
    for (where, c, k), v in sorted(info.items()):
        if c:
            by.setdefault((where, c), []).append("%s=%s" % (k, v))
    if by:
        out.append("")
    for (where, c), kv in by.items():
        out.append("note: %s, %s process: %s" % (c, where, " ".join(kv)))
    if any(k in ("lost", "inproc_lost", "cupti_dropped") and float(v) > 0
           for (_, _, k), v in info.items()):
        out.append("note: records were lost: that configuration did less work than it should")
    return out


def tables(lines, resamples=2000, seed=None):
    """The tables of a raw file, as text: of each process's median wall-clock
    step time, then, where the raw lines have calibrated blocks, of its
    blocks that ran at full CPU speed (overhead-torch.py --main-cpus), then
    the notes."""
    parsed = parse_raw(lines)
    text = table(parsed, resamples, seed)
    if any(per_round(parsed[2], lp, "bare", "fast_us") for lp in LOOP_ORDER):
        text += "\n" + table(parsed, resamples, seed, metric="fast_us")
    return text + "".join(line + "\n" for line in notes(parsed[1]))


def table(parsed, resamples, seed, metric="wall_us"):
    """One table of parse_raw's (header, info, meas), as text."""
    header, info, meas = parsed
    second = "cuda_us" if metric == "wall_us" else "wall_us"
    seed = seed if seed is not None else header.get("seed", "1")
    configs = header.get("configs", "").split(",") if header.get("configs") else []
    for _, c in sorted(meas):
        if c not in configs:
            configs.append(c)
    out = []
    out.append("95%% confidence intervals: %d bootstrap resamples of rounds (seed %s);"
               " IQR and range: of the per-round paired differences" % (resamples, seed))
    if metric == "fast_us":
        out.append("%s: blocks whose calibration loop took at most %.2fx its fastest time"
                   " (%g quantile) before and after; a process needs %d; column all: every block,"
                   " wall clock" % (FULL_SPEED_TITLE, FAST_FACTOR, FAST_REF_QUANTILE, MIN_FAST_BLOCKS))
    for loop in [lp for lp in LOOP_ORDER if per_round(meas, lp, "bare", metric)]:
        unit, scale, note = scaler(loop, info)
        bare = per_round(meas, loop, "bare", metric)
        bm = median(bare.values())
        out.append("")
        if metric == "fast_us":
            note += "; %s blocks at full speed" % info.get((loop, "", "fast_blocks"), "?")
        out.append("== %s: %s; bare %.2f us/step median over %d rounds, IQR %.1f%% of it,"
                   " range %.1f%% (the noise pairing removes)" % (
                       LOOP_TITLES.get(loop, loop), note, bm, len(bare),
                       100 * (quantile(bare.values(), .75) - quantile(bare.values(), .25)) / bm,
                       100 * (max(bare.values()) - min(bare.values())) / bm))
        out.append("%-22s %3s %10s %10s %17s %7s %17s %9s %6s %14s" % (
            "config", "n", "step_us", unit, "95% CI", "IQR", "range",
            "cuda-ev" if second == "cuda_us" else "all", "x prof", "95% CI"))
        ref = added(meas, loop, REFERENCE, metric, scale)
        for c in configs:
            if c == "bare" or (loop, c) not in meas:
                continue
            rng = random.Random("%s:%s:%s" % (seed, loop, c))
            a = added(meas, loop, c, metric, scale)
            if not a:
                continue
            vals = list(a.values())
            cev = added(meas, loop, c, second, scale)
            step = median(per_round(meas, loop, c, metric).values())
            pairs = [(a[r], ref[r]) for r in sorted(a) if r in ref]
            ratio = ratio_of_medians(pairs) if pairs and c != REFERENCE else None
            rci = ratio_ci(pairs, resamples, rng=rng) if ratio is not None else None
            out.append("%-22s %3d %10.1f %10s %17s %7s %17s %9s %6s %14s" % (
                c, len(vals), step, fmt(median(vals), 10), fmt_ci(median_ci(vals, resamples, rng=rng)),
                fmt(quantile(vals, .75) - quantile(vals, .25), 7), fmt_ci((min(vals), max(vals))),
                fmt(median(cev.values()) if cev else None, 9),
                fmt(ratio, 6), fmt_ci(rci)))
    return "\n".join(out) + "\n"
