#!/bin/sh
# cli.sh - the xpcorr commands as a user runs them: exit codes, one-line
# errors naming file and offset, warnings for a damaged run, automatic
# ingest by info/export when the database is missing or stale.
#   cli.sh XPCORR GEN_RUN FIXTURE_EXE FIXTURE_LIB
set -u
xpcorr=$1 gen=$2 exe=$3 lib=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() {   # check NAME EXPECTED_STATUS GREP_PATTERN_IN_STDERR -- command...
	name=$1 want=$2 pattern=$3
	shift 4
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" != "$want" ]; then
		echo "FAIL $name: exit $got, expected $want"; cat "$tmp/err"; fail=1
	elif [ -n "$pattern" ] && ! grep -q -- "$pattern" "$tmp/err"; then
		echo "FAIL $name: stderr lacks '$pattern':"; cat "$tmp/err"; fail=1
	else
		echo "ok   $name"
	fi
}

run="$tmp/run"
"$gen" golden "$exe" "$lib" "$run" || exit 1
check usage-no-args 2 "" -- "$xpcorr" ingest
check usage-bad-format 2 "" -- "$xpcorr" export --format png "$run"
check usage-bad-root 2 "--root" -- "$xpcorr" export --format folded --root x "$run"
check not-a-run 1 "xpcorr: $tmp/cpu.xpr: no such file" -- "$xpcorr" ingest "$tmp"

# info and export ingest by themselves when there is no database yet
check info-auto-ingest 0 "" -- "$xpcorr" info "$run"
[ -f "$run/xpcorr.db" ] || { echo "FAIL info did not ingest"; fail=1; }
check export-uses-db 0 "" -- "$xpcorr" export --format folded "$run"
grep -q "^xptarget;main;xp_run;xp_parse;xp_compute 6$" "$tmp/out" || { echo "FAIL folded"; fail=1; }
# ... and again when the run changed after it
sleep 1; touch "$run/cpu.xpr"
check stale-db-reingested 0 "perf-2000.map" -- "$xpcorr" export --format folded "$run"

# a truncated stream: the valid part and a warning naming file and offset
size=$(stat -c %s "$run/cpu.xpr")
truncate -s $((size - 100)) "$run/cpu.xpr"
check truncated-warns 0 "xpcorr: warning: $run/cpu.xpr at offset [0-9]*: truncated record" -- \
	"$xpcorr" ingest "$run"
check truncated-strict 1 "^xpcorr: $run/cpu.xpr at offset [0-9]*: truncated record" -- \
	"$xpcorr" ingest --strict "$run"
[ -f "$run/xpcorr.db" ] || { echo "FAIL strict failure removed the previous db"; fail=1; }
ls "$run" | grep -q tmp- && { echo "FAIL temporary db left behind"; fail=1; }

# a newer format: refused, clearly
printf '\002' | dd of="$run/cpu.xpr" bs=1 seek=8 conv=notrunc 2>/dev/null
check future-version 1 "newer" -- "$xpcorr" ingest "$run"
printf 'garbage' | dd of="$run/cpu.xpr" bs=1 seek=0 conv=notrunc 2>/dev/null
check bad-magic 1 "cpu.xpr at offset 0: not an xpcap record stream" -- "$xpcorr" info "$run"

# any folded file renders; junk lines are skipped with a warning
printf 'a;b 3\nnot folded\na;c 1\n' > "$tmp/x.folded"
check svg-input 0 "1 lines that are not" -- "$xpcorr" export --format svg --input "$tmp/x.folded" -o "$tmp/x.svg"
grep -q 'data-name="c"' "$tmp/x.svg" || { echo "FAIL svg content"; fail=1; }
check svg-input-missing 1 "cannot read" -- "$xpcorr" export --format svg --input "$tmp/none"

