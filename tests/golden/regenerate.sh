#!/bin/sh
# regenerate.sh - rewrite the golden files on purpose, after a change that
# is meant to change the output; review the result with git diff.
#   tests/golden/regenerate.sh build
set -eu
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
ninja -C "$build" bin/xpcorr tests/gen-run tests/xptarget tests/libxptarget.so
"$here/../golden-fixtures.sh" "$(cd "$build/bin" && pwd)/xpcorr" "$here/../../fixtures" \
	"$here/fixtures" --regenerate
"$here/../chrome.sh" "$build/bin/xpcorr" "$here/../../fixtures" "$here" --regenerate
exec "$here/../golden.sh" "$build/bin/xpcorr" "$build/tests/gen-run" \
	"$(cd "$build/tests" && pwd)/xptarget" "$(cd "$build/tests" && pwd)/libxptarget.so" \
	"$here" --regenerate
