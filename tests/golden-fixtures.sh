#!/bin/sh
# golden-fixtures.sh - golden files of the GPU-weighted exports, diff and ls
# on the real H100 fixtures (their databases, made on the GPU machine), and
# checks that a diff against a copy with known changes reports exactly them.
#   golden-fixtures.sh XPCORR FIXTURES_DIR GOLDEN_DIR [--regenerate]
# The "new" run is the workload fixture changed by SQL: k_alpha 3x slower,
# k_beta gone, k_driver renamed k_new, sampled at 99 Hz instead of 999.
set -eu
xpcorr=$1 fixtures=$2 golden=$3 mode=${4:-compare}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/out" "$tmp/archive" "$tmp/archive/a" "$tmp/archive/b" "$tmp/archive/c"
cp "$fixtures/h100-workload/device.db" "$tmp/workload.db"
python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
	"$fixtures/h100-torch/device.db.xz" "$tmp/torch.db"
python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
	"$fixtures/h100-torch-1024/device.db.xz" "$tmp/torch-1024.db"
python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
	"$fixtures/h100-torch-inproc/device.db.xz" "$tmp/inproc.db"
unset COLUMNS     # text fits 120 columns when not on a terminal
python3 - "$tmp/workload.db" "$tmp/changed.db" <<'PY'
import shutil, sqlite3, sys
shutil.copy(sys.argv[1], sys.argv[2])
c = sqlite3.connect(sys.argv[2])
sid = lambda v: c.execute("SELECT id FROM StringIds WHERE value = ?", (v,)).fetchone()[0]
c.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start + 3 * (end - start) WHERE demangledName = ?",
          (sid("k_alpha(float*, int)"),))
c.execute("DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE demangledName = ?", (sid("k_beta(float*, int)"),))
c.execute("INSERT INTO StringIds(id, value) VALUES ((SELECT max(id) + 1 FROM StringIds), 'k_new(float*, int)')")
c.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = ? WHERE demangledName = ?",
          (sid("k_new(float*, int)"), sid("k_driver(float*, int)")))
c.execute("UPDATE META_DATA_EXPORT SET value = '99' WHERE name = 'meta.sample_frequency_hz'")
c.commit()
PY

cd "$tmp"
# CPU: one thread (the whole run is 480 KB of unresolved libcupti frames)
"$xpcorr" export --format folded --weight cpu --root tid --tid 439 workload.db > out/workload-cpu-tid439.folded
for w in gpu api; do
	"$xpcorr" export --format folded --weight $w workload.db > out/workload-$w.folded
done
"$xpcorr" export --format folded --weight gpu --root tid --exact-only workload.db > out/workload-gpu-tid-exact.folded
"$xpcorr" export --format svg --weight gpu -o out/workload-gpu.svg workload.db
# recorded without --off-cpu: an empty graph that says why
"$xpcorr" export --format folded --weight offcpu workload.db > offcpu.folded 2> offcpu.err
[ ! -s offcpu.folded ] && grep -q "record with 'xpcap record --off-cpu'" offcpu.err
for w in gpu api; do
	"$xpcorr" export --format folded --weight $w torch.db > out/torch-$w.folded
done
"$xpcorr" diff workload.db changed.db > out/diff.txt 2> diff.err
"$xpcorr" diff --format csv --top 0 workload.db changed.db > out/diff.csv 2> diff-csv.err
"$xpcorr" diff --normalize kernel=k_thread --top 5 workload.db changed.db > out/diff-normalized.txt
"$xpcorr" diff --format folded workload.db changed.db > out/diff.folded 2>/dev/null
"$xpcorr" diff --format svg -o out/diff.svg workload.db changed.db 2>/dev/null
# two real runs: the same PyTorch loop on 256x256 and on 1024x1024 tensors
"$xpcorr" diff --top 6 torch.db torch-1024.db > out/diff-torch-size.txt
"$xpcorr" diff --format csv --top 0 torch.db torch-1024.db > diff-torch-size.csv
# the edges: every row in csv and json unless --top, text fits the terminal
# (120 columns off a terminal, --width), stacks named as report names them
"$xpcorr" diff --format json workload.db changed.db > diff.json 2>/dev/null
"$xpcorr" diff --format csv workload.db changed.db > diff-notop.csv 2>/dev/null
cmp diff-notop.csv out/diff.csv
"$xpcorr" diff torch.db torch-1024.db > diff-120.txt
"$xpcorr" diff --width 80 torch.db torch-1024.db > diff-80.txt
"$xpcorr" diff --width 0 torch.db torch-1024.db > diff-whole.txt
"$xpcorr" diff --top 0 torch.db inproc.db > diff-lines.txt 2>/dev/null
"$xpcorr" diff --format json torch.db inproc.db > diff-lines.json 2>/dev/null
cp workload.db archive/a/xpcorr.db
cp changed.db archive/b/xpcorr.db
cp "$fixtures/h100-torch/meta.json" archive/c/
"$xpcorr" ls archive > out/ls.txt

