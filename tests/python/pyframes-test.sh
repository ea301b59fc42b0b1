#!/bin/sh
# pyframes-test.sh LIB [PYEMBED|none] - the CI test of the Python frame
# walker: every CPython 3.10-3.13 here (pyenv, and the system python3) runs
# pyframes_workload.py through it; pyframes_check.py compares each recorded
# frame's file, qualified name and line with what Python reported. PYEMBED
# (pyembed.c) runs it once more in a static interpreter that exports nothing.
#   XP_PYFRAMES_PRELOAD=libasan.so  preloaded into the interpreters (a sanitized LIB)
#   PYTHONS="/path/python3.12 ..."  interpreters to run (default: pyenv's 3.10-3.13,
#                                   /usr/bin/python3, and pyenv's 3.9 when there, which
#                                   the walker must refuse); a missing 3.10-3.13 fails
set -u
lib=$1
embed=${2:-none}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/pythons.sh"
if [ -n "${pythons_default:-}" ]; then
	# a minor the walker does not know: it must take nothing and say so
	old=$(ls -d "$root"/3.9.* 2>/dev/null | sort -V | tail -n 1)
	[ -n "$old" ] && PYTHONS="$PYTHONS $old/bin/python3"
fi
fail=0
for py in $PYTHONS; do
	out=$tmp/$(echo "$py" | tr / _).xpr
	for copy in 0 65528; do
		if ! LD_PRELOAD=${XP_PYFRAMES_PRELOAD:-} XP_PYFRAMES_LIB=$lib XPT_COPY=$copy \
				"$here/pyframes-harness.sh" "$py" "$out"; then
			echo "FAIL: $py: the workload failed (copy $copy)"
			fail=1
			continue
		fi
		"$py" "$here/pyframes_check.py" "$out" || fail=1
		rm -f "$out" "$out.expect.json"
	done
done
if [ "$embed" != none ]; then
	out=$tmp/embed.xpr
	if ! "$embed" "$here/pyframes_workload.py" "$out"; then
		echo "FAIL: $embed: the workload failed"
		fail=1
	elif ! /usr/bin/python3 "$here/pyframes_check.py" "$out"; then
		fail=1
	fi
else
	echo "note: no static libpython here: the .symtab lookup is not tested"
fi
exit $fail
