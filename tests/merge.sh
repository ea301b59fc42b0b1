#!/bin/sh
# merge.sh - `xpcorr merge` on synthetic ranks of one job recorded as if on
# three hosts whose clocks are off by known amounts (tests/synthjob.c): every
# rank is pid 4000, as in containers; each host's CLOCK_MONOTONIC is off by
# MONO_OFF and its wall clock wrong by WALL_ERR. The merged job must put the
# clocks back within 50 us (the NCCL ends jitter by 1 us), keep the three
# processes apart, name them by rank and host, and refuse what it should.
#   merge.sh XPCORR GEN_RUN FIXTURE_EXE FIXTURE_LIB
set -u
xpcorr=$1 gen=$2 exe=$3 lib=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
say() { echo "$1"; case $1 in FAIL*) fail=1 ;; esac; }

# rank  host    monotonic offset (ns)  wall clock error (ns)
"$gen" job "$exe" "$lib" "$tmp/a" 0 3 node-a 0 0 || exit 1
"$gen" job "$exe" "$lib" "$tmp/b" 1 3 node-b 123456789012 3700000 || exit 1
"$gen" job "$exe" "$lib" "$tmp/c" 2 3 node-c -987654321 -12500000 || exit 1

# the reference is rank 0's run wherever it is given
"$xpcorr" merge -o "$tmp/job" "$tmp/c" "$tmp/a" "$tmp/b" 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
cat "$tmp/err"
q() { sqlite3 "$tmp/job/xpcorr.db" "$1" 2>/dev/null || python3 -c '
import sqlite3, sys
for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]): print("|".join(map(str, r)))' \
	"$tmp/job/xpcorr.db" "$1"; }
# the true shifts are -MONO_OFF: within 50 us, by collectives
q "SELECT host, shift_ns, method, matched FROM xp_job_runs ORDER BY run" >"$tmp/runs"
while IFS='|' read -r host shift method matched; do
	case $host in node-a) want=0 ;; node-b) want=-123456789012 ;; node-c) want=987654321 ;; esac
	err=$((shift - want)); [ $err -lt 0 ] && err=$((-err))
	if [ "$err" -le 50000 ] && { [ "$host" = node-a ] || [ "$method" = collectives ]; }; then
		say "ok   $host: shift $shift ns, $err ns from the truth ($method, $matched matched)"
	else
		say "FAIL $host: shift $shift ns, truth $want ($method)"
	fi
done <"$tmp/runs"
[ "$(wc -l <"$tmp/runs")" = 3 ] || say "FAIL xp_job_runs: $(cat "$tmp/runs")"

# three processes, kept apart though every one is pid 4000
[ "$(q 'SELECT count(DISTINCT globalPid) FROM CUPTI_ACTIVITY_KIND_KERNEL')" = 3 ] &&
	say "ok   three processes" || say "FAIL processes: $(q 'SELECT DISTINCT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL')"
# the same names and stacks are one id in the job
[ "$(q "SELECT count(*) FROM StringIds WHERE value LIKE 'ncclDevKernel%'")" = 1 ] &&
	say "ok   names shared" || say "FAIL names not shared"
# collectives end together once aligned: within a few us on every step
spread=$(q "SELECT max(e) - min(e) FROM (SELECT k.end AS e FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN
	StringIds s ON s.id = k.shortName WHERE s.value LIKE 'nccl%' AND k.start > (SELECT min(start)
	FROM CUPTI_ACTIVITY_KIND_KERNEL) + 100000000 AND k.start < (SELECT min(start) FROM
	CUPTI_ACTIVITY_KIND_KERNEL) + 100900000)")
[ "${spread:-999999}" -le 5000 ] && say "ok   aligned collective ends within $spread ns" ||
	say "FAIL collective ends spread $spread ns"
# every launch still joins exactly
[ "$(q "SELECT count(*) FROM xp_attribution WHERE how != 'exact'")" = 0 ] &&
	say "ok   all GPU work joined exactly" || say "FAIL attribution"

"$xpcorr" report --by rank "$tmp/job" >"$tmp/rank" 2>&1 || say "FAIL report --by rank"
for r in "0 *3 .* node-a" "1 *3 .* node-b" "2 *3 .* node-c"; do
	grep -q "^ *$r$" "$tmp/rank" || say "FAIL rank row '$r': $(cat "$tmp/rank")"
done
# the host waits for the step's end in cudaStreamSynchronize: rank 0, done first, longest
awk '$1 ~ /^[0-2]$/ && NF == 9 { w[$1] = $7 } END { exit !(w[0] > w[1] && w[1] > w[2] && w[2] > 0) }' \
	"$tmp/rank" && say "ok   sync wait: rank 0 waits longest" || say "FAIL sync wait: $(cat "$tmp/rank")"
