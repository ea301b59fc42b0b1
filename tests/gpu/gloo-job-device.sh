#!/bin/bash
# gloo-job-device.sh - on the one-GPU machine: a two-rank DDP job over gloo
# (tests/gpu/straggler_nccl.py --backend gloo --device 0, rank 1 loading
# 6 ms slower a step), each rank in an xpcap record of its own (torchrun
# --no-python starts the recorder, rank-record.sh), ingested apart (each
# writes its summary), then: xpcorr job on the two runs, and xpcorr merge
# of them with report; tests/gpu/check-gloo.py checks both. PROG: the
# program (default straggler_nccl.py; straggler_ddp.py: DDP). AS=nobody: the
# job, the records and xpcorr as a normal user (perf events). The logs and
# the ranks' summaries come back in OUT/gloo-job.tar.
#   CARRY=.devcarry/e2e OUT=/tmp/out STEPS=60 [PROG=straggler_ddp.py] [AS=nobody] [SAVE_DB=1] bash tests/gpu/gloo-job-device.sh
STEPS=${STEPS:-60}; PROG=${PROG:-straggler_nccl.py}
. "$(dirname "$(realpath "$0")")/device-env.sh" gloo-job
export C R G PROG
mkdir -p "$R/back"
NB=""
if [ "${AS:-root}" = nobody ]; then
	NB="setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=$R/u"
	mkdir -p "$R/u"; chown 65534:65534 "$R/u" "$R"; chmod 755 "$R"
	# nobody must reach the carried binaries and the scripts
	chmod -R a+rX "$C" "$G"
	for d in "$C" "$G"; do p=$d; while [ "$p" != / ]; do chmod a+x "$p"; p=$(dirname "$p"); done; done
fi
PROG=$PROG $NB torchrun --nproc-per-node 2 --no-python bash "$G/rank-record.sh" \
	--steps "$STEPS" --backend gloo --device 0 > "$R/back/record.log" 2>&1 ||
	tail -5 "$R/back/record.log"
pids=""
for r in 0 1; do $NB "$X" ingest -q "$R/rank$r" & pids="$pids $!"; done
wait $pids
$NB "$X" merge -q -o "$R/job" "$R/rank0" "$R/rank1"
for by in rank wait; do $NB "$X" job -q --by $by --top 8 "$R/rank0" "$R/rank1"; done \
	> "$R/back/job.txt" 2>&1
for by in rank wait; do $NB "$X" report --by $by --top 8 "$R/job"; done > "$R/back/report.txt" 2>&1
$NB python3 "$G/check-gloo.py" "$X" "$R/job/xpcorr.db" "$R/rank0" "$R/rank1" 2>&1 \
	| tee "$R/back/check.log"
python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print('sampler', m.get('sampler'))" \
	"$R/rank0/meta.json"
for r in 0 1; do cp "$R/rank$r/xpsum.db" "$R/back/xpsum-rank$r.db"; done
# SAVE_DB=1: the merged job's database too
[ "${SAVE_DB:-0}" = 1 ] && xz -6 -T4 -c "$R/job/xpcorr.db" > "$R/back/job.db.xz"
tar -C "$R/back" -cf "$OUT/gloo-job.tar" .
