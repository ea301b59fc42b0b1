#!/bin/bash
# gloo-cpu-device.sh - on the GPU machine with no GPU used
# (CUDA_VISIBLE_DEVICES=""): the CPU-only job of tests/cpu/straggler_gloo.py
# (two ranks over gloo, rank 1's loader 6 ms slower a step) in one xpcap
# record, as root (eBPF) and as nobody (perf events), ingested and checked
# by tests/gpu/check-gloo.py; then the same with a small all-reduce
# (NUMEL=1024: a rank may find the work done and not block), to count how
# often each rank waited. Logs in OUT/gloo-cpu-device.log.
#   CARRY=.devcarry/e2e OUT=/tmp/out bash tests/cpu/gloo-cpu-device.sh
. "$(dirname "$(realpath "$0")")/../gpu/device-env.sh" gloo-cpu
P=$(dirname "$(realpath "$0")")
export CUDA_VISIBLE_DEVICES=
cat > "$R/launch.sh" <<EOS
#!/bin/sh
export MASTER_ADDR=127.0.0.1 MASTER_PORT=\$1 WORLD_SIZE=2
RANK=0 python3 "$P/straggler_gloo.py" & a=\$!
RANK=1 python3 "$P/straggler_gloo.py" & b=\$!
wait \$a && wait \$b
EOS
chmod 755 "$R/launch.sh"; chmod 1777 "$R"; chmod -R a+rX "$C" "$P" "$G"
for d in "$C" "$P" "$G" "$R"; do p=$d; while [ "$p" != / ]; do chmod a+x "$p"; p=$(dirname "$p"); done; done
python3 -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__)"
port=29551
for who in root nobody; do
	for numel in 4194304 1024; do
		run="$R/$who-$numel"; port=$((port + 1))
		as=""; [ $who = nobody ] && as="setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=$R"
		echo "== $who NUMEL=$numel"
		NUMEL=$numel $as "$C/xpcap" record -q --call-graph dwarf -o "$run" -- "$R/launch.sh" $port
		$as "$X" ingest -q "$run"
		python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print('sampler', m['sampler'], 'process_ranks', [(r['pid'], r['rank']) for r in m['process_ranks']])" "$run/meta.json"
		$as "$X" report --by rank "$run" | sed -n '/Host-side/,/^GPU time/p'
		[ $numel = 4194304 ] && $as python3 "$P/../gpu/check-gloo.py" "$X" "$run/xpcorr.db"
		$as "$X" report --by wait --top 4 "$run" | sed -n '/By waiting rank/,/more rows/p'
	done
done