grep -A1 "^ *[0-9]* *2  _Z8gemm_rankPfS_i" "$tmp/rank" | grep -q "^ *xp_compute$" &&
	say "ok   rank 2 is the gemm straggler, launching it in xp_compute" ||
	say "FAIL straggler: $(cat "$tmp/rank")"
"$xpcorr" report --by thread "$tmp/job" >"$tmp/thread" 2>&1
grep -q "rank 1: python3 4000/4000$" "$tmp/thread" && say "ok   threads named by rank and name" ||
	say "FAIL thread names: $(cat "$tmp/thread")"
"$xpcorr" report --rank 2 --by rank "$tmp/job" >"$tmp/r2" 2>&1
grep -q "node-c" "$tmp/r2" && ! grep -q "node-a" "$tmp/r2" && say "ok   --rank 2" ||
	say "FAIL --rank 2: $(cat "$tmp/r2")"
"$xpcorr" export --format chrome -o "$tmp/job.json" "$tmp/job" 2>"$tmp/err" || say "FAIL chrome: $(cat "$tmp/err")"
python3 - "$tmp/job.json" <<'EOF' && say "ok   chrome: three processes on one timeline" || say "FAIL chrome"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
pids = {e["pid"] for e in ev if e.get("ph") == "X" and e.get("cat") == "cuda_runtime"}
names = {e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] in ("process_name", "thread_name")}
want = {"python3 (rank 1 on node-b, pid 4000)", "stream 7 (rank 2 on node-c, pid 4000)",
        "GPU 0 (node-a)", "GPU 0 (node-b)", "GPU 0 (node-c)"}
sys.exit(0 if len(pids) == 3 and want <= names else 1)
EOF
python3 "$(dirname "$0")/chrome-check.py" trace "$tmp/job/xpcorr.db" "$tmp/job.json" >"$tmp/cc" 2>&1 &&
	say "ok   chrome-check: the job's trace agrees with its database" || say "FAIL chrome-check: $(cat "$tmp/cc")"
# --pid: every rank is pid 4000: as given it is the first run's (rank 0's,
# stored as it is), with a word on the others; the stored pid of rank 1
# (1 << 22 | 4000) names that one
"$xpcorr" export --format folded --weight gpu --pid 4000 "$tmp/job" >"$tmp/p0" 2>"$tmp/err" &&
	[ -s "$tmp/p0" ] && grep -q "first run's process; another run's of that pid is stored as" "$tmp/err" &&
	say "ok   export --pid 4000: rank 0's, the others named" || say "FAIL export --pid 4000: $(cat "$tmp/err")"
"$xpcorr" export --format folded --weight gpu --pid 4198304 "$tmp/job" >"$tmp/p1" 2>"$tmp/err" &&
	[ -s "$tmp/p1" ] && ! cmp -s "$tmp/p0" "$tmp/p1" && say "ok   export --pid (stored): rank 1's" ||
	say "FAIL export --pid 4198304: $(cat "$tmp/err")"
"$xpcorr" diff "$tmp/job" "$tmp/job" >/dev/null 2>&1 && say "ok   diff reads the job" || say "FAIL diff"
"$xpcorr" info "$tmp/job" 2>&1 | grep -q "^  run [12] .*node-c .*collectives .*200 nccl collectives" &&
	say "ok   info lists the job's runs" || say "FAIL info: $("$xpcorr" info "$tmp/job" 2>&1 | tail -5)"
# each process as a person knew it: pid 4000, with its run, host and rank; no stored pid
"$xpcorr" info "$tmp/job" >"$tmp/info" 2>&1
[ "$(grep -c "^ *4000 .* run [0-2] on node-[abc], rank [0-2]$" "$tmp/info")" = 3 ] &&
	! grep -q "419[0-9]\{4\}" "$tmp/info" && say "ok   info: processes by the pid they had, run, host, rank" ||
	say "FAIL info processes: $(sed -n '/^processes/,/^job/p' "$tmp/info")"

# the same inputs merge to the same job
"$xpcorr" merge -q --force -o "$tmp/job" "$tmp/a" "$tmp/b" "$tmp/c" 2>/dev/null
"$xpcorr" report --by rank "$tmp/job" 2>&1 | cmp -s - "$tmp/rank" && say "ok   merge is deterministic" ||
	say "FAIL a second merge reports differently"
