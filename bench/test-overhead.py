"""test-overhead.py - bench/gpu-overhead's statistics and pipeline, on the CPU.

Statistics (overhead_stats.py) on synthetic data whose true values are
known: paired differences cancel a drift shared by a round, the bootstrap
interval of a median covers the true median about as often as it claims,
the ratio interval holds the true ratio, the shuffle is a permutation per
round and the same for the same seed. Then the whole harness in DRY mode
(overhead-fake.py standing in for the GPU processes, true costs known):
every round runs every job in the seeded order, the table's intervals hold
the true per-launch costs and ratios, and the time budget stops rounds.
"""
import os
import random
import re
import runpy
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import overhead_stats as st  # noqa: E402

FAKE = runpy.run_path(os.path.join(HERE, "overhead-fake.py"))


class Stats(unittest.TestCase):
    def test_quantile_and_median(self):
        self.assertEqual(st.median([3, 1, 2]), 2)
        self.assertEqual(st.median([4, 1, 3, 2]), 2.5)
        self.assertAlmostEqual(st.quantile([0, 10], 0.25), 2.5)
        self.assertRaises(ValueError, st.median, [])

    def test_paired_differences_cancel_round_drift(self):
        rng = random.Random(5)
        drift = {r: rng.uniform(-300, 300) for r in range(1, 16)}
        bare = {r: 1000 + drift[r] for r in drift}
        cfg = {r: 1000 + drift[r] + 30 for r in drift if r != 7}   # round 7 failed
        d = st.paired(cfg, bare)
        self.assertEqual([r for r, _ in d], [r for r in range(1, 16) if r != 7])
        for _, v in d:
            self.assertAlmostEqual(v, 30)
        # unpaired, the drift would swamp the 30 us
        unpaired = st.median(cfg.values()) - st.median(bare.values())
        self.assertGreater(abs(unpaired - 30), 1)

    def test_added_per_launch_and_percent(self):
        meas = {("launch", "bare"): {1: {"wall_us": 1000.0}, 2: {"wall_us": 1200.0}},
                ("launch", "x"): {1: {"wall_us": 1500.0}, 2: {"wall_us": 1700.0}},
                ("compute", "bare"): {1: {"wall_us": 2000.0}},
                ("compute", "x"): {1: {"wall_us": 2050.0}}}
        info = {("launch", "", "launches_per_step"): "100.0"}
        _, scale, _ = st.scaler("launch", info)
        self.assertEqual(st.added(meas, "launch", "x", "wall_us", scale), {1: 5.0, 2: 5.0})
        unit, scale, _ = st.scaler("compute", info)
        self.assertEqual(unit, "added %")
        self.assertAlmostEqual(st.added(meas, "compute", "x", "wall_us", scale)[1], 2.5)

    def coverage(self, draw, true_median, trials=150, n=15):
        rng = random.Random(11)
        hit = 0
        for _ in range(trials):
            xs = [draw(rng) for _ in range(n)]
            lo, hi = st.median_ci(xs, resamples=400, rng=rng)
            self.assertLessEqual(lo, st.median(xs))
            self.assertGreaterEqual(hi, st.median(xs))
            hit += lo <= true_median <= hi
        return hit / trials

    def test_bootstrap_ci_covers_true_median(self):
        # a 95% interval: about 95% of intervals hold the true median
        cov = self.coverage(lambda r: r.gauss(5.0, 1.0), 5.0)
        self.assertGreaterEqual(cov, 0.85)
        self.assertLessEqual(cov, 1.0)
        cov = self.coverage(lambda r: r.lognormvariate(1.0, 0.8), 2.718281828)   # skewed
        self.assertGreaterEqual(cov, 0.85)

    def test_bootstrap_ci_narrows_with_rounds_and_is_seeded(self):
        rng = random.Random(3)
        xs = [rng.gauss(0, 1) for _ in range(60)]
        w15 = st.median_ci(xs[:15], rng=random.Random(1))
        w60 = st.median_ci(xs, rng=random.Random(1))
        self.assertLess(w60[1] - w60[0], w15[1] - w15[0])
        self.assertEqual(w60, st.median_ci(xs, rng=random.Random(1)))
        self.assertIsNone(st.median_ci([1.0]))

    def test_ratio_ci_holds_true_ratio(self):
        rng = random.Random(8)
        pairs = []
        for _ in range(20):
            b = 8.0 + rng.gauss(0, 0.8)
            pairs.append((0.5 * 8.0 + rng.gauss(0, 0.4), b))
        lo, hi = st.ratio_ci(pairs, rng=random.Random(2))
        self.assertLess(lo, 0.5)
        self.assertGreater(hi, 0.5)
        self.assertLess(hi - lo, 0.3)
        self.assertIsNone(st.ratio_of_medians([(1.0, -1.0), (1.0, 0.0), (2.0, -0.5)]))

    def test_shuffle_is_seeded_permutation_per_round(self):
        jobs = [("torch", c) for c in ("bare", "a", "b", "c", "d")] + [("cuda-c", "bare")]
        s1 = st.schedule(jobs, 15, "42")
        self.assertEqual(s1, st.schedule(jobs, 15, "42"))
        self.assertNotEqual(s1, st.schedule(jobs, 15, "43"))
        self.assertEqual(st.schedule(jobs, 5, "42"), s1[:5])   # rounds do not depend on the count
        for order in s1:
            self.assertEqual(sorted(order), sorted(jobs))
        self.assertGreater(len({tuple(o) for o in s1}), 10)
        self.assertGreater(len({o.index(("torch", "bare")) for o in s1}), 3)


