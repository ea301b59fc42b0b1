#!/bin/sh
# rank-alone.sh - one rank of a DDP job recorded alone: --by rank's empty
# spread table says that waits for other ranks need the other ranks' runs
# (issue 43); a job with both ranks says nothing of the kind.
#   rank-alone.sh XPCORR FIXTURES_DIR
set -eu
xpcorr=$1 fixtures=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unxz() { python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$@"; }
unxz "$fixtures/h100x2-ddp-nccl/device.db.xz" "$tmp/ddp.db"
unxz "$fixtures/h100x2-tp/device.db.xz" "$tmp/tp2.db"
status=0
"$xpcorr" report --by rank "$tmp/ddp.db" > "$tmp/ddp.txt"
if grep -q "1 of the job's 2 ranks recorded here: .*need their runs" "$tmp/ddp.txt"; then
	echo "ok   one rank alone: the note"
else
	echo "FAIL one rank of two recorded alone, no word of the other rank's run:"; cat "$tmp/ddp.txt"; status=1
fi
"$xpcorr" report --by rank "$tmp/tp2.db" > "$tmp/tp2.txt"
if grep -q "ranks recorded here" "$tmp/tp2.txt"; then
	echo "FAIL both ranks recorded, yet the note:"; cat "$tmp/tp2.txt"; status=1
else
	echo "ok   both ranks: no note"
fi
exit $status