# the diff reports exactly the changes made, whatever the golden files say
python3 - <<'PY'
import csv, sqlite3, xml.etree.ElementTree as ET
# every GPU ns of the run is on some line of the GPU flame graph, once
for run in ("workload", "torch"):
    db = sqlite3.connect(run + ".db")
    want = sum(db.execute(f"SELECT ifnull(sum(end - start), 0) FROM CUPTI_ACTIVITY_KIND_{t}").fetchone()[0]
               for t in ("KERNEL", "MEMCPY", "MEMSET"))
    got = sum(int(l.rsplit(" ", 1)[1]) for l in open(f"out/{run}-gpu.folded"))
    assert got == want, (run, got, want)
rows = {(r["section"], r["name"]): r for r in csv.DictReader(open("out/diff.csv"))}
k = lambda n: rows[("kernel", n)]
assert k("k_alpha(float*, int)")["diff_pct"] == "+200.0", k("k_alpha(float*, int)")
assert int(k("k_alpha(float*, int)")["new_ns"]) == 3 * int(k("k_alpha(float*, int)")["base_ns"])
assert k("k_beta(float*, int)")["diff_pct"] == "gone"
assert k("k_driver(float*, int)")["diff_pct"] == "gone"
assert k("k_new(float*, int)")["diff_pct"] == "new"
for name in ("k_thread(float*, int)", "k_graph_a(float*, int)", "[memset]", "[memcpy HtoD]"):
    assert k(name)["diff_ns"] == "0", k(name)
changed = {n for (s, n), r in rows.items() if s == "kernel" and r["diff_ns"] != "0"}
assert changed == {"k_alpha(float*, int)", "k_beta(float*, int)", "k_driver(float*, int)",
                   "k_new(float*, int)"}, changed
stacks = {n: r for (s, n), r in rows.items() if s == "stack"}
beta = [r for n, r in stacks.items() if "launch_beta" in n]
assert beta and all(r["diff_pct"] == "gone" for r in beta), beta
# the API calls did not change
assert all(r["diff_ns"] == "0" for (s, n), r in rows.items() if s == "api")
# differential folded: k_alpha lines tripled, k_beta lines vanished
for line in open("out/diff.folded"):
    stack, a, b = line.rsplit(" ", 2)
    if stack.endswith(";k_alpha(float*, int)"):
        assert int(b) == 3 * int(a), line
    if stack.endswith(";k_beta(float*, int)"):
        assert int(b) == 0 < int(a), line
# the SVG: well-formed; k_alpha red (grew); every drawn frame of the new run
svg = ET.parse("out/diff.svg").getroot()
# a frame's name is its title's text up to the last " (": the counts follow
fills = {g.find("{http://www.w3.org/2000/svg}title").text.rsplit(" (", 1)[0]:
         g.find("{http://www.w3.org/2000/svg}rect").get("fill")
         for g in svg.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "f"}
