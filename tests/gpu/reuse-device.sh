#!/bin/bash
# reuse-device.sh - on the GPU machine: launch stacks that name an earlier
# copy (xpcap record's default, cupti/stackreuse.h) against every
# launch copying (--reuse-stacks off), on the PyTorch loop and on a
# transformers model generating text: ingest's counts (launches borrowed,
# checks, checks that found other frames), and how much of the GPU time has
# the same folded stack (kernel, native and Python frames) in both runs.
#   bash tests/gpu/reuse-device.sh        # results in OUT/reuse-device.log
#   QUICK=1 bash tests/gpu/reuse-device.sh   # the PyTorch loop alone (a minute)
. "$(dirname "$(realpath "$0")")/device-env.sh" reuse
facts="SELECT name, value FROM META_DATA_EXPORT WHERE name IN ('xp.launches_borrowed',
 'xp.borrowed_missing', 'xp.stack_checks', 'xp.stack_checks_differed', 'xp.unwind_ns')"
one() {         # NAME PROGRAM ARGS...: record it both ways, compare
	local name=$1 how
	shift
	for how in on off; do
		"$C/xpcap" record -q --reuse-stacks $how -o "$R/$name-$how" -- python3 "$@" > /dev/null
		"$X" ingest --quiet "$R/$name-$how" || echo "ingest $name-$how failed"
		"$X" export --format folded --weight gpu "$R/$name-$how" > "$R/$name-$how.folded"
		echo "== $name, --reuse-stacks $how: $(q "$R/$name-$how/xpcorr.db" "$facts" | tr '\n' ' ')"
		"$X" dump --type gpu_status "$R/$name-$how" | grep -o "launch stacks taken.*" | head -2
	done
	python3 - "$R/$name-on.folded" "$R/$name-off.folded" <<'PY'
import sys
def load(path):
    w = {}
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        w[stack] = w.get(stack, 0) + int(n)
    total = sum(w.values())
    return {k: v / total for k, v in w.items()}, total
on, ton = load(sys.argv[1])
off, toff = load(sys.argv[2])
same = sum(min(v, off.get(k, 0)) for k, v in on.items())
print("GPU time with the same folded stack in both runs: %.1f%% (%d and %d stacks,"
      " GPU ns %d and %d)" % (100 * same, len(on), len(off), ton, toff))
PY
}
one torch-loop "$G/torch_loop.py" --steps 200 --block 20
[ "${QUICK:-0}" = 1 ] || one hf-model "$G/hf_model.py" --tokens 16
