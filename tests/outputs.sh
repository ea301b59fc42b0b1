#!/bin/sh
# outputs.sh - every command's -o FILE (report, export, diff; merge's -o is
# a job directory, tested in merge.sh): never one of its inputs (a run's
# xpcorr.db or another file of the run, by any path or link, a database
# given as a file, export's --input), and written whole or not at all (a
# temporary file in FILE's directory, renamed when the command succeeds).
#   outputs.sh XPCORR GEN_RUN FIXTURE_EXE FIXTURE_LIB
set -u
xpcorr=$1 gen=$2 exe=$3 lib=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
say() { echo "$1"; case $1 in FAIL*) fail=1 ;; esac; }
check() {   # check NAME STATUS PATTERN -- command
	name=$1 want=$2 pattern=$3
	shift 4
	"$@" >/dev/null 2>"$tmp/err"
	got=$?
	if [ "$got" = "$want" ] && { [ -z "$pattern" ] || grep -q -- "$pattern" "$tmp/err"; } && [ "$(wc -l <"$tmp/err")" -le 2 ]
	then say "ok   $name"
	else say "FAIL $name: exit $got (want $want): $(cat "$tmp/err")"; fi
}
# the run's database is still a database, of the same size and content
intact() {  # intact NAME
	if cmp -s "$run/xpcorr.db" "$tmp/db.orig"; then say "ok   $1: the database is intact"
	else say "FAIL $1: the database changed ($(stat -c %s "$run/xpcorr.db") bytes, $(head -c 20 "$run/xpcorr.db" | od -c | head -1))"; fi
}

run="$tmp/run"
"$gen" scale "$exe" "$lib" "$run" 2000 >/dev/null || exit 1
"$xpcorr" ingest --quiet "$run" || exit 1
cp "$run/xpcorr.db" "$tmp/db.orig"
cp "$run/meta.json" "$tmp/meta.orig"
ln -s "$run/xpcorr.db" "$tmp/db-link"
ln "$run/xpcorr.db" "$tmp/db-hard"

# onto the run's database: by its path, through the run's database given
# as a file, a symbolic link, a hard link; each refused before writing
check report-onto-db 2 "xpcorr report: -o $run/xpcorr.db is $run/xpcorr.db, a file of the input run $run" -- \
	"$xpcorr" report -o "$run/xpcorr.db" "$run"
intact report-onto-db
check report-onto-db-file 2 "xpcorr report: -o $run/xpcorr.db is the input $run/xpcorr.db" -- \
	"$xpcorr" report -o "$run/xpcorr.db" "$run/xpcorr.db"
check report-onto-link 2 "is $run/xpcorr.db, a file of the input run" -- \
	"$xpcorr" report -o "$tmp/db-link" "$run"
check report-onto-hard-link 2 "is $run/xpcorr.db, a file of the input run" -- \
	"$xpcorr" report --format csv -o "$tmp/db-hard" "$run"
check report-onto-dotted 2 "a file of the input run" -- \
	"$xpcorr" report -o "$run/../run/./xpcorr.db" "$run/"
intact report-onto-link
for fmt in folded svg chrome; do
	check "export-$fmt-onto-db" 2 "xpcorr export: -o $run/xpcorr.db is $run/xpcorr.db, a file of the input run" -- \
		"$xpcorr" export --format $fmt -o "$run/xpcorr.db" "$run"
done
intact export-onto-db
# another file of the run: its streams and metadata are inputs too
check export-onto-meta 2 "is $run/meta.json, a file of the input run" -- \
	"$xpcorr" export --format folded -o "$run/meta.json" "$run"
check export-onto-stream 2 "is $run/cpu.xpr, a file of the input run" -- \
	"$xpcorr" export --format chrome -o "$run/cpu.xpr" "$run"
cmp -s "$run/meta.json" "$tmp/meta.orig" && say "ok   meta.json intact" || say "FAIL meta.json changed"
# diff: either run
check diff-onto-new 2 "xpcorr diff: -o $run/xpcorr.db is $run/xpcorr.db" -- \
	"$xpcorr" diff -o "$run/xpcorr.db" "$tmp/db.orig" "$run"
