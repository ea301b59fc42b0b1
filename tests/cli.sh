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
check usage-bad-format 2 "^xpcorr export: --format png: expected one of folded, svg, chrome$" -- \
	"$xpcorr" export --format png "$run"
check usage-no-format 2 "^xpcorr export: --format is needed: folded, svg or chrome (see xpcorr export --help)$" -- \
	"$xpcorr" export "$run"
[ "$(wc -l < "$tmp/err")" = 1 ] || { echo "FAIL usage-no-format: not one line"; fail=1; }
check usage-bad-root 2 "^xpcorr export: --root x: expected one of comm, pid, tid, none, python$" -- \
	"$xpcorr" export --format folded --root x "$run"
check not-a-run 1 "xpcorr: $tmp/cpu.xpr: no such file" -- "$xpcorr" ingest "$tmp"

# info and export ingest by themselves when there is no database yet
check info-auto-ingest 0 "" -- "$xpcorr" info "$run"
[ -f "$run/xpcorr.db" ] || { echo "FAIL info did not ingest"; fail=1; }
check export-uses-db 0 "" -- "$xpcorr" export --format folded "$run"
grep -q "^xptarget;main;xp_run;xp_parse;xp_compute 6$" "$tmp/out" || { echo "FAIL folded"; fail=1; }
# --raw-launch-stacks: no launch placed at a waiting line, and info says why
check raw-launch-stacks 0 "" -- "$xpcorr" ingest -q --raw-launch-stacks -o "$tmp/raw.db" "$run"
check raw-launch-stacks-info 0 "" -- "$xpcorr" info "$tmp/raw.db"
grep -q "^waiting lines:   off (ingested with --raw-launch-stacks)" "$tmp/out" ||
	{ echo "FAIL raw-launch-stacks: info does not say so"; fail=1; }
check default-launch-stacks-info 0 "" -- "$xpcorr" info "$run"
grep -q "^waiting lines:" "$tmp/out" && { echo "FAIL a run without Python has waiting lines"; fail=1; }
# ... and again when the run changed after it (a later mtime, without a sleep)
touch -d '+1 minute' "$run/cpu.xpr"
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

# a run whose kallsyms could not be written: info says why among the warnings
nok="$tmp/nokallsyms"
"$gen" golden "$exe" "$lib" "$nok" >/dev/null || exit 1
rm "$nok/kallsyms"
python3 - "$nok/meta.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m["kallsyms_error"] = "No space left on device"
json.dump(m, open(sys.argv[1], "w"))
PY
check kallsyms-error-warns 0 "kallsyms: not recorded (meta.json kallsyms_error: No space left on device)" -- \
	"$xpcorr" info "$nok"
grep -q "^warnings: none" "$tmp/out" && { echo "FAIL kallsyms-error-warns: info says warnings: none"; fail=1; }
grep -q "^  .*kallsyms: not recorded" "$tmp/out" || { echo "FAIL kallsyms-error-warns: not among info's warnings"; fail=1; }

# any folded file renders; junk lines are skipped with a warning
printf 'a;b 3\nnot folded\na;c 1\n' > "$tmp/x.folded"
check svg-input 0 "1 lines that are not" -- "$xpcorr" export --format svg --input "$tmp/x.folded" -o "$tmp/x.svg"
grep -q '<title>c (' "$tmp/x.svg" || { echo "FAIL svg content"; fail=1; }
check svg-input-missing 1 "cannot read" -- "$xpcorr" export --format svg --input "$tmp/none"

