#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The engine's unit tests (the normal build, build/test_*) once under
# valgrind's memcheck: invalid reads and writes, uses of uninitialised
# values, and definite or indirect leaks fail the test. One test binary
# per core at a time.
set -u
. "$(dirname "$0")/../lib/check.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${CG_BUILD:-$top/build}

if ! command -v valgrind >/dev/null; then
	cg_fail "unit tests under valgrind" "no valgrind: make deps"
	exit 0
fi
# one valgrind per core at a time (test_prefetch alone takes most of it);
# the results in name order. The random passes of test_prefetch and
# test_direct run half their seeds: 160 s and 80 s under valgrind with
# all eight, and each pass takes the same paths (the unit tests and t01
# run every seed)
export CG_TEST_SEEDS=4
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for t in "$build"/test_*; do
	[ -x "$t" ] || continue
	cg_per_core "$out" "${t##*/}" valgrind -q --error-exitcode=99 \
		--leak-check=full --errors-for-leak-kinds=definite,indirect "$t"
done
wait
for t in "$build"/test_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	cg_per_core_result "$out" "$name"
	if [ "$rc" = 0 ]; then
		cg_pass "$name under valgrind, ${secs}s"
	else
		cg_fail "$name under valgrind" "exit $rc after ${secs}s:
$(grep -E -A 20 '^==[0-9]+== [A-Z]|FAILED' "$out/$name.log" | head -n 40)"
	fi
done
exit 0
