#!/bin/bash
# gloo-job-device.sh - on the one-GPU machine: a two-rank DDP job over gloo
# (tests/gpu/straggler_nccl.py --backend gloo --device 0, rank 1 loading
# 6 ms slower a step), each rank in an xpcap record of its own (torchrun
# --no-python starts the recorder, rank-record.sh), ingested apart (each
# writes its summary), then: xpcorr job on the two runs, and xpcorr merge
# of them with report; tests/gpu/check-gloo.py checks both. The logs and
# the ranks' summaries come back in OUT/gloo-job.tar.
#   CARRY=.devcarry/e2e OUT=/tmp/out STEPS=60 bash tests/gpu/gloo-job-device.sh
STEPS=${STEPS:-60}
. "$(dirname "$(realpath "$0")")/device-env.sh" gloo-job
export C R G
mkdir -p "$R/back"
torchrun --nproc-per-node 2 --no-python bash "$G/rank-record.sh" --steps "$STEPS" \
	--backend gloo --device 0 > "$R/back/record.log" 2>&1 || tail -5 "$R/back/record.log"
pids=""
for r in 0 1; do "$X" ingest -q "$R/rank$r" & pids="$pids $!"; done
wait $pids
"$X" merge -q -o "$R/job" "$R/rank0" "$R/rank1"
for by in rank wait; do "$X" job -q --by $by --top 8 "$R/rank0" "$R/rank1"; done \
	> "$R/back/job.txt" 2>&1
for by in rank wait; do "$X" report --by $by --top 8 "$R/job"; done > "$R/back/report.txt" 2>&1
python3 "$G/check-gloo.py" "$X" "$R/job/xpcorr.db" "$R/rank0" "$R/rank1" 2>&1 \
	| tee "$R/back/check.log"
for r in 0 1; do cp "$R/rank$r/xpsum.db" "$R/back/xpsum-rank$r.db"; done
tar -C "$R/back" -cf "$OUT/gloo-job.tar" .