# --weight, diff and ls as a user types them (on a fresh run: the one above was damaged)
run="$tmp/fresh"
"$gen" golden "$exe" "$lib" "$run" || exit 1
check usage-bad-weight 2 "^xpcorr export: --weight wall: expected one of cpu, gpu, offcpu, api$" -- "$xpcorr" export --format folded --weight wall "$run"
check usage-differential-needs-input 2 "--differential reads --input" -- "$xpcorr" export --format svg --differential "$run"
check export-offcpu 0 "" -- "$xpcorr" export --format folded --weight offcpu "$run"
grep -q "^worker;main;xp_idle;schedule_\[k\] 5000000$" "$tmp/out" || { echo "FAIL offcpu folded"; fail=1; }
printf 'a;b 1 3\na;c 4 2\n' > "$tmp/d.folded"
check svg-differential 0 "" -- "$xpcorr" export --format svg --differential --input "$tmp/d.folded" -o "$tmp/d.svg"
grep -q '<title>b (3 samples, 60.00%; base 1, +200.00%)' "$tmp/d.svg" || { echo "FAIL svg diff"; fail=1; }
check diff-one-run 2 "expected two runs" -- "$xpcorr" diff "$run"
check diff-bad-normalize 2 "^xpcorr diff: --normalize steps: expected one of none, duration, kernel=NAME$" -- "$xpcorr" diff --normalize steps "$run" "$run"

# misuse: one line naming the option, the value and what is allowed
check misuse-by 2 "^xpcorr report: --by kernels: expected one of kernel, stack, api, memop, thread, graph, nvtx" -- \
	"$xpcorr" report --by kernels "$run"
check misuse-names 2 "^xpcorr report: --names long: expected one of short, full$" -- \
	"$xpcorr" report --names long "$run"
check misuse-top 2 "^xpcorr report: --top x: expected a number" -- "$xpcorr" report --top x "$run"
check misuse-info-format 2 "^xpcorr info: --format xml: expected one of text, json$" -- \
	"$xpcorr" info --format xml "$run"
check misuse-diff-format 2 "^xpcorr diff: --format xml: expected one of text, csv, json, folded, svg$" -- \
	"$xpcorr" diff --format xml "$run" "$run"
check misuse-diff-top 2 "^xpcorr diff: --top x: expected a number" -- "$xpcorr" diff --top x "$run" "$run"
check misuse-diff-weight 2 "^xpcorr diff: --weight wall: expected one of cpu, gpu, offcpu, api$" -- \
	"$xpcorr" diff --weight wall "$run" "$run"
check misuse-ls-option 2 "^xpcorr ls: --format: no such option" -- "$xpcorr" ls --format x "$tmp"
check misuse-window 2 "--since 5 is not before --until 3" -- "$xpcorr" report --since 5 --until 3 "$run"
check misuse-window-export 2 "--since 5 is not before --until 3" -- \
	"$xpcorr" export --format chrome --since 5 --until 3 "$run"
check misuse-pid 2 "^xpcorr report: --pid 99999: no such process" -- "$xpcorr" report --pid 99999 "$run"
check misuse-export-pid 2 "^xpcorr export: --pid 99999: no such process in $run" -- \
	"$xpcorr" export --format folded --pid 99999 "$run"
check misuse-export-tid 2 "^xpcorr export: --tid 99999: no such thread in $run" -- \
	"$xpcorr" export --format folded --tid 99999 "$run"
check misuse-chrome-pid 2 "^xpcorr export: --pid 99999: no such process" -- \
	"$xpcorr" export --format chrome --pid 99999 "$run"
[ -s "$tmp/out" ] && { echo "FAIL misuse-chrome-pid: wrote a trace"; fail=1; }
# a --pid/--tid of the run still selects (the fixture's worker thread)
check export-pid-tid 0 "" -- "$xpcorr" export --format folded --pid 1000 --tid 1001 "$run"
[ -s "$tmp/out" ] || { echo "FAIL export-pid-tid: empty"; fail=1; }
check misuse-dump-type 2 "^xpcorr dump: --type foo: expected one of sample, fork, exit, comm" -- \
	"$xpcorr" dump --type foo "$run"