# --weight, diff and ls as a user types them (on a fresh run: the one above was damaged)
run="$tmp/fresh"
"$gen" golden "$exe" "$lib" "$run" || exit 1
check usage-bad-weight 2 "--weight is cpu, gpu, offcpu or api" -- "$xpcorr" export --format folded --weight wall "$run"
check usage-differential-needs-input 2 "--differential reads --input" -- "$xpcorr" export --format svg --differential "$run"
check export-offcpu 0 "" -- "$xpcorr" export --format folded --weight offcpu "$run"
grep -q "^worker;main;xp_idle;schedule_\[k\] 5000000$" "$tmp/out" || { echo "FAIL offcpu folded"; fail=1; }
printf 'a;b 1 3\na;c 4 2\n' > "$tmp/d.folded"
check svg-differential 0 "" -- "$xpcorr" export --format svg --differential --input "$tmp/d.folded" -o "$tmp/d.svg"
grep -q 'data-name="b"><title>b (3 samples, 60.00%; base 1, +200.00%)' "$tmp/d.svg" || { echo "FAIL svg diff"; fail=1; }
check diff-one-run 2 "expected two runs" -- "$xpcorr" diff "$run"
check diff-bad-normalize 2 "--normalize is none" -- "$xpcorr" diff --normalize steps "$run" "$run"
check diff-unknown-kernel 2 "no kernel named 'k_none' in either run" -- "$xpcorr" diff --normalize kernel=k_none "$run" "$run"
check diff-missing-run 1 "$tmp/none" -- "$xpcorr" diff "$run" "$tmp/none"
check diff-self 0 "" -- "$xpcorr" diff --weight cpu --format folded "$run" "$run"
grep -q "^xptarget;main;xp_run;xp_parse;xp_compute 6 6$" "$tmp/out" || { echo "FAIL diff folded cpu"; fail=1; }
check ls-missing 1 "cannot read $tmp/none" -- "$xpcorr" ls "$tmp/none"
check ls-usage 2 "" -- "$xpcorr" ls

# ingest records the git describe of the program's checkout, ls shows it
repo="$tmp/repo"
mkdir -p "$repo" && cp "$exe" "$repo/xptarget" && (cd "$repo" && git init -q . && git add xptarget &&
	git -c user.name=t -c user.email=t@t commit -qm one && git tag v0.9) || { echo "FAIL git setup"; fail=1; }
mkdir "$tmp/runs" && cp -r "$run" "$tmp/runs/r1" && rm -f "$tmp/runs/r1/xpcorr.db"
python3 - "$tmp/runs/r1/meta.json" "$repo/xptarget" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m["command"] = [sys.argv[2], "--steps", "3"]
json.dump(m, open(sys.argv[1], "w"))
PY
check ls-not-ingested 0 "" -- "$xpcorr" ls "$tmp/runs"
grep -q "not ingested .*r1: $repo/xptarget --steps 3" "$tmp/out" || { echo "FAIL ls meta"; cat "$tmp/out"; fail=1; }
"$xpcorr" ingest --quiet "$tmp/runs/r1" 2>/dev/null
check ls-ingested 0 "" -- "$xpcorr" ls "$tmp/runs"
grep -q " v0.9 .*r1: $repo/xptarget --steps 3" "$tmp/out" || { echo "FAIL ls git"; cat "$tmp/out"; fail=1; }

# Ctrl-C during an ingest: exit 1, the previous database untouched, no temp file
big="$tmp/big"
"$gen" bench "$exe" "$lib" "$big" 1000000 || exit 1
"$xpcorr" ingest --quiet "$big" || { echo "FAIL big ingest"; fail=1; }
cp "$big/xpcorr.db" "$tmp/before.db"
touch "$big/cpu.xpr"
"$xpcorr" ingest --quiet "$big" 2>"$tmp/err" &
pid=$!
sleep 0.5
kill -INT $pid
wait $pid
status=$?
if [ $status = 1 ] && grep -q interrupted "$tmp/err" && cmp -s "$big/xpcorr.db" "$tmp/before.db" &&
   ! ls "$big" | grep -q tmp-; then
	echo "ok   interrupted-ingest"
else
	echo "FAIL interrupted-ingest: exit $status"; cat "$tmp/err"; ls "$big"; fail=1
fi
exit $fail