check diff-onto-base 2 "xpcorr diff: -o $tmp/db.orig is the input $tmp/db.orig" -- \
	"$xpcorr" diff --format csv -o "$tmp/db.orig" "$tmp/db.orig" "$run"
intact diff-onto-db
# export --input: the folded file it reads
"$xpcorr" export --format folded -o "$tmp/cpu.folded" "$run" 2>/dev/null
cp "$tmp/cpu.folded" "$tmp/folded.orig"
check svg-onto-input 2 "xpcorr export: -o $tmp/cpu.folded is the input $tmp/cpu.folded" -- \
	"$xpcorr" export --format svg --input "$tmp/cpu.folded" -o "$tmp/cpu.folded"
cmp -s "$tmp/cpu.folded" "$tmp/folded.orig" && [ -s "$tmp/cpu.folded" ] &&
	say "ok   --input intact" || say "FAIL --input changed"

# a new file inside the run directory is no input: written
check report-new-file-in-run 0 "" -- "$xpcorr" report -o "$run/report.txt" "$run"
grep -q "CUDA GPU Kernel Summary" "$run/report.txt" && say "ok   report into the run directory" ||
	say "FAIL report into the run directory: $(head -3 "$run/report.txt")"

# written whole or not at all: a failed export leaves the file as it was
# (here: a window with nothing in it), and no temporary file behind
echo "previous trace" >"$tmp/trace.json"
check failed-export-keeps 1 "no event starts in the --since/--until window" -- \
	"$xpcorr" export --format chrome --since +100000s -o "$tmp/trace.json" "$run"
[ "$(cat "$tmp/trace.json")" = "previous trace" ] && say "ok   a failed export left the old file" ||
	say "FAIL a failed export changed the file: $(head -c 100 "$tmp/trace.json")"
check failed-export-new 1 "no event starts" -- \
	"$xpcorr" export --format chrome --since +100000s -o "$tmp/none.json" "$run"
[ ! -e "$tmp/none.json" ] && say "ok   a failed export made no file" || say "FAIL a failed export left $tmp/none.json"
ls -a "$tmp" | grep -q '\.tmp$' && say "FAIL a temporary file was left: $(ls -a "$tmp")" ||
	say "ok   no temporary file left"
# success replaces the file, keeping its mode; a link to a device is written in place
chmod 640 "$tmp/trace.json"
check export-replaces 0 "" -- "$xpcorr" export --format chrome -o "$tmp/trace.json" "$run"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/trace.json" && [ "$(stat -c %a "$tmp/trace.json")" = 640 ] &&
	say "ok   the export replaced the file, mode kept" || say "FAIL export -o: $(stat -c %a "$tmp/trace.json")"
check report-dev-stdout 0 "" -- "$xpcorr" report -o /dev/stdout "$run"
"$xpcorr" report -o /dev/stdout "$run" 2>/dev/null | grep -q "CUDA GPU Kernel Summary" &&
	say "ok   -o /dev/stdout written in place" || say "FAIL -o /dev/stdout"
# a file one may write in a directory one may not (as a normal user):
# written in place, as before the temporary files
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chmod 755 "$tmp" && chmod -R a+rX "$run" && mkdir -m 555 "$tmp/ro" && cp "$tmp/trace.json" "$tmp/ro/t.json" 2>/dev/null
	chmod 666 "$tmp/ro/t.json"
	check ro-dir-in-place 0 "" -- setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$xpcorr" report -o "$tmp/ro/t.json" "$run/xpcorr.db"
	grep -q "CUDA GPU Kernel Summary" "$tmp/ro/t.json" && say "ok   written in place in a read-only directory" ||
		say "FAIL read-only directory: $(head -c 100 "$tmp/ro/t.json")"
else
	echo "skip: the read-only directory check needs root and setpriv (to write as nobody)"
fi
exit $fail
