#!/bin/sh
# test-cupti-exports.sh LIB - libxpcupti.so exports exactly InitializeInjection,
# xpcap_correlation_marker and InitializeInjectionNvtx2 (NVTX forwarder), and the marker starts with one 5-byte nop
# (0f 1f 44 00 00), which lets the kernel optimize xpcap's uprobe on it.
lib=$1
fail=0
syms=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort | tr '\n' ' ')
if [ "$syms" != "InitializeInjection InitializeInjectionNvtx2 xpcap_correlation_marker " ]; then
	echo "FAIL: $lib exports: $syms"
	fail=1
fi
first=$(objdump -d --disassemble=xpcap_correlation_marker "$lib" |
	awk '/^ *[0-9a-f]+:\t/ {print; exit}')
bytes=$(printf '%s\n' "$first" | cut -f2 | tr -s ' ' | sed 's/ *$//')
if [ "$bytes" != "0f 1f 44 00 00" ]; then
	echo "FAIL: first instruction of the marker is not a 5-byte nop: $first"
	fail=1
fi
needed=$(readelf -d "$lib" | awk '/NEEDED/ {print $5}' | tr -d '[]' | sort | tr '\n' ' ')
case "$needed" in
*libcupti.so.13*) ;;
*) echo "FAIL: not linked against libcupti.so.13: $needed"; fail=1 ;;
esac
for n in $needed; do
	case "$n" in
	libcupti.so.13|libc.so.6|libpthread.so.0|ld-linux-x86-64.so.2) ;;
	*) echo "FAIL: unexpected dependency $n"; fail=1 ;;
	esac
done
[ $fail = 0 ] && echo "ok: exports [$syms], marker starts with [$bytes], needs [$needed]"
exit $fail
