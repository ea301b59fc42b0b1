#!/bin/sh
# ingest-progress.sh - on a terminal, `xpcorr ingest` shows how far it read
# and then names each step after the reading (indexing, correlating...),
# which moves no byte counter and on a large run takes as long as the
# reading: script(1) gives it a terminal.
#   ingest-progress.sh XPCORR GEN_RUN FIXTURE_EXE FIXTURE_LIB
set -u
xpcorr=$1 gen=$2 exe=$3 lib=$4
if ! command -v script >/dev/null; then
	echo "SKIP no script(1) to give ingest a terminal (apt-get install bsdutils)"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$gen" golden "$exe" "$lib" "$tmp/run" || exit 1
script -qec "$xpcorr ingest $tmp/run" /dev/null </dev/null >"$tmp/tty" 2>&1 || {
	echo "FAIL ingest on a terminal:"; cat "$tmp/tty"; exit 1; }
tr '\r' '\n' <"$tmp/tty" >"$tmp/lines"
fail=0
for step in "ingesting  *[0-9]*%: reading tasks" "ingesting 100%: reading" "ingesting: indexing" \
	    "ingesting: correlating GPU work" "ingesting: writing the database"; do
	grep -q "xpcorr: $step" "$tmp/lines" || { echo "FAIL no '$step'"; fail=1; }
done
# and off a terminal, none of it
"$xpcorr" ingest "$tmp/run" 2>"$tmp/err" >/dev/null
grep -q "ingesting" "$tmp/err" && { echo "FAIL progress off a terminal:"; cat "$tmp/err"; fail=1; }
[ $fail = 0 ] && echo "ok   ingest names its steps on a terminal, and is quiet off one" ||
	{ echo "what it showed:"; cat -v "$tmp/lines"; }
exit $fail
