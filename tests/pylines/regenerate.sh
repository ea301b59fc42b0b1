#!/bin/sh
# regenerate.sh - rewrites lines-3.1x.txt with each pyenv interpreter
# (3.10 to 3.13), from sample.py. Review the diff: a change means the
# interpreter compiled differently, not that the decoder is wrong.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=${PYENV_ROOT:-$HOME/.pyenv}
for v in 3.10 3.11 3.12 3.13; do
	py=$(ls -d "$root"/versions/$v.* 2>/dev/null | sort -V | tail -n 1)
	[ -x "$py/bin/python" ] || { echo "regenerate.sh: no Python $v under $root/versions" >&2; exit 1; }
	"$py/bin/python" "$here/gen-fixture.py" "$here/sample.py" > "$here/lines-$v.txt"
	echo "lines-$v.txt: $("$py/bin/python" -V), $(grep -c '^code ' "$here/lines-$v.txt") code objects"
done