# --no-refine: the wall clocks alone, off by what they were wrong
"$xpcorr" merge -q --no-refine -o "$tmp/wall" "$tmp/a" "$tmp/b" 2>/dev/null
[ "$(sqlite3 "$tmp/wall/xpcorr.db" "SELECT shift_ns FROM xp_job_runs WHERE run = 1" 2>/dev/null ||
     python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT shift_ns FROM xp_job_runs WHERE run = 1").fetchone()[0])' "$tmp/wall/xpcorr.db")" = -123453089012 ] &&
	say "ok   --no-refine: wall clocks alone" || say "FAIL --no-refine"

# gloo: the all-reduce on the CPU, then the copy back to the GPU from its
# worker loop (c10d::ProcessGroupGloo::runLoop): that copy's call marks the end
"$gen" job "$exe" "$lib" "$tmp/ga" 0 2 node-a 0 0 200 gloo || exit 1
"$gen" job "$exe" "$lib" "$tmp/gb" 1 2 node-b 5555555555 -2500000 200 gloo || exit 1
"$xpcorr" merge -q -o "$tmp/gjob" "$tmp/ga" "$tmp/gb" 2>/dev/null
line=$(sqlite3 "$tmp/gjob/xpcorr.db" "SELECT shift_ns, markers FROM xp_job_runs WHERE run = 1" 2>/dev/null ||
       python3 -c 'import sqlite3,sys; print("|".join(map(str, sqlite3.connect(sys.argv[1]).execute("SELECT shift_ns, markers FROM xp_job_runs WHERE run = 1").fetchone())))' "$tmp/gjob/xpcorr.db")
err=$((${line%%|*} + 5555555555)); [ $err -lt 0 ] && err=$((-err))
[ "${line#*|}" = gloo ] && [ $err -le 50000 ] && say "ok   gloo: shift ${line%%|*} ns, $err ns from the truth" ||
	say "FAIL gloo: $line"

check() {   # check NAME STATUS PATTERN -- command
	name=$1 want=$2 pattern=$3
	shift 4
	"$@" >/dev/null 2>"$tmp/err"
	got=$?
	if [ "$got" = "$want" ] && grep -q -- "$pattern" "$tmp/err"; then say "ok   $name"
	else say "FAIL $name: exit $got (want $want): $(cat "$tmp/err")"; fi
}
check no-output 2 "xpcorr merge: -o JOB_DIR is needed" -- "$xpcorr" merge "$tmp/a"
check no-runs 2 "expected at least one run directory" -- "$xpcorr" merge -o "$tmp/x"
check exists 2 "already holds xpcorr.db; --force replaces it" -- "$xpcorr" merge -o "$tmp/job" "$tmp/a"
check into-a-run 2 "is a run directory" -- "$xpcorr" merge -o "$tmp/b" "$tmp/a"
check missing-run 2 "xpcorr merge: $tmp/nope: no such run directory" -- "$xpcorr" merge -o "$tmp/y" "$tmp/nope"
check bad-reference 2 "--reference $tmp/zz: not one of the runs given" -- \
	"$xpcorr" merge -o "$tmp/z" --reference "$tmp/zz" "$tmp/a" "$tmp/b"
# one run named twice, by another path, a link or its database: refused, not counted twice
ln -s "$tmp/a" "$tmp/a-link"
check same-run-twice 2 "xpcorr merge: $tmp/a and $tmp/./a/ are the same run" -- \
	"$xpcorr" merge -o "$tmp/s1" "$tmp/a" "$tmp/./a/"
check same-run-link 2 "are the same run" -- "$xpcorr" merge -o "$tmp/s2" "$tmp/a-link" "$tmp/b" "$tmp/a"
check same-run-db 2 "are the same run" -- "$xpcorr" merge -o "$tmp/s3" "$tmp/a/xpcorr.db" "$tmp/a"
[ ! -e "$tmp/s1/xpcorr.db" ] && [ ! -e "$tmp/s2/xpcorr.db" ] && say "ok   no job from a run given twice" ||
	say "FAIL a run given twice made a job"
# the same recording by its identity (meta.json's host and start times), not
# only by its database: a copy of a run, a merged job and one of its runs
cp -r "$tmp/a" "$tmp/a-copy"
check copy-of-run 2 "xpcorr merge: $tmp/a and $tmp/a-copy are the same recording (host, start realtime and monotonic ns: node-a " -- \
	"$xpcorr" merge -o "$tmp/s4" "$tmp/a" "$tmp/a-copy"
check job-and-its-run 2 "xpcorr merge: $tmp/job (its run 2) and $tmp/c are the same recording" -- \
	"$xpcorr" merge -o "$tmp/s5" "$tmp/job" "$tmp/c"
