#!/bin/bash
# backward-device.sh - on the GPU machine: backward kernels at the forward
# line that made their autograd node, against torch.profiler's own linkage
# (backward_truth.py: its light profile, with_stack only), at xpcap's
# defaults, for: an MLP (train_loop.py), a transformers GPT-2 (hf_train.py),
# DDP over gloo (two ranks on one GPU, ddp_gloo.py under torchrun), the
# patterns of backward_cases.py (accumulation, checkpointing, autograd.grad,
# two backward() a step) and a torch.compile'd model (compiled_train.py).
# Also: outputs unchanged under xpcap, kernel counts against
# torch.profiler's, the reports, and in OUT/results.tar (remade after each
# program, so a run cut short keeps what it did): the MLP run as a fixture
# (fixture.tar.xz) and a tarball a program (its database, both sides' JSON).
#   CARRY=.devcarry/backward OUT=/tmp/out bash tests/gpu/backward-device.sh [NAMES...]
. "$(dirname "$(realpath "$0")")/device-env.sh" backward
export PYTHONPATH="$G${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export TORCHINDUCTOR_CACHE_DIR=$R/inductor
T="$OUT/backward-truth.json"
rm -f "$T"
mkdir -p "$R/pack"
pack() { tar -C "$R/pack" -cf "$OUT/results.tar" .; }
python3 -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'

# one program: bare, under xpcap, under torch.profiler; then compare
one() {   # NAME LAUNCHER... -- SCRIPT ARGS...
	local name=$1; shift
	local pre=() ; while [ "$1" != -- ]; do pre+=("$1"); shift; done; shift
	local run="$R/$name" t0=$SECONDS
	echo "== $name"
	"${pre[@]}" "$@" > "$R/$name.bare" 2>"$R/$name.bare.err"; echo "rc=$?" >> "$R/$name.bare"
	"$C/xpcap" record -q -o "$run" -- "${pre[@]}" "$@" > "$R/$name.rec" 2>"$R/$name.rec.err"
	echo "rc=$?" >> "$R/$name.rec"
	if cmp -s <(sort "$R/$name.bare") <(sort "$R/$name.rec"); then echo "ok   $name: output and exit status unchanged"
	else echo "FAIL $name: output differs"; diff "$R/$name.bare" "$R/$name.rec" | head -5; tail -3 "$R/$name.rec.err"; fi
	if [ "${pre[0]}" = torchrun ]; then
		timeout 240 "${pre[@]}" -m backward_truth profile "$R/$name-prof.json" "$@" > /dev/null 2>"$R/$name.prof.err"
	else
		timeout 240 python3 "$G/backward_truth.py" profile "$R/$name-prof.json" "$@" > /dev/null 2>"$R/$name.prof.err"
	fi
	echo "torch.profiler run: rc=$?"; grep -h "backward_truth profile" "$R/$name.prof.err" | cut -c1-600
	"$X" ingest "$run" || return
	python3 "$G/backward_truth.py" ours "$run/xpcorr.db" "$R/$name-ours.json"
	python3 "$G/backward_truth.py" compare "$name" "$R/$name-ours.json" "$R"/$name-prof*.json --truth "$T"
	"$X" info "$run" | grep -A8 -E "^backward:"
	"$X" report --top 6 --stacks 1 "$run" | head -30
	"$X" report --by source --top 5 "$run" | sed -n '/^Your code/,$p' | head -24
	cp "$run/xpcorr.db" "$R/$name.db"
	tar -C "$R" -cJf "$R/pack/$name.tar.xz" $(cd "$R" && ls $name.db $name-prof*.json $name-ours.json 2>/dev/null)
	pack
	echo "$name took $((SECONDS - t0)) s"
}

fixture() {
	echo "== fixture: the MLP run, with torch.profiler's linkage of the same program"
	mkdir -p "$R/fixture"
	cp "$R/mlp/meta.json" "$R/fixture/"
	cp "$R/mlp-prof.json" "$R/fixture/torch-profiler-backward.json"
	xz -9 -c "$R/mlp/xpcorr.db" > "$R/fixture/device.db.xz"
	python3 "$G/backward_truth.py" compare mlp "$R/mlp-ours.json" "$R"/mlp-prof.json \
		--truth "$R/fixture/backward-truth.json" > /dev/null
	tar -C "$R" -cJf "$R/pack/fixture.tar.xz" fixture
	pack
}

for n in ${@:-mlp hf ddp cases compiled}; do
	case $n in
	mlp) one mlp python3 -- "$G/train_loop.py" --steps 5 && fixture ;;
	hf) one hf python3 -- "$G/hf_train.py" --steps 2 ;;
	ddp) one ddp torchrun --nproc-per-node 2 -- "$G/ddp_gloo.py" --steps 5 ;;
	cases) one cases python3 -- "$G/backward_cases.py" --steps 3 ;;
	compiled) one compiled python3 -- "$G/compiled_train.py" --steps 3 ;;
	esac
done
