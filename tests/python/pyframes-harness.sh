#!/bin/sh
# pyframes-harness.sh PYTHON OUTFILE - runs tests/python/pyframes_workload.py
# under PYTHON through the injection library's frame walker (no GPU): writes
# OUTFILE (records as in a run's launch-PID.xpr: PYINFO, LAUNCH + PYSTACK,
# PYCODE, LOST) and OUTFILE.expect.json (per launch: correlation id and the
# frames Python reported, [file, qualname, line] innermost first).
#   XP_PYFRAMES_LIB  the test library (default build/tests/python/libxpc-pyframes-test.so)
#   XPT_COPY         stack bytes per launch record (default 0: frame-pointer walk)
set -eu
if [ $# -ne 2 ]; then
	echo "usage: pyframes-harness.sh PYTHON OUTFILE" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
lib=${XP_PYFRAMES_LIB:-$here/../../build/tests/python/libxpc-pyframes-test.so}
rm -f "$2" "$2.expect.json"
exec "$1" "$here/pyframes_workload.py" "$lib" "$2"
