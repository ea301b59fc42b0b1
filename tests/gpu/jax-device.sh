#!/bin/bash
# jax-device.sh - on the GPU machine: a JAX training loop (tests/gpu/jax_train.py)
# recorded by xpcap, against nsys's count of the same program's kernels
# (an independent CUPTI client, in a run of its own): kernels by name,
# GPU time, the lines --by source names, and the program's output with
# and without the recorder.
#   CARRY=.devcarry/e2e OUT=/tmp/out bash tests/gpu/jax-device.sh
. "$(dirname "$(realpath "$0")")/device-env.sh" jax
NSYS=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
STEPS=${STEPS:-50}
P="python3 $G/jax_train.py --steps $STEPS"
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "== versions"; python3 -c "import jax; print('jax', jax.__version__, jax.devices())"
$P > "$R/bare.out"; echo "rc=$?" >> "$R/bare.out"
"$C/xpcap" record -q -F 999 -o "$R/run" -- $P > "$R/rec.out"; echo "rc=$?" >> "$R/rec.out"
if cmp -s "$R/bare.out" "$R/rec.out"; then echo "ok   output and exit status unchanged"
else echo "FAIL output differs"; diff "$R/bare.out" "$R/rec.out"; fi
"$X" ingest "$R/run"
"$X" info "$R/run" | head -60
for v in kernel source idle; do "$X" report --by $v --top 8 "$R/run"; done
"$X" report --by kernel --format csv --top 0 "$R/run" > "$OUT/jax-xp-kernels.csv"
"$X" report --by source --format json --top 0 "$R/run" > "$OUT/jax-xp-source.json"
if "$NSYS" profile -t cuda --cuda-graph-trace=node -s none --cpuctxsw none -o "$R/nsys" --force-overwrite true $P \
	> "$R/nsys.out" 2>&1; then
	# nsys under nsight-compute's tree leaves a .qdstrm: its importer lives beside
	imp=$(ls "$(dirname "$(dirname "$NSYS")")"/*/QdstrmImporter 2>/dev/null | head -1)
	# (it needs libdw.so.1: NSYS_LIBS, a folder holding it, when the machine lacks it)
	[ -f "$R/nsys.nsys-rep" ] || [ -z "$imp" ] || LD_LIBRARY_PATH=${NSYS_LIBS:-} \
		"$imp" -i "$R/nsys.qdstrm" > "$R/imp.out" 2>&1 || tail -3 "$R/imp.out"
	"$NSYS" stats -q --report cuda_gpu_kern_sum --format csv --output "$R/nsys" \
		"$R/nsys.nsys-rep" > "$R/nsys-stats.out" 2>&1 || tail -5 "$R/nsys-stats.out"
	cp "$R/nsys_cuda_gpu_kern_sum.csv" "$OUT/jax-nsys-kernels.csv" || ls "$R"
	python3 - "$OUT/jax-xp-kernels.csv" "$OUT/jax-nsys-kernels.csv" <<'PY'
import csv, re, sys
def counts(path):
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f)]
    # two demanglers' spacing: "unsigned char*" and "unsigned char *"
    name = lambda n: re.sub(r"\s+([*&])", r"\1", n)
    out = {}
    for r in rows:
        out[name(r["Name"])] = out.get(name(r["Name"]), 0) + int(r["Instances"])
    return out, sum(int(r["Total Time (ns)"]) for r in rows)
xp, xpt = counts(sys.argv[1]); ns, nst = counts(sys.argv[2])
print("kernels: xpcap %d in %d names, nsys %d in %d names; GPU time %d vs %d ns" %
      (sum(xp.values()), len(xp), sum(ns.values()), len(ns), xpt, nst))
diff = sorted(set(xp) | set(ns), key=lambda k: -abs(xp.get(k, 0) - ns.get(k, 0)))
for k in diff[:8]:
    if xp.get(k, 0) != ns.get(k, 0):
        print("  differs: xpcap %d nsys %d  %s" % (xp.get(k, 0), ns.get(k, 0), k[:100]))
PY
else
	echo "nsys profile failed:"; tail -5 "$R/nsys.out"
fi
"$X" export --format folded --weight gpu "$R/run" | sort -t' ' -k2 -nr | head -5 | cut -c1-200
cp "$R/run/meta.json" "$OUT/jax-meta.json"
xz -6 -T4 -c "$R/run/xpcorr.db" > "$OUT/jax-device.db.xz"