check run-and-its-job 2 "xpcorr merge: $tmp/a-copy and $tmp/job (its run 0) are the same recording" -- \
	"$xpcorr" merge -o "$tmp/s6" "$tmp/a-copy" "$tmp/job"
# a job into itself: -o is an input, --force or not
check job-into-itself 2 "xpcorr merge: -o $tmp/job: its xpcorr.db is the input $tmp/job" -- \
	"$xpcorr" merge --force -o "$tmp/job" "$tmp/job" "$tmp/c"
[ ! -e "$tmp/s4/xpcorr.db" ] && [ ! -e "$tmp/s5/xpcorr.db" ] && [ ! -e "$tmp/s6/xpcorr.db" ] &&
	say "ok   no job from a recording given twice" || say "FAIL a recording given twice made a job"
"$xpcorr" report --by rank "$tmp/job" 2>&1 | cmp -s - "$tmp/rank" && say "ok   the job given as -o is intact" ||
	say "FAIL the job given as -o changed"
# a merged job given as a run brings its runs, each with its own pid space:
# (a + b) + c holds three processes, as a + b + c does (every one is pid 4000)
"$xpcorr" merge -q -o "$tmp/ab" "$tmp/a" "$tmp/b" 2>"$tmp/err" &&
	"$xpcorr" merge -q -o "$tmp/abc" "$tmp/ab" "$tmp/c" 2>"$tmp/err" || say "FAIL nested merge: $(cat "$tmp/err")"
qn() { python3 -c 'import sqlite3, sys
for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]): print("|".join(map(str, r)))' "$tmp/abc/xpcorr.db" "$1"; }
[ "$(qn 'SELECT count(DISTINCT globalPid) FROM CUPTI_ACTIVITY_KIND_KERNEL')" = 3 ] &&
	[ "$(qn 'SELECT count(DISTINCT globalPid) FROM PROCESSES')" = 3 ] &&
	say "ok   nested job: three processes" || say "FAIL nested job processes: $(qn 'SELECT DISTINCT globalPid FROM PROCESSES')"
[ "$(qn 'SELECT group_concat(run || ":" || host, " ") FROM (SELECT run, host FROM xp_job_runs ORDER BY run)')" = "0:node-a 1:node-b 2:node-c" ] &&
	say "ok   nested job: xp_job_runs holds the three runs" || say "FAIL nested xp_job_runs: $(qn 'SELECT * FROM xp_job_runs')"
"$xpcorr" info "$tmp/abc" >"$tmp/info3" 2>&1
[ "$(grep -c "^ *4000 .* run [0-2] on node-[abc], rank [0-2]$" "$tmp/info3")" = 3 ] &&
	say "ok   nested job: info lists each process by run, host and rank" ||
	say "FAIL nested info: $(sed -n '/^processes/,/^job/p' "$tmp/info3")"
# and its clocks are the direct merge's: each run's shift within 50 us
qn "SELECT run, shift_ns FROM xp_job_runs ORDER BY run" | while IFS='|' read -r run shift; do
	want=$(q "SELECT shift_ns FROM xp_job_runs j WHERE host = 'node-$(echo abc | cut -c$((run + 1)))'")
	d=$((shift - want)); [ $d -lt 0 ] && d=$((-d))
	[ $d -le 50000 ] && echo "ok   nested job: run $run shift $shift, $d ns from the direct merge's" ||
		echo "FAIL nested job: run $run shift $shift, direct merge $want"
done | tee "$tmp/shifts"
grep -q FAIL "$tmp/shifts" && fail=1
# a job whose runs cannot be told (merged before run_id, or misnumbered): refused
cp -r "$tmp/ab" "$tmp/ab-old" && cp -r "$tmp/ab" "$tmp/ab-bad"
python3 -c 'import sqlite3, sys
d = sqlite3.connect(sys.argv[1]); d.execute("ALTER TABLE xp_job_runs DROP COLUMN run_id"); d.commit()
d = sqlite3.connect(sys.argv[2]); d.execute("UPDATE xp_job_runs SET run = 5 WHERE run = 1"); d.commit()' \
	"$tmp/ab-old/xpcorr.db" "$tmp/ab-bad/xpcorr.db"
check older-job 2 "xpcorr merge: $tmp/ab-old: a job merged by an older xpcorr: its runs' recordings are not known; merge its runs again" -- \
	"$xpcorr" merge -o "$tmp/s7" "$tmp/ab-old" "$tmp/c"
