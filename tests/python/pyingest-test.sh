#!/bin/sh
# pyingest-test.sh XPCORR LIB - end to end, Python frames from the walker to
# the report: every CPython 3.10-3.13 here (pyenv) runs pyframes_workload.py
# through the walker (LIB, as pyframes-test.sh does), and pyingest_check.py
# makes a run directory of what it wrote, ingests it with the real xpcorr
# and checks every Python line in the launch stacks (database and folded
# export) against Python's own, and where they were spliced. With 64 KiB
# stack copies the native unwind reaches the interpreter's frames and the
# Python frames go in their place; with frame-pointer walks (copy 0) it
# stops early and they stand above the gap frame. Launches that repeat one
# before name its copy (cupti/stackreuse.h): checked to get its
# native frames, and, with XPCAP_STACK_REUSE=0, never to happen.
#   PYTHONS="/path/python3.12 ..."  interpreters to run (default: pyenv's 3.10-3.13
#                                   and the system python3, a distribution's build)
set -u
xpcorr=$1 lib=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/pythons.sh"
fail=0
for py in $PYTHONS; do
	out=$tmp/$(echo "$py" | tr / _).xpr
	# copies naming earlier ones (the default), each copying, frame pointers
	for how in 65528:1 65528:0 0:1; do
		copy=${how%:*} reuse=${how#*:}
		rm -f "$out" "$out.expect.json" "$out.maps"
		if ! LD_PRELOAD=${XP_PYFRAMES_PRELOAD:-} XPT_COPY=$copy XPCAP_STACK_REUSE=$reuse \
				"$py" "$here/pyingest_workload.py" "$lib" "$out"; then
			echo "FAIL: $py: the workload failed (copy $copy, reuse $reuse)"
			fail=1
			continue
		fi
		XPT_COPY=$copy XPCAP_STACK_REUSE=$reuse \
			python3 "$here/pyingest_check.py" "$xpcorr" "$out" "$tmp/run" || fail=1
	done
done
exit $fail
