#!/bin/bash
# ddpnccl-device.sh - on the two-GPU machine: the backward of DDP over NCCL
# (tests/gpu/ddp_nccl.py: a transformer block, small buckets, AdamW; 2 ranks
# under torchrun, a GPU each), one xpcap record a rank (torchrun --no-python
# starts the recorders), each ingested apart and merged, against
# torch.profiler's own linkage per rank (backward_truth.py under torchrun:
# one JSON a rank). Every kernel compared by name and order: counts, share
# of backward GPU time at a forward line, agreement with torch.profiler's
# line, and what each side says of the NCCL all-reduces DDP's reducer
# launches from AccumulateGrad's hook. With XPCORR_BEFORE (an xpcorr of
# another commit, in CARRY) the same runs are ingested by it first, for the
# before and after of a fix; with GLOO=1 also DDP over gloo (ddp_gloo.py,
# both ranks on GPU 0, one record). Program output unchanged under xpcap. Back in
# OUT/results.tar: each rank's database (xz), meta.json, both sides' JSON.
#   CARRY=.devcarry/ddpnccl OUT=/tmp/out [XPCORR_BEFORE=xpcorr-main] bash tests/gpu/ddpnccl-device.sh
. "$(dirname "$(realpath "$0")")/device-env.sh" ddpnccl
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONPATH="$G${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
STEPS=${STEPS:-5}
P="$G/ddp_nccl.py"
T="$OUT/ddpnccl-truth.json"
mkdir -p "$R/pack"
pack() { tar -C "$R/pack" -cf "$OUT/results.tar" .; }
nvidia-smi --query-gpu=index,name --format=csv,noheader
python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'

echo "== bare, then one xpcap record a rank, then torch.profiler"
t0=$SECONDS
timeout 150 torchrun --nproc-per-node 2 "$P" --steps "$STEPS" > "$R/bare" 2> "$R/bare.err"
echo "rc=$?" >> "$R/bare"
timeout 200 torchrun --nproc-per-node 2 --no-python "$C/xpcap" record -q -o "$R/rank%r" -- \
	python3 "$P" --steps "$STEPS" > "$R/rec" 2> "$R/rec.err"
echo "rc=$?" >> "$R/rec"
cat "$R/bare"
if cmp -s <(sort "$R/bare") <(sort "$R/rec"); then echo "ok: output and exit status unchanged"
else echo "FAIL: output differs"; diff "$R/bare" "$R/rec"; tail -5 "$R/rec.err"; fi
timeout 200 torchrun --nproc-per-node 2 -m backward_truth profile "$R/prof.json" "$P" --steps "$STEPS" \
	> /dev/null 2> "$R/prof.err"
echo "torch.profiler run: rc=$?"; grep -h "backward_truth profile" "$R/prof.err" | cut -c1-400
ls "$R"; echo "runs took $((SECONDS - t0)) s"

# ingest both ranks (in parallel) with xpcorr $1, compare each with its
# rank's torch.profiler linkage under the name $2
ingest_compare() {
	local x=$1 tag=$2 pids=""
	for r in 0 1; do timeout 240 "$x" ingest -q "$R/rank$r" & pids="$pids $!"; done
	wait $pids
	for r in 0 1; do
		python3 "$G/backward_truth.py" ours "$R/rank$r/xpcorr.db" "$R/$tag-rank$r-ours.json"
		python3 "$G/backward_truth.py" compare "$tag-rank$r" "$R/$tag-rank$r-ours.json" \
			"$R/prof-rank$r.json" --truth "$T"
	done
}
# the NCCL kernels' launch sites in the report
nccl_sites() {
	"$1" report --format json --top 0 --stacks 3 "$2" > "$R/sites.json"
	python3 - "$R/sites.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["rows"]:
    if (r["name"] or "").lower().startswith("nccl"):
        print("%6d x %10d ns  %s" % (r["instances"], r["total_ns"], r["name"][:60]))
        for s in r["stacks"]:
            print("        %5.1f%%  %s" % (s["share_pct"], s["frames"][:150]))
PY
}

if [ -n "${XPCORR_BEFORE:-}" ]; then
	echo "== ingested by $XPCORR_BEFORE (before the fix)"
	XB="$R/xpcorr-before"
	printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$C/lib" "$C/$XPCORR_BEFORE" > "$XB"; chmod +x "$XB"
	ingest_compare "$XB" before
	"$XB" info "$R/rank0" | grep -A8 -E "^backward:"
	nccl_sites "$XB" "$R/rank0"
	"$XB" report --by source --top 6 "$R/rank0" | sed -n '/^Your code/,$p' | head -16
	for r in 0 1; do cp "$R/rank$r/xpcorr.db" "$R/before-rank$r.db"; done
fi

echo "== ingested by this xpcorr"
ingest_compare "$X" after
for r in 0 1; do
	echo "-- rank $r"
	"$X" info "$R/rank$r" | grep -A8 -E "^backward:"
	nccl_sites "$X" "$R/rank$r"
done
"$X" report --top 8 --stacks 1 "$R/rank0" | head -40
"$X" report --by source --top 6 "$R/rank0" | sed -n '/^Your code/,$p' | head -16
for r in 0 1; do
	mkdir -p "$R/pack/rank$r"; cp "$R/rank$r/meta.json" "$R/pack/rank$r/"
	xz -6 -T4 -c "$R/rank$r/xpcorr.db" > "$R/pack/rank$r/device.db.xz"
	cp "$R/prof-rank$r.json" "$R"/*-rank$r-ours.json "$R/pack/rank$r/"
done
cp "$T" "$R/pack/"; pack

echo "== merged: the two ranks' runs as one job"
timeout 240 "$X" merge -q -o "$R/job" "$R/rank0" "$R/rank1"
python3 "$G/backward_truth.py" ours "$R/job/xpcorr.db" "$R/job-ours.json"
python3 "$G/backward_truth.py" compare job "$R/job-ours.json" "$R/prof-rank0.json" "$R/prof-rank1.json" \
	--truth "$T"
"$X" report --by rank "$R/job" | head -20
nccl_sites "$X" "$R/job"
cp "$T" "$R/pack/"; pack

if [ "${GLOO:-0}" = 1 ]; then
	# gloo's reducer copies each bucket to the host from the same hook
	echo "== DDP over gloo (ddp_gloo.py, 2 ranks on GPU 0), one record"
	timeout 150 "$C/xpcap" record -q -o "$R/gloo" -- torchrun --nproc-per-node 2 "$G/ddp_gloo.py" \
		--steps "$STEPS" > "$R/gloo.rec" 2>&1 || tail -3 "$R/gloo.rec"
	timeout 150 torchrun --nproc-per-node 2 -m backward_truth profile "$R/gloo-prof.json" \
		"$G/ddp_gloo.py" --steps "$STEPS" > /dev/null 2> "$R/gloo-prof.err"
	timeout 200 "$X" ingest -q "$R/gloo"
	python3 "$G/backward_truth.py" ours "$R/gloo/xpcorr.db" "$R/gloo-ours.json"
	python3 "$G/backward_truth.py" compare gloo "$R/gloo-ours.json" "$R/gloo-prof-rank0.json" \
		"$R/gloo-prof-rank1.json" --truth "$T"
	"$X" info "$R/gloo" | grep -A8 -E "^backward:"
	cp "$T" "$R/pack/"; pack
fi
ls -la "$OUT"; echo "took $((SECONDS - t0)) s"
