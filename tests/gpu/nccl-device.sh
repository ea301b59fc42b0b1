#!/bin/bash
# nccl-device.sh - on the 2-GPU machine: torchrun jobs with NCCL (DDP, and a
# tensor-parallel forward with two all-reduces per layer) recorded at xpcap's
# defaults; per rank, GPU records against torch.profiler's, devices, who the
# NCCL kernels are attributed to. NVLink multicast stays off.
#   CARRY=.devcarry/e2e OUT=/tmp/out bash tests/gpu/nccl-device.sh
. "$(dirname "$(realpath "$0")")/device-env.sh" nccl
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=index,name --format=csv,noheader
for job in ddp tp; do
	echo "== $job"
	mkdir -p "$R/$job-count"
	timeout 150 torchrun --nproc-per-node 2 "$G/nccl_jobs.py" $job --count "$R/$job-count" > "$R/$job-count.out" 2>&1 \
		|| tail -5 "$R/$job-count.out"
	timeout 150 "$C/xpcap" record -q -o "$R/$job" -- torchrun --nproc-per-node 2 "$G/nccl_jobs.py" $job 2>&1 | grep "^rank"
	timeout 200 "$X" ingest "$R/$job" 2>&1 | tail -1
	db="$R/$job/xpcorr.db"
	echo "-- per rank, per name: xpcap's records against torch.profiler's events"
	python3 "$G/check-nccl-counts.py" "$db" "$R/$job-count"
	echo "-- GPU records per process and device"
	q "$db" "SELECT globalPid >> 24, deviceId, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY 1, 2"
	q "$db" "SELECT globalPid >> 24, 'memcpy', count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY GROUP BY 1 UNION ALL SELECT globalPid >> 24, 'memset', count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET GROUP BY 1"
	echo "-- NCCL kernels: launch sites"
	"$X" report --format json --top 0 --stacks 2 "$R/$job" > "$OUT/$job-report.json"
	python3 - "$OUT/$job-report.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["rows"]:
    if "nccl" in (r["name"] or "").lower():
        print("%6d x  %s" % (r["instances"], r["name"][:70]))
        for s in r["stacks"]:
            print("        %5.1f%%  %s" % (s["share_pct"], s["frames"][:110]))
print("not_python:", [(w["reason"], w["pct"]) for w in d.get("not_python", [])])
print("python:", d.get("python"))
PY
	"$X" dump --type gpu_rank "$R/$job" 2>/dev/null | head -4
	"$X" report --by thread "$R/$job" | head -12
	"$X" report --rank 1 --top 3 --stacks 1 "$R/$job" | head -12
	"$X" report --top 6 --stacks 1 "$R/$job" | head -30
	echo "-- copies (between GPUs: both devices)"
	"$X" report --by memop "$R/$job" | head -12
	q "$db" "SELECT globalPid >> 24, deviceId, srcDeviceId, dstDeviceId, bytes, end - start FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 10"
	"$X" export --format chrome -o "$R/$job.json" "$R/$job"
	python3 -c "import json,sys; e=[x for x in json.load(open(sys.argv[1]))['traceEvents'] if x.get('name','').startswith('Memcpy PtoP')]; print('chrome peer copies:', len(e), e[:1])" "$R/$job.json"
done
# the cluster's way: the launcher starts one xpcap per rank (-o %r), then merge
for job in ddp tp; do
	echo "== $job: one record per rank, merged"
	timeout 180 torchrun --nproc-per-node 2 --no-python "$C/xpcap" record -q -o "$R/$job-rank%r" -- \
		python3 "$G/nccl_jobs.py" $job 2>&1 | grep "^rank"
	timeout 240 "$X" merge -o "$R/$job-job" "$R/$job-rank0" "$R/$job-rank1"
	"$X" report --by rank "$R/$job-job" | head -24
	"$X" export --format chrome -o "$OUT/$job-job.json" "$R/$job-job"
done
# the fixture: the tensor-parallel run (one record, both ranks), ingested here
# the merged jobs come back without their raw streams (the databases only)
tar -C "$R" -czf "$OUT/nccl-jobs.tgz" --exclude="*.xpr" ddp-job tp-job 2>/dev/null
xz -9 -k -c "$R/tp/xpcorr.db" > "$OUT/tp-device.db.xz"; cp "$R/tp/meta.json" "$OUT/tp-meta.json"
cp -r "$R/tp-count" "$OUT/tp-count"; ls -la "$OUT"