check dump-type-none 0 "^xpcorr dump: no gpu_kernel record in $run$" -- "$xpcorr" dump --type gpu_kernel "$run"
mkdir "$tmp/notarun"
check dump-not-a-run 1 "^xpcorr dump: $tmp/notarun: no record stream" -- "$xpcorr" dump "$tmp/notarun"
# a path that does not exist: said as such, by every command that reads a run
check misuse-no-run 2 "^xpcorr report: /nonexistent: no such run directory$" -- "$xpcorr" report /nonexistent
check misuse-no-db 2 "^xpcorr report: $tmp/none.db: no such database file$" -- "$xpcorr" report "$tmp/none.db"
for cmd in ingest info dump; do
	check "misuse-no-run-$cmd" 2 "^xpcorr $cmd: /nonexistent: no such run directory" -- "$xpcorr" $cmd /nonexistent
done
check misuse-no-run-export 2 "^xpcorr export: /nonexistent: no such run directory$" -- \
	"$xpcorr" export --format folded /nonexistent
[ -e /nonexistent ] && { echo "FAIL misuse-no-run: created /nonexistent"; fail=1; }
# an empty view of a run with GPU work says there is nothing, and why, on
# stderr (csv stays one table); a run without GPU work has the footer's reason
gpurun="$tmp/gpurun"
"$gen" scale "$exe" "$lib" "$gpurun" 2000 >/dev/null || { echo "FAIL gen-run scale"; fail=1; }
check empty-nvtx-view 0 "nothing to show by nvtx in .*: no GPU work was launched inside an NVTX range" -- \
	"$xpcorr" report --by nvtx --format csv "$gpurun"
grep -q "nothing to show" "$tmp/out" && { echo "FAIL empty-nvtx-view: the note is in the csv"; fail=1; }
# csv is one table: every row has the header's field count; the footer is on stderr
check csv-one-table 0 "GPU time attribution" -- "$xpcorr" report --format csv --top 0 "$gpurun"
python3 -c 'import csv,sys; r=list(csv.reader(open(sys.argv[1]))); sys.exit(len(r) < 2 or len({len(x) for x in r}) != 1)' "$tmp/out" \
	|| { echo "FAIL csv-one-table: rows of several field counts"; fail=1; }
# text fits: 120 columns in a pipe, $COLUMNS when set, --width 0 for whole lines
widest() { python3 -c 'import sys; print(max(len(l.rstrip("\n")) for l in open(sys.argv[1], encoding="utf-8")))' "$1"; }
for cols in "" 80; do
	COLUMNS=$cols "$xpcorr" report --by stack --frames 12 --top 0 "$gpurun" > "$tmp/w.txt" 2>/dev/null
	w=$(widest "$tmp/w.txt"); limit=${cols:-120}
	[ "$w" -le "$limit" ] && echo "ok   width-${limit}: $w" || { echo "FAIL width-${limit}: a line of $w"; fail=1; }
done
"$xpcorr" report --by stack --frames 12 --top 0 --width 0 "$gpurun" > "$tmp/w.txt" 2>/dev/null
[ "$(widest "$tmp/w.txt")" -gt 120 ] && echo "ok   width-0-whole" || echo "note width-0-whole: no line longer than 120 in this run"
# chrome windows as offsets from the run's start; an empty window is an error
check chrome-offset 0 "" -- "$xpcorr" export --format chrome --since +0s --until +1000s "$gpurun"
grep -q '"ph":"X"' "$tmp/out" || { echo "FAIL chrome-offset: no event"; fail=1; }
check chrome-offset-empty 1 "no event starts in the --since/--until window" -- \
	"$xpcorr" export --format chrome --since +100000s "$gpurun"
check chrome-offset-bad 2 "--since +1.5x: expected +SECONDS with a unit" -- \
	"$xpcorr" export --format chrome --since +1.5x "$gpurun"
# not a number (NaN compares false to every bound), not finite, too far: refused
for bad in +nan +nans +inf +1e400s +2e18ns; do
	check "report-offset-$bad" 2 "^xpcorr report: --since $bad: expected +SECONDS with a unit" -- \
		"$xpcorr" report --since "$bad" "$gpurun"
	check "chrome-offset-$bad" 2 "^xpcorr export: --until $bad: expected +SECONDS with a unit" -- \
		"$xpcorr" export --format chrome --until "$bad" "$gpurun"
