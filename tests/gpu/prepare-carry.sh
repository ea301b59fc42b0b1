#!/bin/sh
# prepare-carry.sh BUILD DEST - copy what the tests/gpu/*-device.sh scripts
# need into DEST (the device tool ships a git-ignored folder such as
# .devcarry/e2e): xpcap, xpcorr and libxpcupti.so of BUILD (a build made with
# -Dstatic_bpf=true: libbpf, libelf and zlib inside xpcap), the workload, and
# lib/ with the shared libraries xpcorr needs that the GPU machine may lack
# (device-env.sh runs xpcorr with LD_LIBRARY_PATH=DEST/lib).
#   meson setup build-static -Dstatic_bpf=true && ninja -C build-static
#   sh tests/gpu/prepare-carry.sh build-static .devcarry/e2e
set -e
B=$1; DEST=$2; S=$(dirname "$0")
mkdir -p "$DEST/lib"
cp "$B/bin/xpcap" "$B/bin/xpcorr" "$B/cupti/libxpcupti.so" "$B/tests/gpu/workload" "$DEST/"
# every library xpcorr loads but libc's own and the loader
ldd "$B/bin/xpcorr" | awk '$3 ~ /^\// {print $3}' |
	grep -v -E '/(libc|libm|libgcc_s|libstdc\+\+|ld-linux[^/]*)\.so' |
	while read -r lib; do cp -L "$lib" "$DEST/lib/"; done
cp "$S/check-workload" "$S/torch-loop.py" "$S/device-test.sh" "$DEST/"
