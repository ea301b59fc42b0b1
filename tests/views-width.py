#!/usr/bin/env python3
"""views-width.py - every `xpcorr report` view in text fits 120 columns on a
merged job of three ranks (tests/synthgaps.c through gen-run gaps, then
xpcorr merge), as man xpcorr promises without $COLUMNS: each view named
by `xpcorr report --help`, at the default --top, with --top 0 and with
--stacks 3. The analyses and the rank view must show all three ranks, so
that a view that printed nothing cannot pass.

    views-width.py XPCORR GEN_RUN FIXTURE_EXE FIXTURE_LIB
"""
import os
import re
import subprocess
import sys
import tempfile

xpcorr, gen_run, exe, lib = sys.argv[1:5]
RANKS = 3
env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}


def run(*args):
    p = subprocess.run(args, capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def views():
    _, out, err = run(xpcorr, "report", "--help")
    m = re.search(r"VIEW: ([a-z|]+)", out + err)
    if not m:
        sys.exit("FAIL xpcorr report --help names no VIEW list")
    return m.group(1).split("|")


failed = []
with tempfile.TemporaryDirectory() as tmp:
    for rank in range(RANKS):
        rc, _, err = run(gen_run, "gaps", exe, lib, os.path.join(tmp, f"r{rank}"), str(rank),
                         str(RANKS), "10", os.path.join(tmp, f"t{rank}.json"))
        if rc:
            sys.exit(f"FAIL gen-run gaps rank {rank}: {err.strip()}")
    job = os.path.join(tmp, "job")
    rc, _, err = run(xpcorr, "merge", "-q", "-o", job, *[os.path.join(tmp, f"r{r}") for r in range(RANKS)])
    if rc:
        sys.exit(f"FAIL xpcorr merge: {err.strip()}")
    names = views()
    assert len(names) >= 13, names
    for view in names:
        for extra in ([], ["--top", "0"], ["--stacks", "3"]):
            rc, out, err = run(xpcorr, "report", "--by", view, *extra, job)
            what = " ".join(["--by", view] + extra)
            if rc or not out.strip():
                failed.append(f"{what}: exit {rc}, {len(out)} bytes: {err.strip()[:200]}")
                continue
            for n, line in enumerate(out.splitlines(), 1):
                if len(line) > 120:
                    failed.append(f"{what}: line {n} has {len(line)} columns: {line[:60]}...")
            if view in ("rank", "idle", "launch", "overlap"):
                # "  Rank 1, device 0 of process ...", or the rank view's rows "     1      3  ..."
                pat = r"^ +(\d+) +%d +\d" % RANKS if view == "rank" else r"^  Rank (\d+), device"
                shown = {int(r) for r in re.findall(pat, out, re.M)}
                if shown != set(range(RANKS)):
                    failed.append(f"{what}: ranks {sorted(shown)} shown, not 0..{RANKS - 1}")
        print(f"ok   --by {view}" if not any(f.split(":")[0].split()[1] == view for f in failed)
              else f"FAIL --by {view}")
for f in failed:
    print("FAIL " + f)
sys.exit(1 if failed else 0)
