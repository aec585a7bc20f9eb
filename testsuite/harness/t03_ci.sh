#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# .ci/run, with a stand-in for make (CI_MAKE): it sums each part's count
# even when the part failed and make printed its own error lines after
# the count (CI once reported "exited 2 without a count" for a run with
# 3 failures, so the failures themselves were lost), and it counts a
# part that dies before its count as one failure.
set -u
. "$(dirname "$0")/../lib/check.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# fake make: the target's behaviour comes from $tmp/<target>
cat >"$tmp/make" <<'FAKE'
#!/bin/bash
cat "$FAKE_DIR/$1"
exit "$(cat "$FAKE_DIR/$1.rc")"
FAKE
chmod +x "$tmp/make"

# ci_case NAME WANT-LAST-LINE WANT-RC: .ci/run over the parts in $tmp
ci_case()
{
	local name=$1 want=$2 want_rc=$3 out rc

	out=$(cd "$top" && FAKE_DIR=$tmp CI_MAKE=$tmp/make bash .ci/run 2>&1)
	rc=$?
	cg_expect "$name: last line '$want'" \
		test "$(tail -n 1 <<<"$out")" = "$want"
	cg_expect "$name: exit status $want_rc" test "$rc" = "$want_rc"
	last_out=$out
}

part()
{
	printf '%b' "$2" >"$tmp/$1"
	echo "$3" >"$tmp/$1.rc"
}

part test 'PASS: a\n7 passed, 0 failed, 1 skipped\n' 0
part test-trixie 'PASS: a\nFAIL: b\n5 passed, 3 failed, 2 skipped\nmake: *** [Makefile:79: test] Error 1\nmake: *** [Makefile:141: test-trixie] Error 2\n' 2
part test-kernels-ci 'PASS: a\n2 passed, 0 failed, 0 skipped\n' 0
part test-i386-ci 'PASS: a\n3 passed, 0 failed, 2 skipped\n' 0
# a release row's subset (tools/test-row), for make test-releases below:
# a row whose samba the archive lacks (SKIPPED)
part test-trixie-backports 'SKIPPED: trixie-backports: no source\n0 passed, 0 failed, 1 skipped\n' 0
ci_case "a part that failed, make's errors after its count" \
	"17 passed, 3 failed, 5 skipped" 1
cg_expect "the failures are listed again just above the sum" \
	test "$(tail -n 3 <<<"$last_out" | head -n 2)" = \
	"==== the failures"$'\n'"[make test-trixie] FAIL: b"

part test-trixie 'PASS: a\nSegmentation fault\n' 2
ci_case "a part that died before its count" \
	"12 passed, 1 failed, 3 skipped" 1
cg_expect "a part that died is listed among the failures" \
	grep -qx "FAIL: make test-trixie exited 2 without a count" <<<"$last_out"

part test-trixie '5 passed, 0 failed, 0 skipped\nmake: *** Error 2\n' 2
ci_case "a part that exited non-zero with no failure counted" \
	"17 passed, 1 failed, 3 skipped" 1

part test-trixie '5 passed, 0 failed, 0 skipped\n' 0
ci_case "every part passed" "17 passed, 0 failed, 3 skipped" 0
cg_expect "no failures, no list" \
	bash -c '! grep -q "the failures" <<<"$1"' _ "$last_out"

# the kernels' subset is never skipped for time (the run of 0fe64ac
# skipped it whenever its estimate passed 80 minutes, as it always did),
# and one that cannot run is a failure
CI_KERNELS_NEED=100 ci_case "the kernels' subset runs, estimate or not" \
	"17 passed, 0 failed, 3 skipped" 0
cg_expect "the kernels' subset ran" \
	grep -qx "==== make test-kernels-ci" <<<"$last_out"
part test-kernels-ci 'qemu-system-x86_64: command not found\n' 127
ci_case "a kernels' subset that cannot run" \
	"15 passed, 1 failed, 3 skipped" 1


# make test-releases: .ci/run over the parts it names, and those alone
part test-kernels-ci 'PASS: a\n2 passed, 0 failed, 0 skipped\n' 0
out=$(cd "$top" && FAKE_DIR=$tmp CI_MAKE=$tmp/make \
	bash .ci/run test test-trixie-backports 2>&1)
cg_expect "the parts named on the command line, summed" \
	test "$(tail -n 1 <<<"$out")" = "7 passed, 0 failed, 2 skipped"
cg_expect "... and no other part runs" \
	bash -c '! grep -q "==== make test-kernels-ci" <<<"$1"' _ "$out"
