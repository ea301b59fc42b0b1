#!/bin/sh
# prepare-carry.sh BUILD DEST - copy what device-test.sh needs into DEST
# (the device tool ships a git-ignored folder such as .devcarry/cupti).
# xpcorr is relinked statically so the device needs no matching libc.
set -e
B=$1; DEST=$2; S=$(dirname "$0")
mkdir -p "$DEST"
cp "$B/cupti/libxpcupti.so" "$B/tests/gpu/workload" "$DEST/"
cc -static -o "$DEST/xpcorr" "$B"/bin/xpcorr.p/xpcorr.c.o \
	"$B"/cmd/libxpcmd.a "$B"/cmd/libxpcmd-core.a "$B"/export/libxpexport.a \
	"$B"/ingest/libxpingest.a "$B"/correlate/libxpcorrelate.a "$B"/db/libxpdb.a \
	"$B"/src/libxpmeta.a "$B"/src/libxpcommon.a
cp "$S/check-workload" "$S/torch-loop.py" "$S/device-test.sh" "$DEST/"