FAST_TABLE = st.FULL_SPEED_TITLE


def table_rows(text, fast=False):
    """{(loop, config): (median, ci, ratio, ratio_ci)} from the printed
    wall-clock table, or with fast=True from the one of full-speed blocks"""
    head, _, tail = text.partition(FAST_TABLE)
    text = tail if fast else head
    loop, rows = None, {}
    num = r"(-?[0-9.]+|-)"
    ci = r"(\[-?[0-9.]+, -?[0-9.]+\]|-)"
    for line in text.splitlines():
        m = re.match(r"== (launch-heavy|CUDA C|compute-bound)", line)
        if m:
            loop = {"launch-heavy": "launch", "CUDA C": "cuda-c", "compute-bound": "compute"}[m.group(1)]
            continue
        m = re.match(r"(\S+)\s+(\d+)\s+%s\s+%s\s+%s\s+%s\s+%s\s+%s\s+%s\s+%s$" % (
            num, num, ci, num, ci, num, num, ci), line)
        if m and loop:
            def pci(s):
                return None if s == "-" else tuple(float(x) for x in s.strip("[]").split(","))
            rows[(loop, m.group(1))] = (float(m.group(4)), pci(m.group(5)),
                                        None if m.group(9) == "-" else float(m.group(9)), pci(m.group(10)))
    return rows


