#!/bin/sh
# chrome.sh - `xpcorr export --format chrome` on the real H100 fixtures: each
# raw run is ingested here and its trace compared with tests/golden/ (the
# whole CUDA workload; a 1 ms window of the PyTorch loop, which cuts with
# --since/--until), then --pid, the window, the size warning and bad
# arguments are checked against the database with chrome-check.py.
#   chrome.sh XPCORR FIXTURES_DIR GOLDEN_DIR [--regenerate]
set -eu
xpcorr=$1 fixtures=$2 golden=$3 mode=${4:-compare}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/out"

# The recorded files only, ingested here with an empty --symfs: frame names
# must not depend on which libraries this machine happens to have.
mkdir "$tmp/nosym"
raw_run() {   # raw_run FIXTURE DIR
	mkdir "$2"
	for f in "$fixtures/$1"/*.xpr "$fixtures/$1"/meta.json "$fixtures/$1"/perf-*.map; do
		[ -e "$f" ] && cp "$f" "$2/"
	done
	"$xpcorr" ingest --quiet --symfs "$tmp/nosym" "$2"
}

raw_run h100-workload "$tmp/wl"
"$xpcorr" export --format chrome -o "$tmp/out/chrome-h100-workload.json" "$tmp/wl"

raw_run h100-torch "$tmp/torch"
# the window: 1 ms of the loop, from the start of its middle kernel
since=$(python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute("SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start LIMIT 1 OFFSET"
                 " (SELECT count(*) / 2 FROM CUPTI_ACTIVITY_KIND_KERNEL)").fetchone()[0])' \
	"$tmp/torch/xpcorr.db")
until=$((since + 1000000))
"$xpcorr" export --format chrome --since "$since" --until "$until" "$tmp/torch" \
	> "$tmp/out/chrome-h100-torch-1ms.json"

if [ "$mode" = --regenerate ]; then
	cp "$tmp"/out/* "$golden/"
	echo "chrome golden files written to $golden; review them with git diff"
	exit 0
fi
status=0
for f in "$tmp"/out/*; do
	if ! cmp -s "$golden/$(basename "$f")" "$f"; then
		echo "FAIL $(basename "$f") differs from the golden file:"
		diff -u "$golden/$(basename "$f")" "$f" | head -40
		status=1
	fi
done

# the whole traces, then the options, against the database
python3 "$here/chrome-check.py" trace "$tmp/wl/xpcorr.db" "$tmp/out/chrome-h100-workload.json" || status=1
python3 "$here/chrome-check.py" trace "$tmp/torch/xpcorr.db" "$tmp/out/chrome-h100-torch-1ms.json" \
	"$since" "$until" || status=1
"$xpcorr" export --format chrome --pid 436 -o "$tmp/pid.json" "$tmp/wl"
python3 "$here/chrome-check.py" pid "$tmp/wl/xpcorr.db" "$tmp/pid.json" 436 || status=1

# the size warning, with the limit lowered; none below it
XPCORR_CHROME_WARN_BYTES=1000 "$xpcorr" export --format chrome -o "$tmp/w.json" "$tmp/wl" 2> "$tmp/err"
if ! grep -q "warning: $tmp/w.json: the trace is 0.00 GB; the Perfetto UI loads about 1 GB" "$tmp/err"; then
	echo "FAIL no size warning past XPCORR_CHROME_WARN_BYTES: $(cat "$tmp/err")"; status=1
fi
"$xpcorr" export --format chrome -o "$tmp/w.json" "$tmp/wl" 2> "$tmp/err"
if [ -s "$tmp/err" ]; then
	echo "FAIL unexpected output on stderr: $(cat "$tmp/err")"; status=1
fi

# bad arguments: usage errors (2), one line naming the option
for args in "--since 12x" "--until -5" "--pid abc"; do
	rc=0
	# shellcheck disable=SC2086
	"$xpcorr" export --format chrome $args "$tmp/wl" > /dev/null 2> "$tmp/err" || rc=$?
	if [ $rc != 2 ] || ! grep -q "expected a number" "$tmp/err"; then
		echo "FAIL export --format chrome $args: exit $rc, $(cat "$tmp/err")"; status=1
	fi
done
rc=0
"$xpcorr" export --format folded --since 5 "$tmp/wl" > /dev/null 2> "$tmp/err" || rc=$?
if [ $rc != 2 ] || ! grep -q "are for --format chrome" "$tmp/err"; then
	echo "FAIL export --format folded --since: exit $rc, $(cat "$tmp/err")"; status=1
fi
# a write error is reported, not hidden
if [ -w /dev/full ]; then
	rc=0
	"$xpcorr" export --format chrome -o /dev/full "$tmp/wl" 2> "$tmp/err" || rc=$?
	if [ $rc != 1 ] || ! grep -q "No space left on device" "$tmp/err"; then
		echo "FAIL export to /dev/full: exit $rc, $(cat "$tmp/err")"; status=1
	fi
fi
[ $status = 0 ] && echo "ok chrome: golden files, --pid, --since/--until, size warning, errors"
exit $status
