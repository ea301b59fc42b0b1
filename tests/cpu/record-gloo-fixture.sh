#!/bin/sh
# record-gloo-fixture.sh - records fixtures/cpu-gloo: a CPU-only job of two
# gloo ranks (tests/cpu/straggler_gloo.py, rank 1 the straggler) in one
# xpcap record, as a launcher under it would start them; ingests it and
# keeps the database. Needs torch with gloo in PYTHON (default Debian's
# /usr/bin/python3 with apt-get install python3-torch) and root (eBPF, DWARF stacks: libtorch and
# Debian's python3 have no frame pointers).
#   [PYTHON=python3] tests/cpu/record-gloo-fixture.sh [BUILD_DIR]     # default build
set -e
here=$(dirname "$(realpath "$0")")
top=$(realpath "$here/../..")
build=$(realpath "${1:-$top/build}")
py=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/launch.sh" <<EOS
#!/bin/sh
export MASTER_ADDR=127.0.0.1 MASTER_PORT=\${MASTER_PORT:-29541} WORLD_SIZE=2
RANK=0 $py "$here/straggler_gloo.py" & a=\$!
RANK=1 $py "$here/straggler_gloo.py" & b=\$!
wait \$a && wait \$b
EOS
chmod +x "$tmp/launch.sh"
"$build/bin/xpcap" record -q --call-graph dwarf -o "$tmp/run" -- "$tmp/launch.sh"
"$build/bin/xpcorr" ingest -q "$tmp/run"
mkdir -p "$top/fixtures/cpu-gloo"
xz -9 -c "$tmp/run/xpcorr.db" > "$top/fixtures/cpu-gloo/device.db.xz"
ls -l "$top/fixtures/cpu-gloo"