done
# a received database whose start time no offset fits after: refused, not
# wrapped round to a window before the run (UBSan: signed overflow)
cp "$gpurun/xpcorr.db" "$tmp/late.db"
python3 -c 'import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); d.execute("UPDATE META_DATA_EXPORT SET value = ? WHERE name = ?", ("9223372036854775000", "meta.start_monotonic_ns")); d.commit()' "$tmp/late.db"
check report-offset-overflow 2 "^xpcorr report: --since/--until +OFFSET: $tmp/late.db starts at 9223372036854775000 ns (meta.start_monotonic_ns): no time after it fits in 64 bits$" -- \
	"$xpcorr" report --since +1s "$tmp/late.db"
check chrome-offset-overflow 1 "^xpcorr export: --since/--until +OFFSET: $tmp/late.db starts at 9223372036854775000 ns" -- \
	"$xpcorr" export --format chrome --until +1s "$tmp/late.db"
# chrome times count from the run's start by default, and are CLOCK_MONOTONIC with --absolute-time
"$xpcorr" export --format chrome "$gpurun" > "$tmp/rel.json" 2>/dev/null
"$xpcorr" export --format chrome --absolute-time "$gpurun" > "$tmp/abs.json" 2>/dev/null
python3 - "$tmp/rel.json" "$tmp/abs.json" <<'PY' && echo "ok   chrome-relative-time" || { echo "FAIL chrome-relative-time"; fail=1; }
import decimal, json, sys
rel, ab = (json.load(open(p), parse_float=decimal.Decimal) for p in sys.argv[1:])
base = rel["baseTimeNanoseconds"]
assert base > 0 and ab["baseTimeNanoseconds"] == 0, (base, ab["baseTimeNanoseconds"])
pairs = [(r["ts"], a["ts"]) for r, a in zip(rel["traceEvents"], ab["traceEvents"]) if r["ph"] != "M"]
assert pairs and all(int(r * 1000) + base == int(a * 1000) for r, a in pairs), pairs[:3]
PY
check native-needs-python-root 2 "--native is for --root python" -- \
	"$xpcorr" export --format folded --native "$gpurun"
check chrome-absolute-folded 2 "--absolute-time is for --format chrome" -- \
	"$xpcorr" export --format folded --absolute-time "$gpurun"
check nonempty-view-quiet 0 "" -- "$xpcorr" report --by kernel "$gpurun"
grep -q "nothing to show" "$tmp/err" && { echo "FAIL nonempty-view-quiet: says nothing to show"; fail=1; }
check diff-unknown-kernel 2 "no kernel named 'k_none' in either run" -- "$xpcorr" diff --normalize kernel=k_none "$run" "$run"
check diff-missing-run 2 "^xpcorr diff: $tmp/none: no such run directory$" -- "$xpcorr" diff "$run" "$tmp/none"
check diff-self 0 "" -- "$xpcorr" diff --weight cpu --format folded "$run" "$run"
# samples' stacks start at their outermost frame, not the thread's name (issue 39)
grep -q "^main;xp_run;xp_parse;xp_compute 6 6$" "$tmp/out" || { echo "FAIL diff folded cpu"; fail=1; }
check ls-missing 2 "^xpcorr ls: $tmp/none: no such directory$" -- "$xpcorr" ls "$tmp/none"
check ls-no-run 0 "^xpcorr ls: no run in $tmp/notarun" -- "$xpcorr" ls "$tmp/notarun"
check ls-usage 2 "" -- "$xpcorr" ls
# a command line with a bidi override (U+202E shows "gpt\u202ecod.exe" as
# "gptexe.doc") and a zero-width space: escaped in ls and info like controls
mkdir "$tmp/bidi" && cp -r "$run" "$tmp/bidi/r" && rm -f "$tmp/bidi/r/xpcorr.db"
python3 -c 'import json, sys
m = json.load(open(sys.argv[1])); m["command"] = ["gpt\u202ecod.exe", "a\u200bb"]
json.dump(m, open(sys.argv[1], "w"))' "$tmp/bidi/r/meta.json"
for cmd in ls info; do
	check "bidi-$cmd" 0 "" -- "$xpcorr" $cmd "$tmp/bidi/$([ $cmd = info ] && echo r)"
	if grep -q 'gpt\\xe2\\x80\\xaecod.exe a\\xe2\\x80\\x8bb' "$tmp/out" &&
	   python3 -c 'import sys; sys.exit("\u202e" in open(sys.argv[1], encoding="utf-8").read())' "$tmp/out"
	then echo "ok   bidi-$cmd: escaped"; else echo "FAIL bidi-$cmd: $(grep gpt "$tmp/out")"; fail=1; fi
