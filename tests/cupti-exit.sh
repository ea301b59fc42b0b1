#!/bin/sh
# cupti-exit.sh - the profiled program's exit never waits on the injection
# library's threads (issue 38): exit() inside a dlopen that loads
# libtorch_cpu (the loader lock held), and exit() while the launch-stack
# writer is stuck in write(), both end with the program's status at once.
#   cupti-exit.sh EXIT_CALLER LIBEXIT_CTOR
set -u
caller=$1 lib=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# run NAME LIMIT_S ENV...: the caller's status must be 3 within LIMIT_S
run() {
	name=$1 limit=$2
	shift 2
	rm -rf "$tmp/run" && mkdir "$tmp/run"
	t0=$(date +%s%N)
	env XPCAP_RUN_DIR="$tmp/run" XPCAP_LAUNCH_COPY=8192 "$@" >"$tmp/out" 2>&1
	rc=$?
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	if [ $rc = 3 ] && [ $ms -lt $((limit * 1000)) ]; then
		echo "ok   $name: status 3 in $ms ms"
	else
		echo "FAIL $name: status $rc after $ms ms (want 3 within $limit s; 124: hung)"
		cat "$tmp/out"
		fail=1
	fi
}

run "exit inside the dlopen of libtorch_cpu" 5 timeout 10 "$caller" dlopen "$lib"
run "the same with XPCAP_AUTOGRAD=0" 5 XPCAP_AUTOGRAD=0 timeout 10 "$caller" dlopen "$lib"
run "exit with the writer stuck in write()" 5 timeout 10 "$caller" stuck
exit $fail
