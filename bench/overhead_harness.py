"""overhead_harness.py - the runner of bench/gpu-overhead (which execs it).

What recording costs the profiled program, per CUDA launch, trustworthy at
the 0.3 us level: many short rounds; in each round every configuration runs
once, as its own process, in an order shuffled per round (seeded, printed);
the program pinned to PROG_CPUS and xpcap to XPCAP_CPUS; each process warms
up, then times blocks of steps itself (wall clock and CUDA events); its
figure is the median of its blocks. Each configuration is paired with the
bare run of the same round; the table (overhead_stats.py) gives the median
over rounds of the added cost per launch with a bootstrap CI, the spread,
and the ratio to torch.profiler with its CI.

Loops: launch (the launch-heavy PyTorch loop, tests/gpu/torch_loop.py),
compute (the compute-bound one: percent added) -- both in one Python process
per configuration and round -- and cuda-c (bench/launch-loop.cu, no Python).
Environment (all optional):
  CARRY=.devcarry/e2e   xpcap, libxpcupti.so (and launch-loop, else built here with nvcc)
  OUT=/tmp/xp-overhead-out  overhead.raw, overhead.txt, overhead.log
  ROUNDS=15 (or the first argument)  LOOPS=launch,compute,cuda-c
  CONFIGS=targets (default), parts, all, quick, or names: GROUPS and CONFIGS below
  QUICK=1     5 rounds, CONFIGS=quick, shorter loops: a look in about a minute
  DRY=1       no GPU: overhead-fake.py stands in for every process (exercises the pipeline)
  SEED=N      the shuffle's seed (default: from the clock; printed)
  BUDGET_S=480  rounds stop when the next would end past this many seconds from the start
  PROG_CPUS=2-13 XPCAP_CPUS=14-15 HARNESS_CPUS=1, PIN=0 for no pinning
  PIN_MAIN=1  (default) the PyTorch loops' main thread on the first MAIN_CPUS
              of PROG_CPUS, their other threads on the rest
              (overhead-torch.py --pin-main); PIN_MAIN=0: as the OS places them
  MAIN_CPUS=8 before each block the main thread moves to the one of its
              CPUs that runs a fixed Python loop fastest just then; that
              loop's time before and after each block goes into the raw file
              (b lines), and the table adds one of the blocks that ran at
              full speed: the GPU machine's virtual CPUs run at two speeds
              (1.5-1.9x apart) as the host's load comes and goes, with no
              steal time to show it (bench/results/cpu-speed-probe-*)
  STEADY=1    every program process alike: address-space randomization off
              (setarch -R) and PYTHONHASHSEED=0, so that layouts do not add
              process-to-process noise; STEADY=0 leaves them as they come
  LAUNCH_STEPS=300 COMPUTE_STEPS=100 CUDA_BLOCKS=40 CUDA_PER_BLOCK=500 RESAMPLES=2000
  PRINT_COMMANDS=1  print each configuration's commands and exit
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import overhead_stats  # noqa: E402

# The Python frame walk's switches (another change adds them): the library's
# environment variable, and xpcap's flag that turns it off. Change them here.
PYFRAMES_ENV = "XPCAP_PYFRAMES"
PYFRAMES_OFF_FLAGS = ["--python-lines", "off"]
INPROC_COPY = "65528"            # xpcap --launch-stacks inproc's default copy size


class Config:
    """How one configuration runs: plain, under the injection library alone
    (env), under xpcap (xpcap flags), or with torch.profiler (torch loops only)."""

    def __init__(self, name, what, env=None, xpcap=None, profiler="off"):
        self.name, self.what, self.env, self.xpcap, self.profiler = name, what, env, xpcap, profiler

    def kinds(self):
        return ["torch"] if self.profiler != "off" else ["torch", "cuda-c"]


CONFIGS = [
    Config("bare", "the program alone"),
    Config("torch.profiler", "torch.profiler, CPU and CUDA activities", profiler="on"),
    Config("torch.profiler-stack", "torch.profiler with_stack=True", profiler="stack"),
    Config("cupti-floor", "injection library, CUPTI activity only, no callbacks",
           env=dict(XPCAP_CALLBACKS="none", **{PYFRAMES_ENV: "0"})),
    Config("lib-callbacks", "injection library with its API callbacks (its default)",
           env=dict(**{PYFRAMES_ENV: "0"})),
    Config("lib-inproc", "library + in-process launch stacks (%s-byte copy)" % INPROC_COPY,
           env=dict(XPCAP_LAUNCH_STACKS="inproc", XPCAP_LAUNCH_COPY=INPROC_COPY,
                   **{PYFRAMES_ENV: "0"})),
    Config("lib-inproc-pyframes", "library + in-process stacks + Python frame walk",
           env=dict(XPCAP_LAUNCH_STACKS="inproc", XPCAP_LAUNCH_COPY=INPROC_COPY,
                   **{PYFRAMES_ENV: "1"})),
    Config("xpcap", "xpcap record, default settings", xpcap=[]),
    Config("xpcap-no-sampler", "xpcap record --gpu-only (no CPU sampling, no perf trampolines)",
           xpcap=["--gpu-only"]),
    # not in the default set: CONFIGS=... names them
    Config("cupti-driver-cb", "injection library, driver callbacks only",
           env=dict(XPCAP_CALLBACKS="driver", **{PYFRAMES_ENV: "0"})),
    Config("xpcap-inproc", "xpcap record --launch-stacks inproc", xpcap=["--launch-stacks", "inproc"]),
    Config("xpcap-no-pylines", "xpcap record without Python lines", xpcap=PYFRAMES_OFF_FLAGS),
    Config("xpcap-no-reuse", "xpcap record --reuse-stacks off (every launch copies its stack)",
           xpcap=["--reuse-stacks", "off"]),
    Config("xpcap-999Hz", "xpcap record -F 999", xpcap=["-F", "999"]),
    Config("xpcap-no-waits", "xpcap record --no-off-cpu (no context-switch records)",
           xpcap=["--no-off-cpu"]),
    Config("xpcap-no-pyframes", "xpcap record --no-python-frames (no frame reader)",
           xpcap=["--no-python-frames"]),
    # the program never calls cudaProfilerStart: all of it runs outside the
    # capture window (CUPTI activity and launch callbacks off)
    Config("xpcap-window-out", "xpcap record --capture-range cudaProfilerApi, outside the window",
           xpcap=["--capture-range", "cudaProfilerApi"]),
    # A/B of two builds in the same rounds: CARRY/baseline/libxpcupti.so is
    # another commit's injection library ({carry} is CARRY)
    Config("xpcap-baseline", "xpcap record with CARRY/baseline/libxpcupti.so (another build)",
           xpcap=["--cupti-lib", "{carry}/baseline/libxpcupti.so"]),
    # below CUPTI's default floor: the library's XPCAP_BENCH knobs (cupti/init.c)
    Config("floor-sync", "CUPTI floor with SYNCHRONIZATION records (XPCAP_SYNC=1; off by default)",
           env=dict(XPCAP_CALLBACKS="none", XPCAP_SYNC="1", **{PYFRAMES_ENV: "0"})),
    Config("floor-notscb", "CUPTI floor with CUPTI's own clock (no timestamp callback)",
           env=dict(XPCAP_CALLBACKS="none", XPCAP_BENCH="notscb", **{PYFRAMES_ENV: "0"})),
    Config("floor-launchapi", "CUPTI floor with API records of launch-class calls only",
           env=dict(XPCAP_CALLBACKS="none", XPCAP_BENCH="launchapi", **{PYFRAMES_ENV: "0"})),
    Config("floor-hwtrace", "CUPTI floor with hardware event tracing",
           env=dict(XPCAP_CALLBACKS="none", XPCAP_BENCH="hwtrace", **{PYFRAMES_ENV: "0"})),
    Config("floor-prealloc", "CUPTI floor with 4 device buffers of 32 MiB made at start",
           env=dict(XPCAP_CALLBACKS="none", XPCAP_BENCH="prealloc", **{PYFRAMES_ENV: "0"})),
    Config("floor-all", "CUPTI floor with notscb and launchapi",
           env=dict(XPCAP_CALLBACKS="none", XPCAP_BENCH="notscb,launchapi",
                    **{PYFRAMES_ENV: "0"})),
]
BY_NAME = {c.name: c for c in CONFIGS}
# CONFIGS=... takes names and these groups; each group fits one device call
# (< 9 minutes with 15 rounds, as estimated at the start and after round 1)
GROUPS = {
    "targets": ["bare", "torch.profiler", "torch.profiler-stack", "cupti-floor", "xpcap"],
    # each part of xpcap's cost: the library's layers, then xpcap around it
    "parts": ["bare", "cupti-floor", "lib-callbacks", "lib-inproc", "lib-inproc-pyframes",
              "xpcap-no-sampler", "xpcap"],
    "xpcap-parts": ["bare", "cupti-floor", "xpcap", "xpcap-no-sampler"],
    # CUPTI's callback dispatch: both API layers (a runtime launch fires four
    # callbacks) against the driver layer alone (two)
    "callbacks": ["bare", "cupti-floor", "lib-callbacks", "cupti-driver-cb"],
    "quick": ["bare", "torch.profiler", "cupti-floor", "xpcap"],
    "window": ["bare", "xpcap-window-out", "xpcap"],
    # launches naming an earlier copy (the default) against each copying
    "reuse": ["bare", "torch.profiler", "cupti-floor", "xpcap", "xpcap-no-reuse"],
    "ab": ["bare", "torch.profiler", "cupti-floor", "xpcap", "xpcap-baseline"],
    "floor": ["bare", "torch.profiler", "cupti-floor", "floor-sync", "floor-notscb",
              "floor-launchapi", "floor-hwtrace", "floor-prealloc", "floor-all"],
    "all": [c.name for c in CONFIGS[:9]],        # more than one call's worth: BUDGET_S cuts rounds
}


def expand(spec):
    """'targets,lib-inproc' -> the names, in order, each once, bare first."""
    names = ["bare"]
    for item in spec.split(","):
        for n in GROUPS.get(item, [item]):
            if n not in BY_NAME:
                raise SystemExit("gpu-overhead: unknown configuration %s (known: %s; groups: %s)" % (
                    n, ",".join(BY_NAME), ",".join(GROUPS)))
            if n not in names:
                names.append(n)
    return names

# estimated seconds, for the plan printed first (the first round replaces them)
EST_TORCH_START, EST_CUDA_START, EST_XPCAP, EST_PROFILER_END = 2.5, 0.6, 1.5, 1.0
EST_LAUNCH_STEP, EST_COMPUTE_STEP, EST_CUDA_LAUNCH = 1.3e-3, 1.8e-3, 4e-6
EST_PREP = 25                    # the launch count (and nvcc) before the first round
JOB_TIMEOUT_S = 60               # one process; a normal one takes seconds


class Harness:
    def __init__(self, env, argv):
        g = env.get
        self.dry = g("DRY", "0") == "1"
        self.quick = g("QUICK", "0") == "1"
        self.rounds = int(argv[0] if argv else g("ROUNDS", "5" if self.quick else "15"))
        self.configs = expand(g("CONFIGS") or ("quick" if self.quick else "targets"))
        self.loops = g("LOOPS", "launch,compute,cuda-c").split(",")
        self.seed = g("SEED") or str(int(time.time()) % 100000)
        self.budget = float(g("BUDGET_S", "480"))
        self.resamples = int(g("RESAMPLES", "2000"))
        self.launch_steps = int(g("LAUNCH_STEPS", "100" if self.quick else "300"))
        self.compute_steps = int(g("COMPUTE_STEPS", "50" if self.quick else "100"))
        self.cuda_blocks = int(g("CUDA_BLOCKS", "20" if self.quick else "40"))
        self.cuda_per_block = int(g("CUDA_PER_BLOCK", "500"))
        self.carry = os.path.realpath(g("CARRY", ".devcarry/e2e"))
        self.out = g("OUT", "/tmp/xp-overhead-out")
        self.scratch = None              # run directories, made in main()
        self.pin = self.pinning(g)
        self.steady = self.steadiness(g)
        self.launch_loop = None
        self.ref_stdout = {}
        self.errors = 0

    # -- setup -----------------------------------------------------------
    def pinning(self, g):
        """CPU lists for the program, xpcap and this runner, or None when off."""
        if g("PIN", "1") == "0":
            return None
        pin = {"prog": g("PROG_CPUS", "2-13"), "xpcap": g("XPCAP_CPUS", "14-15"),
               "harness": g("HARNESS_CPUS", "1")}
        have = os.sched_getaffinity(0)
        for v in pin.values():
            if not parse_cpus(v) <= have or not shutil.which("taskset"):
                self.note_pin = "pinning off: CPUs %s not all available (have %d)" % (v, len(have))
                return None
        self.note_pin = "pinned: program on CPUs %(prog)s, xpcap on %(xpcap)s, this runner on %(harness)s" % pin
        return pin

    def steadiness(self, g):
        """The setarch prefix that turns address-space randomization off, or None."""
        if g("STEADY", "1") == "0":
            self.note_steady = "layouts as they come (STEADY=0)"
            return None
        arch = os.uname().machine
        if not shutil.which("setarch") or subprocess.run(["setarch", arch, "-R", "true"]).returncode:
            self.note_steady = "setarch -R unavailable: layouts randomized; PYTHONHASHSEED=0"
            return []
        self.note_steady = "every program with setarch -R (no address randomization) and PYTHONHASHSEED=0"
        return ["setarch", arch, "-R"]

    def say(self, text=""):
        print(text, flush=True)
        self.log.write(text + "\n")
        self.log.flush()

    def raw_line(self, text):
        self.raw.write(text + "\n")
        self.raw.flush()

    def kinds(self):
        k = []
        if "launch" in self.loops or "compute" in self.loops:
            k.append("torch")
        if "cuda-c" in self.loops:
            k.append("cuda-c")
        return k

    def jobs(self):
        return [(kind, c) for c in self.configs for kind in BY_NAME[c].kinds() if kind in self.kinds()]

    def torch_loops(self):
        return [lp for lp in ("launch", "compute") if lp in self.loops]

    def find_launch_loop(self):
        """bench/launch-loop: from CARRY, else built with nvcc into the scratch folder."""
        c = os.path.join(self.carry, "launch-loop")
        if os.access(c, os.X_OK):
            return c
        nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        if not os.access(nvcc, os.X_OK):
            return None
        exe = os.path.join(self.scratch, "launch-loop")
        r = subprocess.run([nvcc, "-O2", "-Xcompiler", "-fno-omit-frame-pointer",
                            "-gencode", "arch=compute_90,code=[sm_90,compute_90]",
                            "-o", exe, os.path.join(HERE, "launch-loop.cu")],
                           capture_output=True, text=True)
        if r.returncode:
            self.say("gpu-overhead: nvcc failed: %s" % r.stderr.strip().splitlines()[-1:])
            return None
        return exe

    # -- commands ----------------------------------------------------------
    def fake_command(self, kind, cfg, rnd):
        return [sys.executable, "-S", os.path.join(HERE, "overhead-fake.py"), "--kind", kind,
                    "--config", cfg.name, "--round", str(rnd), "--seed", self.seed,
                    "--loops", ",".join(self.torch_loops())]

    def base_command(self, kind, cfg):
        if kind == "cuda-c":
            return [self.launch_loop or "launch-loop", "--blocks", str(self.cuda_blocks),
                    "--per-block", str(self.cuda_per_block), "--warmup", "5"]
        return [sys.executable, os.path.join(HERE, "overhead-torch.py"),
                "--loops", ",".join(self.torch_loops()), "--launch-steps", str(self.launch_steps),
                "--compute-steps", str(self.compute_steps), "--profiler", cfg.profiler] + \
            (["--pin-main", "--main-cpus", os.environ.get("MAIN_CPUS", "8")]
             if self.pin and os.environ.get("PIN_MAIN", "1") == "1" else [])

    def command(self, kind, cfg, rnd, rundir, fake=False):
        """(argv, env) of one process of a configuration; fake: DRY's stand-in alone."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("XPCAP_") and k not in ("CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH")}
        if fake:
            return self.fake_command(kind, cfg, rnd), env
        prog = self.base_command(kind, cfg)
        if self.steady is not None:
            prog = self.steady + prog
            env["PYTHONHASHSEED"] = "0"
        if self.pin:
            prog = ["taskset", "-c", self.pin["prog"]] + prog
        if cfg.xpcap is not None:
            argv = [os.path.join(self.carry, "xpcap"), "record", "-q", "--force", "-o", rundir]
            argv += [a.replace("{carry}", self.carry) for a in cfg.xpcap] + ["--"] + prog
            if self.pin:
                argv = ["taskset", "-c", self.pin["xpcap"]] + argv
            return argv, env
        if cfg.env is not None:
            env.update(cfg.env)
            env["CUDA_INJECTION64_PATH"] = os.path.join(self.carry, "libxpcupti.so")
            env["XPCAP_RUN_DIR"] = rundir
        return prog, env

    def show(self, argv, env):
        extra = " ".join("%s=%s" % (k, v) for k, v in sorted(env.items()) if k not in os.environ
                         or os.environ[k] != v)
        return (extra + " " if extra else "") + " ".join(argv)

    # -- estimates ---------------------------------------------------------
    def estimate(self, kind, cfg):
        t = EST_XPCAP if cfg.xpcap is not None else 0.0
        if kind == "cuda-c":
            slow = 1.0 if cfg.name == "bare" else 2.5
            return t + EST_CUDA_START + (self.cuda_blocks + 5) * self.cuda_per_block * EST_CUDA_LAUNCH * slow
        slow = 1.0 if cfg.name == "bare" else 1.8
        t += EST_TORCH_START + (EST_PROFILER_END if cfg.profiler != "off" else 0)
        if "launch" in self.loops:
            t += (self.launch_steps + 40) * EST_LAUNCH_STEP * slow
        if "compute" in self.loops:
            t += (self.compute_steps + 30) * EST_COMPUTE_STEP
        return t

    # -- one process -------------------------------------------------------
    def run_job(self, rnd, pos, kind, cfg):
        rundir = os.path.join(self.scratch, "run-" + cfg.name)
        shutil.rmtree(rundir, ignore_errors=True)
        os.makedirs(rundir)
        argv, env = self.command(kind, cfg, rnd, rundir, fake=self.dry)
        t0 = time.monotonic()
        try:
            # a session of its own: a hung process and its children end together
            p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, start_new_session=True)
        except OSError as e:
            p, rc, out, err = None, 127, "", str(e)
        if p:
            try:
                out, err = p.communicate(timeout=JOB_TIMEOUT_S)
                rc = p.returncode
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                out, err = p.communicate()
                rc, err = 124, err + "\ntimed out after %d s" % JOB_TIMEOUT_S
        secs = time.monotonic() - t0
        blocks = {}
        for line in err.splitlines():
            if line.startswith("xpbench-block "):
                kv = dict(t.split("=", 1) for t in line.split()[1:])
                blocks.setdefault(kv["loop"], []).append(
                    {k: float(v) for k, v in kv.items() if k != "loop"})
        loops = ["cuda-c"] if kind == "cuda-c" else self.torch_loops()
        for loop in loops:
            b = blocks.get(loop)
            head = "m round=%d pos=%d loop=%s config=%s" % (rnd, pos, loop, cfg.name)
            if rc or not b:
                self.raw_line("%s rc=%d secs=%.2f" % (head, rc or 1, secs))
                continue
            self.raw_line("%s wall_us=%.4f cuda_us=%.4f blocks=%d rc=0 secs=%.2f" % (
                head, overhead_stats.median([x["wall_us"] for x in b]),
                overhead_stats.median([x["cuda_us"] for x in b]), len(b), secs))
            for x in b:     # calibrated blocks, each: which ran at full speed is decided later
                if "calib0_us" in x:
                    self.raw_line("b round=%d loop=%s config=%s wall_us=%.3f calib0_us=%.1f"
                                  " calib1_us=%.1f" % (rnd, loop, cfg.name, x["wall_us"],
                                                       x["calib0_us"], x["calib1_us"]))
        if rc or not blocks:
            self.errors += 1
            last = (err.strip().splitlines() or ["no output"])[-1]
            if self.errors <= 10:
                self.say("round %d: %s/%s failed (rc %d): %s" % (rnd, cfg.name, kind, rc, last[:200]))
        else:
            self.check_stdout(kind, cfg, rnd, out)
            if rnd == 1 and (cfg.xpcap is not None or cfg.env is not None):
                self.runinfo(kind, cfg, rundir)
        shutil.rmtree(rundir, ignore_errors=True)
        return secs

    def check_stdout(self, kind, cfg, rnd, out):
        """The program's output must not change under any configuration."""
        ref = self.ref_stdout.setdefault(kind, out) if cfg.name == "bare" else self.ref_stdout.get(kind)
        if ref is not None and out != ref:
            self.raw_line("info kind=%s config=%s round=%d stdout_differs=1" % (kind, cfg.name, rnd))
            self.say("round %d: %s/%s stdout differs from bare: %r" % (rnd, cfg.name, kind, out[:120]))

    def runinfo(self, kind, cfg, rundir):
        """What the first round's recording says of itself: records lost or
        dropped (a configuration that lost records did less work), xpcap's CPU."""
        notes = []
        try:
            with open(os.path.join(rundir, "meta.json")) as f:
                m = json.load(f)
            notes.append("lost=%d" % sum(sum(k.get("lost", {}).values()) for k in
                                         m.get("records", {}).values() if isinstance(k, dict)))
            dur = max(1e-9, (m.get("stop_monotonic_ns", 0) - m.get("start_monotonic_ns", 0)) / 1e9)
            cpu = m.get("xpcap_cpu") or {}
            notes.append("xpcap_cpu_pct=%.1f" % (100.0 * (cpu.get("user_s", 0) + cpu.get("sys_s", 0)) / dur))
        except (OSError, ValueError, AttributeError):
            pass
        xpcorr = os.path.join(self.carry, "xpcorr")
        if os.access(xpcorr, os.X_OK):      # the library's own status lines
            env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(self.carry, "lib"))
            dump = subprocess.run([xpcorr, "dump", "--type", "gpu_status", rundir], env=env,
                                  capture_output=True, text=True).stdout
            # counts and CPU add up over the run's processes; a time per call does not
            for key, pattern, combine in (
                    ("cupti_dropped", r"cupti dropped (\d+)", sum),
                    ("inproc_lost", r"launch stacks taken \d+.*?, lost (\d+)", sum),
                    ("inproc_borrowed", r"launch stacks taken \d+ \((\d+) named", sum),
                    ("writer_cpu_s", r"writer CPU ([0-9.]+) s", sum),
                    ("lib_ns_per_call", r"library code per launch-class call (\d+) ns", max)):
                found = re.findall(pattern, dump)
                if found:
                    notes.append("%s=%g" % (key, combine(float(x) for x in found)))
        if notes:
            self.raw_line("info kind=%s config=%s round=1 %s" % (kind, cfg.name, " ".join(notes)))

    def count_launches(self):
        """Launches per step of the launch-heavy loop, counted once by torch.profiler
        (also the GPU's warm-up before the first round)."""
        if self.dry:
            argv = [sys.executable, os.path.join(HERE, "overhead-fake.py"), "--kind", "torch", "--count"]
        else:
            argv = [sys.executable, os.path.join(HERE, "overhead-torch.py"), "--count", "50"]
        if self.pin:
            argv = ["taskset", "-c", self.pin["prog"]] + argv
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=JOB_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as e:
            p = subprocess.CompletedProcess(argv, 127, "", str(e))
        for line in p.stderr.splitlines():
            if line.startswith("xpbench-count "):
                kv = dict(t.split("=", 1) for t in line.split()[1:])
                self.raw_line("info loop=launch launches_per_step=%s launch_calls_per_step=%s" % (
                    kv["launches_per_step"], kv["launch_calls_per_step"]))
                self.say("launch-heavy loop: %s launches per step (torch.profiler's CUDA activities;"
                         " %s launch calls)" % (kv["launches_per_step"], kv["launch_calls_per_step"]))
                return
        self.say("gpu-overhead: could not count launches per step (rc %d): %s" % (
            p.returncode, (p.stderr.strip().splitlines() or [""])[-1][:200]))

    # -- the whole run -----------------------------------------------------
    def main(self):
        start = time.monotonic()
        if self.pin:
            os.sched_setaffinity(0, parse_cpus(self.pin["harness"]))
        os.makedirs(self.out, exist_ok=True)
        self.scratch = tempfile.mkdtemp(prefix="xp-overhead-")
        self.log = open(os.path.join(self.out, "overhead.log"), "w")
        self.raw = open(os.path.join(self.out, "overhead.raw"), "w")
        if "cuda-c" in self.loops and not self.dry:
            self.launch_loop = self.find_launch_loop()
            if not self.launch_loop:
                self.say("gpu-overhead: no launch-loop in CARRY and no nvcc: the CUDA C loop is skipped")
                self.loops = [lp for lp in self.loops if lp != "cuda-c"]
        jobs = self.jobs()
        if os.environ.get("PRINT_COMMANDS") == "1":
            for kind, c in jobs:
                self.say("%-22s %-6s %s" % (c, kind, self.show(*self.command(
                    kind, BY_NAME[c], 1, os.path.join(self.scratch, "run-" + c)))))
            shutil.rmtree(self.scratch, ignore_errors=True)
            return 0
        per_round = sum(self.estimate(k, BY_NAME[c]) for k, c in jobs)
        self.say("== gpu-overhead%s: %s" % (" (DRY: fake workload)" if self.dry else "", machine(self.dry)))
        self.say("== seed %s; %d rounds of %d processes; loops %s; configs %s" % (
            self.seed, self.rounds, len(jobs), ",".join(self.loops), ",".join(self.configs)))
        self.say("== %s" % self.note_pin)
        self.say("== %s" % self.note_steady)
        self.say("== estimated %.0f s a round, %.0f s in all (budget %.0f s: rounds stop there)" % (
            per_round, EST_PREP + self.rounds * per_round, self.budget))
        if EST_PREP + self.rounds * per_round > self.budget:
            self.say("== over the budget: about %d rounds will run; narrow CONFIGS (groups: %s) or LOOPS,"
                     " and merge calls with bench/gpu-overhead-table RAW RAW..." % (
                         max(1, int((self.budget - EST_PREP) / per_round)), ",".join(GROUPS)))
        self.raw_line("# seed=%s rounds=%d configs=%s loops=%s launch_steps=%d compute_steps=%d"
                      " cuda_launches=%d dry=%d" % (
                          self.seed, self.rounds, ",".join(self.configs), ",".join(self.loops),
                          self.launch_steps, self.compute_steps, self.cuda_blocks * self.cuda_per_block,
                          self.dry))
        for kind, c in jobs:
            self.raw_line("#cmd %s %s: %s" % (c, kind, self.show(*self.command(
                kind, BY_NAME[c], 1, os.path.join(self.scratch, "run-" + c)))))
        if "launch" in self.loops:
            self.count_launches()
        done, last = 0, None
        for rnd, order in enumerate(overhead_stats.schedule(jobs, self.rounds, self.seed), 1):
            elapsed = time.monotonic() - start
            if last is not None and elapsed + 1.1 * last > self.budget:
                self.say("== budget: round %d would end past %.0f s; stopping after %d rounds%s" % (
                    rnd, self.budget, done, " (fewer than 15: narrow CONFIGS or LOOPS)" if done < 15 else ""))
                break
            t0 = time.monotonic()
            for pos, (kind, c) in enumerate(order, 1):
                self.run_job(rnd, pos, kind, BY_NAME[c])
            last, done = time.monotonic() - t0, rnd
            self.say("round %d/%d: %.1f s (elapsed %.0f s, all rounds at this pace: %.0f s)" % (
                rnd, self.rounds, last, time.monotonic() - start,
                time.monotonic() - start + last * (self.rounds - rnd)))
        self.raw.close()
        with open(os.path.join(self.out, "overhead.raw")) as f:
            text = overhead_stats.tables(f.readlines(), self.resamples)
        with open(os.path.join(self.out, "overhead.txt"), "w") as f:
            f.write(text)
        self.say("")
        for line in text.rstrip("\n").split("\n"):
            self.say(line)
        self.say("")
        self.say("== %d rounds in %.0f s; %d failed processes; raw %s/overhead.raw, table overhead.txt" % (
            done, time.monotonic() - start, self.errors, self.out))
        shutil.rmtree(self.scratch, ignore_errors=True)
        self.log.close()
        return 0 if done and not self.errors else 1


def parse_cpus(spec):
    """'2-5,8' -> {2, 3, 4, 5, 8}"""
    cpus = set()
    for part in spec.split(","):
        a, _, b = part.partition("-")
        cpus.update(range(int(a), int(b or a) + 1))
    return cpus


def machine(dry):
    if dry:
        return os.uname().release
    try:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True).stdout.strip()
    except OSError:
        gpu = "no nvidia-smi"
    return "%s; kernel %s; %d CPUs" % (gpu, os.uname().release, os.cpu_count())


if __name__ == "__main__":
    sys.exit(Harness(os.environ, sys.argv[1:]).main())
