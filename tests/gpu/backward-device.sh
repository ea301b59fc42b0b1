#!/bin/bash
# backward-device.sh - on the GPU machine: backward kernels at the forward
# line that made their autograd node, against torch.profiler's own linkage
# (backward_truth.py), at xpcap's defaults, for three training programs: an
# MLP (train_loop.py), a transformers GPT-2 (hf_train.py) and DDP over gloo,
# two ranks on one GPU (ddp_gloo.py under torchrun). Also: outputs unchanged
# under xpcap, kernel counts against torch.profiler's, the reports, and the
# MLP run as a fixture (OUT/fixture).
#   CARRY=.devcarry/backward OUT=/tmp/out bash tests/gpu/backward-device.sh
. "$(dirname "$(realpath "$0")")/device-env.sh" backward
export PYTHONPATH="$G${PYTHONPATH:+:$PYTHONPATH}"
T="$OUT/backward-truth.json"
rm -f "$T"
python3 -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'

# one program: bare, under xpcap, under torch.profiler; then compare
one() {   # NAME LAUNCHER... -- SCRIPT ARGS...
	local name=$1; shift
	local pre=() ; while [ "$1" != -- ]; do pre+=("$1"); shift; done; shift
	local run="$R/$name"
	"${pre[@]}" "$@" > "$R/$name.bare" 2>"$R/$name.bare.err"; echo "rc=$?" >> "$R/$name.bare"
	"$C/xpcap" record -q -o "$run" -- "${pre[@]}" "$@" > "$R/$name.rec" 2>"$R/$name.rec.err"
	echo "rc=$?" >> "$R/$name.rec"
	if cmp -s <(sort "$R/$name.bare") <(sort "$R/$name.rec"); then echo "ok   $name: output and exit status unchanged"
	else echo "FAIL $name: output differs"; diff "$R/$name.bare" "$R/$name.rec" | head -5; tail -3 "$R/$name.rec.err"; fi
	if [ "${pre[0]}" = torchrun ]; then
		"${pre[@]}" -m backward_truth profile "$R/$name-prof.json" "$@" > /dev/null 2>"$R/$name.prof.err"
	else
		python3 "$G/backward_truth.py" profile "$R/$name-prof.json" "$@" > /dev/null 2>"$R/$name.prof.err"
	fi
	echo "torch.profiler run: rc=$?"; tail -2 "$R/$name.prof.err"
	"$X" ingest "$run" || return
	python3 "$G/backward_truth.py" ours "$run/xpcorr.db" "$R/$name-ours.json"
	python3 "$G/backward_truth.py" compare "$name" "$R/$name-ours.json" "$R"/$name-prof*.json --truth "$T"
	"$X" info "$run" | grep -A6 -E "^backward:|autograd (on|off)"
	"$X" report --top 6 --stacks 1 "$run" | head -40
	"$X" report --by source --top 5 "$run" | head -30
}

one mlp python3 -- "$G/train_loop.py" --steps 5
one hf python3 -- "$G/hf_train.py" --steps 3
one ddp torchrun --nproc-per-node 2 -- "$G/ddp_gloo.py" --steps 5

echo "== folded GPU stacks: backward kernels under their forward lines (mlp)"
"$X" export --format folded --weight gpu "$R/mlp" 2>/dev/null | grep -m2 backward | cut -c1-400
echo "== fixture: the MLP run, with torch.profiler's linkage of the same program"
mkdir -p "$OUT/fixture"
cp "$R/mlp/meta.json" "$OUT/fixture/"
cp "$R/mlp-prof.json" "$OUT/fixture/torch-profiler-backward.json"
xz -9 -c "$R/mlp/xpcorr.db" > "$OUT/fixture/device.db.xz"
python3 "$G/backward_truth.py" compare mlp "$R/mlp-ours.json" "$R"/mlp-prof*.json --truth "$OUT/fixture/backward-truth.json" > /dev/null
ls -la "$OUT/fixture"
for n in hf ddp; do cp "$R/$n/xpcorr.db" "$R/$n.db"; done
tar -C "$R" -cJf "$OUT/truth-data.tar.xz" $(cd "$R" && ls *-prof*.json *-ours.json hf.db ddp.db)