check misnumbered-job 2 "xpcorr merge: $tmp/ab-bad: xp_job_runs: 2 runs, not numbered 0 to 1" -- \
	"$xpcorr" merge -o "$tmp/s8" "$tmp/ab-bad" "$tmp/c"
# --reference names a run by any of its paths
"$xpcorr" merge -q -o "$tmp/refjob" --reference "$tmp/a-link/" "$tmp/b" "$tmp/a" 2>"$tmp/err" &&
	[ "$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT host FROM xp_job_runs WHERE run = 0").fetchone()[0])' "$tmp/refjob/xpcorr.db")" = node-a ] &&
	say "ok   --reference by another path" || say "FAIL --reference by another path: $(cat "$tmp/err")"
mkdir "$tmp/broken" && printf 'not a run' >"$tmp/broken/cpu.xpr" && echo '{}' >"$tmp/broken/meta.json"
check broken-run 1 "broken/cpu.xpr" -- "$xpcorr" merge -o "$tmp/w" "$tmp/a" "$tmp/broken"
[ ! -e "$tmp/w/xpcorr.db" ] && say "ok   nothing left behind by a failed merge" || say "FAIL a failed merge left a database"
# a received run's database is hostile input: odd values, a missing table,
# ids far apart; merge reads it without crashing and says what it could not
cp -r "$tmp/b" "$tmp/hostile"
python3 - "$tmp/hostile/xpcorr.db" <<'EOF2' || say "FAIL could not make the hostile database"
import sqlite3, sys
d = sqlite3.connect(sys.argv[1])
d.execute("UPDATE xp_stacks SET parent = 'x' WHERE id % 3 = 0")
d.execute("UPDATE StringIds SET id = id + 9000000000000000000 WHERE id % 5 = 0")
d.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 'soon', globalPid = -1 WHERE rowid % 7 = 0")
d.execute("DROP TABLE xp_ranks")
d.execute("UPDATE xp_frames SET symbol = 'x', module = -5 WHERE id % 4 = 0")
d.commit()
EOF2
"$xpcorr" merge -q -o "$tmp/hjob" "$tmp/a" "$tmp/hostile" >/dev/null 2>"$tmp/err"
rc=$?
if [ $rc -le 1 ] && [ "$(wc -l <"$tmp/err")" -le 2 ]; then say "ok   a hostile run database: exit $rc, $(head -c 150 "$tmp/err")"
else say "FAIL hostile run database: exit $rc: $(cat "$tmp/err")"; fi
# a run whose database is a FIFO or a link elsewhere: never opened as one
# (no hang, nothing read through the link); the run is ingested again
for odd in fifo link; do
	rm -rf "$tmp/odd" && cp -r "$tmp/b" "$tmp/odd" && rm -f "$tmp/odd/xpcorr.db"
	if [ $odd = fifo ]; then mkfifo "$tmp/odd/xpcorr.db"; else ln -s "$tmp/a/xpcorr.db" "$tmp/odd/xpcorr.db"; fi
	timeout 60 "$xpcorr" merge -q --force -o "$tmp/oddjob" "$tmp/a" "$tmp/odd" >/dev/null 2>"$tmp/err"
	rc=$?
	host=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT host FROM xp_job_runs WHERE run = 1").fetchone()[0])' "$tmp/oddjob/xpcorr.db" 2>/dev/null)
	[ $rc = 0 ] && [ "$host" = node-b ] && [ -f "$tmp/odd/xpcorr.db" ] && [ ! -L "$tmp/odd/xpcorr.db" ] &&
		say "ok   a run whose xpcorr.db is a $odd: ingested again, merged as node-b" ||
		say "FAIL xpcorr.db as a $odd: exit $rc, host '$host': $(cat "$tmp/err")"
done

# another user's runs, stale and read-only to the one merging: each run's
# database is read as it is, and said once (the merge opens a run twice)
if [ "$(id -u)" = 0 ] && command -v runuser >/dev/null; then
	touch "$tmp/a/meta.json"
	chmod 755 "$tmp" && chmod -R a+rX "$tmp/a" "$tmp/b" && mkdir -m 777 "$tmp/ro"
	runuser -u nobody -- "$xpcorr" merge -q -o "$tmp/ro/job" "$tmp/a" "$tmp/b" 2>"$tmp/err"
	rc=$?
	[ $rc = 0 ] && [ "$(grep -c "a/xpcorr.db is older than the run" "$tmp/err")" = 1 ] &&
		say "ok   a stale run another user owns: merged as it is, said once" ||
		say "FAIL stale read-only run: exit $rc: $(cat "$tmp/err")"
else
	echo "skip: the read-only run check needs root and runuser (to merge as nobody)"
fi
exit $fail
