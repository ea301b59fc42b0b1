# pythons.sh - sourced by the Python-frame tests: sets PYTHONS (unless the
# caller did) to the newest pyenv CPython of each of 3.10-3.13 and the
# system python3; exits 77 without pyenv and 1 when a minor is missing.
if [ -z "${PYTHONS:-}" ]; then
	root=${PYENV_ROOT:-$HOME/.pyenv}/versions
	if ! ls -d "$root"/3.1[0-3].* >/dev/null 2>&1; then
		echo "SKIP: no pyenv CPython 3.10-3.13 under $root (set PYTHONS)"
		exit 77
	fi
	for m in 10 11 12 13; do
		v=$(ls -d "$root"/3.$m.* 2>/dev/null | sort -V | tail -n 1)
		if [ -z "$v" ]; then
			echo "FAIL: no CPython 3.$m under $root"
			exit 1
		fi
		PYTHONS="${PYTHONS:-} $v/bin/python3"
	done
	[ -x /usr/bin/python3 ] && PYTHONS="$PYTHONS /usr/bin/python3"
	pythons_default=1
fi
