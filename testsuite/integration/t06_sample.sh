#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The sampler's peak (testsuite/lib/sample.sh) as the checks take it: a
# whole number however large. mawk, Debian's awk, printed a peak of
# 2^31 bytes and more as 2.14748e+09, which test -ge refuses: t50's
# plain share, whose 32 copies stayed cached whole (2048 MiB), failed
# its floor with "2.14748e+09 < 1073741824".
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
cg_expect "no file: 0" test "$(cg_sample_peak 1 "$tmp/none")" = 0
exit 0