done

# ls shows the git describe that xpcap took at record time (meta.json
# "git"), before and after ingest; ingest itself runs no git
repo="$tmp/repo"
mkdir -p "$repo" && cp "$exe" "$repo/xptarget" && (cd "$repo" && git init -q . && git add xptarget &&
	git -c user.name=t -c user.email=t@t commit -qm one && git tag v0.9) || { echo "FAIL git setup"; fail=1; }
mkdir "$tmp/runs" && cp -r "$run" "$tmp/runs/r1" && rm -f "$tmp/runs/r1/xpcorr.db"
python3 - "$tmp/runs/r1/meta.json" "$repo/xptarget" "$repo" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m["command"] = [sys.argv[2], "--steps", "3"]
m["git"] = {"describe": "v0.9-dirty", "dir": sys.argv[3]}
json.dump(m, open(sys.argv[1], "w"))
PY
check ls-not-ingested 0 "" -- "$xpcorr" ls "$tmp/runs"
grep -q "not ingested .* v0.9-dirty .*r1: $repo/xptarget --steps 3" "$tmp/out" || { echo "FAIL ls meta"; cat "$tmp/out"; fail=1; }
"$xpcorr" ingest --quiet "$tmp/runs/r1" 2>/dev/null
check ls-ingested 0 "" -- "$xpcorr" ls "$tmp/runs"
grep -q " v0.9-dirty .*r1: $repo/xptarget --steps 3" "$tmp/out" || { echo "FAIL ls git"; cat "$tmp/out"; fail=1; }
# a -p run names its processes, not "?"; an unreadable run is said, with
# no header above nothing (issue 43)
mkdir -p "$tmp/pruns/p1" "$tmp/bad/b1" && cp "$tmp/runs/r1/meta.json" "$tmp/pruns/p1/" &&
	echo '{' > "$tmp/bad/b1/meta.json"
python3 - "$tmp/pruns/p1/meta.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m["command"] = None; m["mode"] = "attach"
m["target_pids"] = [1234, 5678]
json.dump(m, open(sys.argv[1], "w"))
PY
check ls-attach 0 "" -- "$xpcorr" ls "$tmp/pruns"
grep -q "p1: -p 1234,5678$" "$tmp/out" || { echo "FAIL ls -p run"; cat "$tmp/out"; fail=1; }
check ls-bad-run 1 "^xpcorr: ls: $tmp/bad/b1/meta.json at line" -- "$xpcorr" ls "$tmp/bad"
[ -s "$tmp/out" ] && { echo "FAIL ls-bad-run: a header after the error"; cat "$tmp/out"; fail=1; }

