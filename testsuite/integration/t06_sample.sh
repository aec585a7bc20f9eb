#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The sampler's peak (testsuite/lib/sample.sh) as the checks take it: a
# whole number however large. mawk, Debian's awk, printed a peak of
# 2^31 bytes and more as 2.14748e+09, which test -ge refuses: t50's
# plain share, whose 32 copies stayed cached whole (2048 MiB), failed
# its floor with "2.14748e+09 < 1073741824". And a sample that could not
# be read is no figure.
set -u
. "$(dirname "$0")/../lib/check.sh"
. "$(dirname "$0")/../lib/sample.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf '%s\n' "1 2147483648" "3 5" "2 17179869184" >"$tmp/samples"
peak=$(cg_sample_peak 1 "$tmp/samples")
cg_expect "a peak of 3 prints as 3 ($peak)" test "$peak" = 3
peak=$(cg_sample_peak 2 "$tmp/samples")
cg_expect "a peak of 16 GiB prints whole ($peak)" \
	test "$peak" = 17179869184
cg_expect_ge "the checks take it" "$peak" 1073741824

# A sample that could not be read is no figure, never a 0 that passes
# every "at most" bound: the sampler writes "-" for a column whose
# command printed nothing or no number, and the peak refuses it, as it
# refuses no samples at all
no_peak()
{
	local out rc

	out=$(cg_sample_peak "$1" "$2" 2>"$tmp/err")
	rc=$?
	[ "$rc" != 0 ] && [ -z "$out" ] && grep -q . "$tmp/err"
}
cg_expect "no file: no figure, and a message" no_peak 1 "$tmp/none"
printf '%s\n' "1 2" "3 -" "5 6" >"$tmp/failed"
cg_expect "a failed sample in column 2: no figure" no_peak 2 "$tmp/failed"
cg_expect "... named in the message" grep -q "line 2: no figure in column 2" \
	"$tmp/err"
cg_expect "column 1 of the same lines still has its peak" \
	test "$(cg_sample_peak 1 "$tmp/failed")" = 5
cg_expect "a line without column 3: no figure" no_peak 3 "$tmp/failed"

nothing()
{
	:
}
cg_sampler_start "$tmp/sampled" 0.05 5 "echo 7" nothing "echo 1 x" \
	"echo 2 3"
sleep 0.3
cg_sampler_stop
cg_expect "the sampler writes a failed column as '-'" \
	test "$(head -n 1 "$tmp/sampled")" = "7 - - 2 3"
cg_expect "... which the peak refuses" no_peak 2 "$tmp/sampled"
cg_expect "... and the good columns keep theirs" \
	test "$(cg_sample_peak 4 "$tmp/sampled")" = 2
exit 0