class Dry(unittest.TestCase):
    def run_harness(self, out, **env):
        e = dict(os.environ, DRY="1", OUT=out, SEED="11", **env)
        return subprocess.run(["bash", os.path.join(HERE, "gpu-overhead")], env=e,
                              capture_output=True, text=True, timeout=300)

    def test_pipeline_recovers_known_costs(self):
        with tempfile.TemporaryDirectory() as out:
            configs = "bare,torch.profiler,cupti-floor,xpcap"
            p = self.run_harness(out, ROUNDS="15", CONFIGS=configs, LOOPS="launch,cuda-c")
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertIn("seed 11", p.stdout)
            self.assertIn("estimated", p.stdout.split("round 1/")[0])   # the estimate comes first
            with open(os.path.join(out, "overhead.raw")) as f:
                raw = f.read().splitlines()
            with open(os.path.join(out, "overhead.txt")) as f:
                text = f.read()
            self.assertIn(text.strip().splitlines()[-1], p.stdout)
            raw_path = os.path.join(out, "overhead.raw")
            pooled = subprocess.run([sys.executable, os.path.join(HERE, "gpu-overhead-table"),
                                     raw_path, raw_path], capture_output=True, text=True).stdout
        # two files' rounds pool, each kept apart
        self.assertRegex(pooled, r"\nxpcap\s+30\s")
        # every round ran every job once, in the seeded order
        jobs = [(k, c) for c in configs.split(",") for k in (["torch"] if c == "torch.profiler"
                                                              else ["torch", "cuda-c"])]
        sched = st.schedule(jobs, 15, "11")
        for rnd in range(1, 16):
            got = {}
            for line in raw:
                kv = dict(t.split("=", 1) for t in line.split()[1:] if "=" in t)
                if line.startswith("m ") and kv["round"] == str(rnd):
                    kind = "cuda-c" if kv["loop"] == "cuda-c" else "torch"
                    got[int(kv["pos"])] = (kind, kv["config"])
            self.assertEqual([got[i] for i in sorted(got)], sched[rnd - 1])
        self.assertFalse([line for line in raw if "stdout_differs" in line])
        rows = table_rows(text)
        truth = FAKE["TRUTH"]
        for loop, i in (("launch", 0), ("cuda-c", 1)):
            for c in ("cupti-floor", "xpcap"):
                med, ci, _, _ = rows[(loop, c)]
                self.assertTrue(ci[0] <= truth[c][i] <= ci[1], (loop, c, med, ci, truth[c][i]))
                self.assertLess(ci[1] - ci[0], 1.5)
        _, _, ratio, rci = rows[("launch", "xpcap")]
        true_ratio = truth["xpcap"][0] / truth["torch.profiler"][0]
        self.assertTrue(rci[0] <= true_ratio <= rci[1], (ratio, rci, true_ratio))
        self.assertNotIn(("cuda-c", "torch.profiler"), rows)   # no profiler without Python

    def test_full_speed_blocks_see_past_slow_cpus(self):
        """Half the blocks run 1.5x slower (and say so in their calibration):
        the wall table widens, the full-speed table still finds the true costs."""
        with tempfile.TemporaryDirectory() as out:
            p = self.run_harness(out, ROUNDS="15", CONFIGS="bare,torch.profiler,xpcap",
                                 LOOPS="launch,compute", FAKE_SLOW="1")
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            with open(os.path.join(out, "overhead.txt")) as f:
                text = f.read()
            again = subprocess.run([sys.executable, os.path.join(HERE, "gpu-overhead-table"),
                                    os.path.join(out, "overhead.raw")],
                                   capture_output=True, text=True).stdout
        self.assertIn(FAST_TABLE, text)
        self.assertEqual(again, text)       # the table tool prints what the harness did
        wall, fast = table_rows(text), table_rows(text, fast=True)
        truth = FAKE["TRUTH"]
        for loop, i in (("launch", 0), ("compute", 2)):
            _, ci, _, rci = fast[(loop, "xpcap")]
            self.assertTrue(ci[0] <= truth["xpcap"][i] <= ci[1], (loop, ci))
        ci, wall_ci = fast[("launch", "xpcap")][1], wall[("launch", "xpcap")][1]
        self.assertLess(ci[1] - ci[0], 1.5)
        self.assertGreater(wall_ci[1] - wall_ci[0], 2 * (ci[1] - ci[0]), (wall_ci, ci))
        _, _, _, rci = fast[("launch", "xpcap")]
        self.assertTrue(rci[0] <= truth["xpcap"][0] / truth["torch.profiler"][0] <= rci[1], rci)
        self.assertRegex(text, r"\d+/\d+ blocks at full speed")

    def test_budget_stops_rounds(self):
        with tempfile.TemporaryDirectory() as out:
            p = self.run_harness(out, ROUNDS="4", CONFIGS="bare,xpcap", LOOPS="cuda-c", BUDGET_S="0")
            self.assertIn("stopping after 1 rounds", p.stdout)
            with open(os.path.join(out, "overhead.raw")) as f:
                raw = f.read()
        self.assertIn("round=1 ", raw)
        self.assertNotIn("round=2 ", raw)


if __name__ == "__main__":
    unittest.main()