# a received run whose program's checkout names a program in core.fsmonitor
# (the sender's .git): neither ingest nor info runs it
printf '#!/bin/sh\ntouch %s/FSMONITOR_RAN\n' "$tmp" > "$tmp/fsmon.sh" && chmod 755 "$tmp/fsmon.sh"
git -C "$repo" config core.fsmonitor "$tmp/fsmon.sh"
mkdir "$tmp/recv" && cp -r "$run" "$tmp/recv/r2" && rm -f "$tmp/recv/r2/xpcorr.db"
python3 - "$tmp/recv/r2/meta.json" "$repo/xptarget" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m["command"] = [sys.argv[2], "--steps", "3"]
json.dump(m, open(sys.argv[1], "w"))
PY
check fsmonitor-ingest 0 "" -- "$xpcorr" ingest --quiet "$tmp/recv/r2"
touch "$tmp/recv/r2/meta.json"
check fsmonitor-info 0 "" -- "$xpcorr" info "$tmp/recv/r2"
check fsmonitor-ls 0 "" -- "$xpcorr" ls "$tmp/recv"
if [ -e "$tmp/FSMONITOR_RAN" ]; then
	echo "FAIL fsmonitor-not-run: xpcorr ran the run's core.fsmonitor"; fail=1
else
	echo "ok   fsmonitor-not-run"
fi

# xpcorr.db that is no database file: info, report, export and diff do not
# hang on a FIFO or follow a link; they say so and ingest again
odd="$tmp/odd"
cp -r "$run" "$odd" && rm -f "$odd/xpcorr.db"
for cmd in info report export diff; do
	rm -f "$odd/xpcorr.db" && mkfifo "$odd/xpcorr.db"
	case $cmd in
	export) set -- export --format folded "$odd" ;;
	diff) set -- diff "$odd" "$odd" ;;
	*) set -- "$cmd" "$odd" ;;
	esac
	check "fifo-db-$cmd" 0 "xpcorr.db is a FIFO" -- timeout 30 "$xpcorr" "$@"
	[ -f "$odd/xpcorr.db" ] || { echo "FAIL fifo-db-$cmd: not replaced by a database"; fail=1; }
done
cp "$run/xpcorr.db" "$tmp/other.db" && cp "$tmp/other.db" "$tmp/other.copy"
rm -f "$odd/xpcorr.db" && ln -s "$tmp/other.db" "$odd/xpcorr.db" && touch -h "$odd/xpcorr.db"
check link-db 0 "xpcorr.db is a symbolic link" -- timeout 30 "$xpcorr" info "$odd"
if [ -L "$odd/xpcorr.db" ] || ! cmp -s "$tmp/other.db" "$tmp/other.copy"; then
	echo "FAIL link-db-replaced: the link is still there or its target changed"; fail=1
else
	echo "ok   link-db-replaced"
fi
rm -f "$odd/xpcorr.db" && mkdir "$odd/xpcorr.db"
check dir-db 1 "xpcorr.db" -- timeout 30 "$xpcorr" info "$odd"
[ "$(wc -l < "$tmp/err")" -le 2 ] || { echo "FAIL dir-db: more than a warning and an error"; fail=1; }
rmdir "$odd/xpcorr.db"
# a FIFO where SQLite looks for a hot journal: readers never open it
"$xpcorr" ingest --quiet "$odd" 2>/dev/null
mkfifo "$odd/xpcorr.db-journal"
check fifo-journal 0 "" -- timeout 30 "$xpcorr" report --format csv "$odd"
rm -f "$odd/xpcorr.db-journal"
mkfifo "$tmp/fifo.db"
check db-file-fifo 1 "fifo.db is a FIFO, not a database" -- timeout 30 "$xpcorr" report "$tmp/fifo.db"
# what a file given in place of a run is, not "schema version 0" (issue 43)
: > "$tmp/empty.db"
check db-file-empty 1 "^xpcorr: $tmp/empty.db is an empty file, not a database: give a run directory or its xpcorr.db$" -- \
	"$xpcorr" info "$tmp/empty.db"
check db-file-xpr 1 "^xpcorr: $run/cpu.xpr is a record stream of a run, not a database: give its run directory$" -- \
	"$xpcorr" report "$run/cpu.xpr"
