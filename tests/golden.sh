#!/bin/sh
# golden.sh - golden-file test of ingest, export and info on a deterministic
# synthetic run over the real fixture ELF files.
#   golden.sh XPCORR GEN_RUN FIXTURE_EXE FIXTURE_LIB GOLDEN_DIR [--regenerate]
# Fixture paths are replaced by @FIXTURE@ so the files do not depend on
# where the build directory is.
set -eu
xpcorr=$1 gen=$2 exe=$3 lib=$4 golden=$5 mode=${6:-compare}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fixdir=$(dirname "$exe")
fix() { sed -e "s|$fixdir|@FIXTURE@|g" -e "s|$tmp/run|@RUN@|g"; }

"$gen" golden "$exe" "$lib" "$tmp/run"
"$xpcorr" ingest --quiet "$tmp/run"
mkdir "$tmp/out"
"$xpcorr" export --format folded "$tmp/run" | fix > "$tmp/out/folded.txt"
"$xpcorr" export --format folded --root tid --no-kernel "$tmp/run" | fix > "$tmp/out/folded-tid-nokernel.txt"
"$xpcorr" export --format folded --root none --pid 2000 "$tmp/run" | fix > "$tmp/out/folded-pid2000.txt"
"$xpcorr" export --format folded --weight offcpu --root tid "$tmp/run" | fix > "$tmp/out/folded-offcpu.txt"
"$xpcorr" info "$tmp/run" | fix > "$tmp/out/info.txt"
"$xpcorr" info --format json "$tmp/run" | fix > "$tmp/out/info.json"
# a run without GPU work: the report is the CPU view by default (--by cpu), and
# --by source counts samples; csv's footer goes to stderr
for fmt in text csv json; do
	"$xpcorr" report --format $fmt --width 0 "$tmp/run" 2>/dev/null | fix > "$tmp/out/report-cpu.$fmt"
	"$xpcorr" report --by source --format $fmt --width 0 "$tmp/run" 2>/dev/null | fix \
		> "$tmp/out/report-source-cpu.$fmt"
done

# the SVG: well-formed XML, every folded frame drawn, and --input renders the same
"$xpcorr" export --format svg -o "$tmp/cpu.svg" "$tmp/run"
"$xpcorr" export --format folded "$tmp/run" > "$tmp/cpu.folded"
"$xpcorr" export --format svg --input "$tmp/cpu.folded" -o "$tmp/cpu2.svg"
cmp "$tmp/cpu.svg" "$tmp/cpu2.svg"
python3 - "$tmp/cpu.svg" "$tmp/cpu.folded" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
# a frame's name: its title up to the last " (", where the counts start
names = {g.find('{http://www.w3.org/2000/svg}title').text.rsplit(' (', 1)[0]
         for g in root.iter('{http://www.w3.org/2000/svg}g') if g.get('class') == 'f'}
want = {f for line in open(sys.argv[2]) for f in line.rsplit(' ', 1)[0].split(';')}
missing = want - names
assert not missing, f"frames missing from the SVG: {missing}"
assert 'xp::Widget::draw(int)' in names
PY

if [ "$mode" = --regenerate ]; then
	cp "$tmp"/out/* "$golden/"
	echo "golden files written to $golden; review them with git diff"
	exit 0
fi
status=0
for f in "$tmp"/out/*; do
	diff -u "$golden/$(basename "$f")" "$f" || status=1
done
exit $status
