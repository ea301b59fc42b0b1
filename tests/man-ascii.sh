#!/bin/sh
# man-ascii.sh - every man page renders in the C locale (an ASCII terminal)
# without a character the device lacks (issue 43: `man xpcorr` warned
# "can't find special character 'u2026'").
#   man-ascii.sh PAGE...
command -v groff >/dev/null && command -v preconv >/dev/null ||
	{ echo "SKIP: groff is not installed"; exit 77; }
fail=0
for page in "$@"; do
	warn=$(LC_ALL=C preconv -e utf-8 "$page" | LC_ALL=C groff -man -Tascii -z 2>&1 |
	       grep "special character")
	if [ -n "$warn" ]; then
		echo "FAIL $page: $warn"
		fail=1
	else
		echo "ok   $page"
	fi
done
exit $fail