check db-file-text 1 "^xpcorr: $run/meta.json is not a database (no SQLite header)" -- \
	"$xpcorr" export --format folded "$run/meta.json"

# Ctrl-C during an ingest: exit 1, the previous database untouched, no temp
# file. The big run is never ingested whole (14 s on 2 loaded cores): its
# previous database is the small run's, and each ingest is stopped as soon
# as its temporary file shows that it loads.
big="$tmp/big"
"$gen" bench "$exe" "$lib" "$big" 1000000 || exit 1
cp "$run/xpcorr.db" "$big/xpcorr.db" && cp "$big/xpcorr.db" "$tmp/before.db"
touch -d '+1 minute' "$big/cpu.xpr"
loading() {   # loading PID: wait until that ingest's temporary database exists
	for _ in $(seq 400); do
		ls "$big" | grep -q tmp- && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.025
	done
	return 1
}
# a background job of a script starts with SIGINT ignored (POSIX), and an
# ignored signal stays ignored (stopsig.h): the job gets SIGINT at its
# default, as a command in the foreground of a terminal has it
python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
	"$xpcorr" ingest --quiet "$big" 2>"$tmp/err" &
pid=$!
loading $pid || echo "note interrupted-ingest: no temporary file seen before the signal"
kill -INT $pid
wait $pid
status=$?
if [ $status = 1 ] && grep -q interrupted "$tmp/err" && cmp -s "$big/xpcorr.db" "$tmp/before.db" &&
   ! ls "$big" | grep -q tmp-; then
	echo "ok   interrupted-ingest"
else
	echo "FAIL interrupted-ingest: exit $status"; cat "$tmp/err"; ls "$big"; fail=1
fi

# the same in the background as the script starts it (SIGINT ignored): the
# ingest goes on, as a background job's should when Ctrl-C hits the
# terminal; a SIGTERM then stops it
"$xpcorr" ingest --quiet "$big" 2>"$tmp/err" &
pid=$!
loading $pid || echo "note ignored-interrupt: no temporary file seen before the signal"
kill -INT $pid
sleep 0.5
kill -0 $pid 2>/dev/null; alive=$?
kill -TERM $pid
wait $pid
status=$?
if [ $alive = 0 ] && [ $status = 1 ] && grep -q interrupted "$tmp/err" &&
   cmp -s "$big/xpcorr.db" "$tmp/before.db"; then
	echo "ok   ignored-interrupt"
else
	echo "FAIL ignored-interrupt: alive after SIGINT $alive, exit $status after SIGTERM"
	cat "$tmp/err"; fail=1
fi

# a killed ingest's temporary database goes with the next reader (here a
# report that needs no ingest), not only with the next ingest
"$xpcorr" ingest --quiet "$big" 2>/dev/null &
pid=$!
loading $pid
kill -KILL $pid; wait $pid 2>/dev/null
left=$(ls "$big" | grep tmp-)
touch -d '+2 minutes' "$big/xpcorr.db"     # fresh again: the report reads, does not ingest
check killed-ingest-report 0 "" -- "$xpcorr" report --format csv "$big"
if [ -n "$left" ] && ! ls "$big" | grep -q tmp-; then
	echo "ok   killed-ingest-temp-removed ($left)"
else
	echo "FAIL killed-ingest-temp-removed: '$left' then: $(ls "$big" | grep tmp-)"; fail=1
fi