assert fills["k_alpha(float*, int)"].startswith("rgb(255,"), fills["k_alpha(float*, int)"]
assert "k_beta(float*, int)" not in fills
# json: the csv's rows, the same changes
import json
doc = json.load(open("diff.json"))
assert [r["role"] for r in doc["runs"]] == ["base", "new"], doc["runs"]
assert any("sampling frequencies differ" in w for w in doc["warnings"]), doc["warnings"]
jrows = {(t["section"], r["name"]): r for t in doc["tables"] for r in t["rows"]}
assert set(jrows) == set(rows), set(jrows) ^ set(rows)
assert jrows[("kernel", "k_alpha(float*, int)")]["diff_pct"] == 200.0
assert jrows[("kernel", "k_alpha(float*, int)")]["change"] == "slower"
assert jrows[("kernel", "k_beta(float*, int)")]["change"] == "gone"
assert jrows[("kernel", "k_new(float*, int)")]["diff_pct"] is None
assert all(r["folded"] for t in doc["tables"] if t["section"] == "stack" for r in t["rows"])
# text fits: 120 columns off a terminal, --width 80, whole with --width 0
for name, width in (("diff-120.txt", 120), ("diff-80.txt", 80), ("out/diff-torch-size.txt", 120)):
    for n, line in enumerate(open(name, encoding="utf-8"), 1):
        assert len(line.rstrip("\n")) <= width, f"{name}:{n}: {len(line) - 1} columns"
assert max(len(l) for l in open("diff-whole.txt", encoding="utf-8")) > 200
# a stack with Python lines reads as in report: the line, the operation, the C++ under it
text = open("diff-lines.txt", encoding="utf-8").read()
assert "torch_loop.py:28 tiny_elementwise \u203a aten::mul.Tensor | at::native::gpu_kernel_impl_nocast<\u2026>()" in text, text[:3000]
names = [r["name"] for t in json.load(open("diff-lines.json"))["tables"] if t["section"] == "stack" for r in t["rows"]]
assert any(n.startswith("torch_loop.py:29 tiny_elementwise \u203a aten::add.Tensor | void at::native::gpu_kernel_impl_nocast<")
           for n in names), names[:5]
# the real pair: the same launches, larger tensors; cuBLAS picks another gemm
rows = list(csv.DictReader(open("diff-torch-size.csv")))
kern = [r for r in rows if r["section"] == "kernel"]
gemm = [r for r in kern if "gemm" in r["name"]]
assert sorted(r["diff_pct"] for r in gemm) == ["gone", "new"], gemm
assert {r["base_instances"] for r in gemm} | {r["new_instances"] for r in gemm} == {"0", "50"}, gemm
elementwise = [r for r in kern if "vectorized_elementwise" in r["name"]]
assert elementwise and all(r["base_instances"] == r["new_instances"] for r in elementwise), elementwise
assert all(float(r["diff_pct"]) > 50 for r in elementwise if int(r["base_instances"]) > 1000), elementwise
for db, col in (("torch.db", "base_ns"), ("torch-1024.db", "new_ns")):
    c = sqlite3.connect(db)
    want = sum(c.execute(f"SELECT ifnull(sum(end - start), 0) FROM CUPTI_ACTIVITY_KIND_{t}").fetchone()[0]
               for t in ("KERNEL", "MEMCPY", "MEMSET"))
    assert sum(int(r[col]) for r in kern) == want, (db, want)
# the launch counts per API are the same in both runs, except the memset the larger reduction needs
api = {r["name"]: r for r in rows if r["section"] == "api"}
assert api["cudaLaunchKernel"]["base_instances"] == api["cudaLaunchKernel"]["new_instances"], api
PY
# launching stacks of the Python loop are named by their Python function, as in report
grep -q "py::tiny_elementwise:[^ ]*torch_loop.py › aten::add.Tensor | at::native::gpu_kernel_impl_nocast" out/diff-torch-size.txt
grep -q "WARNING: sampling frequencies differ (999 vs 99 Hz)" out/diff.txt
grep -q "sampling frequencies differ" diff-csv.err

if [ "$mode" = --regenerate ]; then
	mkdir -p "$golden"
	cp out/* "$golden/"
	echo "golden files written to $golden; review them with git diff"
	exit 0
fi
status=0
for f in out/*; do
	diff -u "$golden/$(basename "$f")" "$f" || status=1
done
exit $status
