#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The engine's unit tests (the normal build, build/test_*) once under
# valgrind's memcheck: invalid reads and writes, uses of uninitialised
# values, and definite or indirect leaks fail the test.
set -u
. "$(dirname "$0")/../lib/check.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${CG_BUILD:-$top/build}

if ! command -v valgrind >/dev/null; then
	cg_fail "unit tests under valgrind" "no valgrind: make deps"
	exit 0
fi
for t in "$build"/test_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	start=$(date +%s)
	out=$(valgrind -q --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect "$t" 2>&1)
	rc=$?
	secs=$(($(date +%s) - start))
	if [ $rc -eq 0 ]; then
		cg_pass "$name under valgrind, ${secs}s"
	else
		cg_fail "$name under valgrind" "exit $rc after ${secs}s:
$(grep -E -A 20 '^==[0-9]+== [A-Z]|FAILED' <<<"$out" | head -n 40)"
	fi
done
exit 0
