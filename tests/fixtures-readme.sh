#!/bin/sh
# fixtures-readme.sh - fixtures/README.md has one row per fixture directory,
# and no row for one that does not exist (issue 43: h100-train-backward was
# listed twice, with different claims).
#   fixtures-readme.sh FIXTURES_DIR
dir=$1
fail=0
rows=$(sed -n 's/^| `\([^`]*\)\/` |.*/\1/p' "$dir/README.md")
for d in "$dir"/*/; do
	name=$(basename "$d")
	n=$(printf '%s\n' "$rows" | grep -cx "$name")
	[ "$n" = 1 ] || { echo "FAIL $name: $n rows in $dir/README.md"; fail=1; }
done
for name in $rows; do
	[ -d "$dir/$name" ] || { echo "FAIL $name: a row, but no such fixture"; fail=1; }
done
[ $fail = 0 ] && echo "ok   $(printf '%s\n' "$rows" | wc -l) fixtures, one row each"
exit $fail