# a temporary database still locked by its ingest is kept, whatever its pid
# says (an ingest in another pid namespace: no such pid here); a small run
# to ingest: what matters is the temporary file
small="$tmp/live" && cp -r "$run" "$small"
live="$small/xpcorr.db.tmp-4194000"
(exec 9>"$live" && flock 9 && exec sleep 60) &
holder=$!
for _ in $(seq 100); do [ -e "$live" ] && ! flock -n "$live" true && break; sleep 0.05; done
check live-temp-ingest 0 "" -- "$xpcorr" ingest --quiet "$small"
check live-temp-report 0 "" -- "$xpcorr" report --format csv "$small"
[ -e "$live" ] && echo "ok   live-temp-kept" || { echo "FAIL live-temp-kept: removed"; fail=1; }
kill $holder; wait $holder 2>/dev/null
check unlocked-temp-report 0 "" -- "$xpcorr" report --format csv "$small"
[ -e "$live" ] && { echo "FAIL unlocked-temp-removed: still there"; fail=1; } || echo "ok   unlocked-temp-removed"

# a read-only run with a stale database: read as it is, with one warning
ro="$tmp/ro"
cp -r "$run" "$ro" && "$xpcorr" ingest --quiet "$ro" && touch -d '+1 minute' "$ro/cpu.xpr" && chmod 555 "$ro"
as_user=""
if [ "$(id -u)" = 0 ]; then
	chmod 755 "$tmp"    # root ignores modes: read it as nobody
	as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
fi
for cmd in info report export; do
	[ $cmd = export ] && set -- export --format folded "$ro" || set -- $cmd "$ro"
	check "readonly-stale-$cmd" 0 "xpcorr: warning: .*/xpcorr.db is older than the run" -- \
		timeout 30 $as_user "$xpcorr" "$@"
	[ "$(wc -l < "$tmp/err")" = 1 ] || { echo "FAIL readonly-stale-$cmd: not one line"; cat "$tmp/err"; fail=1; }
done
grep -q "^xptarget;main;xp_run;xp_parse;xp_compute 6$" "$tmp/out" || { echo "FAIL readonly folded"; fail=1; }

# a run this user cannot write, never ingested (root's run, read by
# nobody; issue 43: "cannot create .../xpcorr.db" from every command): its
# database goes to the user's cache, said in one line, made 0700; ingest -o
# writes one where asked
ro2="$tmp/ro2" cache="$tmp/cache"
cp -r "$run" "$ro2" && rm -f "$ro2/xpcorr.db" && chmod 555 "$ro2" && mkdir -m 700 "$cache" &&
	{ [ -z "$as_user" ] || chown 65534:65534 "$cache"; }
for cmd in info report export; do
	[ $cmd = export ] && set -- export --format folded "$ro2" || set -- $cmd "$ro2"
	check "readonly-cache-$cmd" 0 "^xpcorr: $ro2 cannot be written here: reading its database from $cache/xpcorr/run-[0-9a-f]*\.db$" -- \
		timeout 30 env XDG_CACHE_HOME="$cache" $as_user "$xpcorr" "$@"
	[ "$(grep -c "cannot be written here" "$tmp/err")" = 1 ] || { echo "FAIL readonly-cache-$cmd: not one line"; cat "$tmp/err"; fail=1; }
done
grep -q "^xptarget;main;xp_run;xp_parse;xp_compute 6$" "$tmp/out" || { echo "FAIL readonly-cache folded"; fail=1; }
[ "$(ls "$cache/xpcorr" | wc -l)" = 1 ] && [ "$(stat -c %a "$cache/xpcorr")" = 700 ] &&
	[ ! -e "$ro2/xpcorr.db" ] || { echo "FAIL readonly-cache: one database, 0700"; ls -la "$cache/xpcorr" "$ro2"; fail=1; }
check readonly-ingest-o 0 "" -- timeout 30 $as_user "$xpcorr" ingest -q -o "$cache/mine.db" "$ro2"
check readonly-ingest-o-read 0 "" -- "$xpcorr" export --format folded "$cache/mine.db"
grep -q "^xptarget;main;xp_run;xp_parse;xp_compute 6$" "$tmp/out" || { echo "FAIL ingest -o folded"; fail=1; }
check readonly-ingest-plain 1 "cannot create $ro2/xpcorr.db" -- timeout 30 $as_user "$xpcorr" ingest -q "$ro2"
chmod 755 "$ro" "$ro2"
exit $fail
