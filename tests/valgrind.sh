#!/bin/sh
# valgrind.sh - the ingest path under valgrind's memcheck: xpcorr ingest,
# info, report and dump of the real H100 run (fixtures/h100-workload) and of
# a CPU-only run (gen-run's), then ingest's error path on a damaged copy.
# Any memory error or definite leak fails.
#   valgrind.sh XPCORR GEN_RUN FIXTURE_EXE FIXTURE_LIB FIXTURE_DIR
set -u
xpcorr=$1 gen=$2 exe=$3 lib=$4 fixture=$5
if ! command -v valgrind >/dev/null; then
	echo "SKIP: valgrind not installed (scripts/quickstart installs it)"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
vg() {   # vg WANT_STATUS ARGS... : xpcorr under memcheck
	want=$1
	shift
	valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
		--log-file="$tmp/vg.log" "$xpcorr" "$@" >/dev/null 2>"$tmp/err"
	got=$?
	if [ "$got" != "$want" ] || [ -s "$tmp/vg.log" ]; then
		echo "FAIL xpcorr $*: exit $got (want $want; 99: valgrind found errors)"
		cat "$tmp/vg.log" "$tmp/err"
		fail=1
	else
		echo "ok   xpcorr $*"
	fi
}

mkdir "$tmp/gpu"
cp "$fixture"/cpu.xpr "$fixture"/gpu-*.xpr "$fixture"/meta.json "$tmp/gpu/"
"$gen" golden "$exe" "$lib" "$tmp/cpu" >/dev/null || exit 1
for run in "$tmp/gpu" "$tmp/cpu"; do
	vg 0 ingest "$run"
	vg 0 info "$run"
	vg 0 report "$run"
	vg 0 report --format json "$run"
	vg 0 dump "$run"
done
# the error path frees what it built, too
cp -r "$tmp/gpu" "$tmp/bad"
truncate -s 20000 "$tmp/bad/cpu.xpr"
vg 0 ingest "$tmp/bad"
vg 1 ingest --strict "$tmp/bad"
printf 'garbage!' | dd of="$tmp/bad/cpu.xpr" bs=1 conv=notrunc 2>/dev/null
vg 1 ingest "$tmp/bad"
exit $fail
