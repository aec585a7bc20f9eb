#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The engine's unit tests built with AddressSanitizer and
# UndefinedBehaviorSanitizer (make build-asan: build-asan/test_*), run
# so that any report, a leak included, ends the test binary with an
# error: ASan halts on its first report, UBSan (built to recover, for
# smbd's sake) is made to halt here with halt_on_error=1.
set -u
. "$(dirname "$0")/../lib/check.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
asan=${CG_ASAN_BUILD:-$top/build-asan}

if [ ! -x "$asan/test_stream" ]; then
	cg_fail "sanitized unit tests" "no $asan/test_stream: make build-asan"
	exit 0
fi
# Not vacuous: the binaries carry the sanitizers' runtimes
if ldd "$asan/test_stream" | grep -q libasan &&
	ldd "$asan/test_stream" | grep -q libubsan; then
	cg_pass "build-asan/test_* link the ASan and UBSan runtimes"
else
	cg_fail "build-asan/test_* link the ASan and UBSan runtimes" \
		"$(ldd "$asan/test_stream" | head -n 5)"
fi
# one binary per core at a time (test_prefetch takes most of it); the
# results in name order
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for t in "$asan"/test_*; do
	cg_per_core "$out" "${t##*/}" env \
		ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0 \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$t"
done
wait
for t in "$asan"/test_*; do
	name=$(basename "$t")
	cg_per_core_result "$out" "$name"
	if [ "$rc" = 0 ] &&
		! grep -qE 'Sanitizer|runtime error' "$out/$name.log"; then
		cg_pass "$name under ASan+UBSan, ${secs}s"
	else
		cg_fail "$name under ASan+UBSan" "exit $rc after ${secs}s:
$(grep -E -A 30 'ERROR: |runtime error|FAILED' "$out/$name.log" |
	head -n 40)"
	fi
done
exit 0
