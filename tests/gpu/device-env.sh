# device-env.sh - what every tests/gpu/*-device.sh starts with, sourced:
#   . "$(dirname "$(realpath "$0")")/device-env.sh" NAME [plain]
# C the carried binaries (CARRY, default .devcarry/e2e), OUT the results
# folder (default /tmp/xp-NAME-out), R a fresh scratch folder /tmp/xp-NAME,
# G tests/gpu; all output to OUT/NAME-device.log, through tee (the device
# tool shows it as it comes) unless "plain": a bare `wait` would also wait
# for the tee, which never ends, so scripts that wait name their pids.
# X is xpcorr with the carried libraries (lib/), q DB SQL prints rows.
set -u
C=$(realpath "${CARRY:-.devcarry/e2e}")
OUT=${OUT:-/tmp/xp-$1-out}
R=/tmp/xp-$1
G=$(dirname "$(realpath "$0")")
rm -rf "$R"; mkdir -p "$R" "$OUT"
if [ "${2:-}" = plain ]; then
	exec > "$OUT/$1-device.log" 2>&1
else
	exec > >(tee "$OUT/$1-device.log") 2>&1
fi
X="$R/xpcorr"
printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$C/lib" "$C/xpcorr" > "$X"; chmod +x "$X"
q() { python3 -c "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); [print('|'.join(map(str,r))) for r in d.execute(sys.argv[2])]" "$1" "$2"; }
