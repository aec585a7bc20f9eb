#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The figures the demo and the benchmark print are measured or refused
# (testsuite/lib/figures.sh): in a fresh Debian 13 root make demo said
# "fincore: command not found" and then that the plain share left
# 0.0 MiB in the page cache (trixie moved fincore to util-linux-extra,
# which nothing installed). With fincore off the PATH the demo now stops
# before it writes anything, naming the package; a reading that is
# empty or not a number is refused, never a 0; a bound checked against
# no figure fails. And the CPU readers count what they say: a child's
# time while it runs and once its parent has reaped it. A small demo
# with fincore ends with 0 and real figures.
set -u
. "$(dirname "$0")/../lib/check.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/testsuite/lib/figures.sh"
. "$top/testsuite/bench/cgroup.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# fails CMD...: CMD fails and says why on stderr (kept in $tmp/err)
fails()
{
	! "$@" >"$tmp/out" 2>"$tmp/err" && [ ! -s "$tmp/out" ] &&
		grep -q . "$tmp/err"
}

# A PATH like this machine's, without fincore: a folder of links to
# every command of the system's bin folders but that one (one ln per
# folder; a name met before keeps its first link, as PATH would)
mkdir "$tmp/bin"
for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
	ln -s -t "$tmp/bin" "$d"/* 2>/dev/null
done
rm -f "$tmp/bin/fincore"
cg_expect "the stand-in PATH has bash and no fincore" \
	test -e "$tmp/bin/bash" -a ! -e "$tmp/bin/fincore"
head -c 65536 /dev/urandom >"$tmp/file"

cg_expect "without fincore, cg_fincore fails" \
	env PATH="$tmp/bin" bash -c '. "$1"; ! cg_fincore "$2"' _ \
	"$top/testsuite/lib/figures.sh" "$tmp/file"
PATH="$tmp/bin" cg_fincore "$tmp/file" >"$tmp/out" 2>"$tmp/err"
cg_expect "... printing no figure" test ! -s "$tmp/out"
cg_expect "... and naming the package to install" \
	grep -q "fincore (Debian package util-linux-extra)" "$tmp/err"

# A fincore that answers, but no figure: refused; a figure: taken
mkdir "$tmp/fake"
stand_in()
{
	printf '#!/bin/sh\n%s\n' "$1" >"$tmp/fake/fincore"
	chmod +x "$tmp/fake/fincore"
}
stand_in 'exit 0'
cg_expect "a fincore that prints nothing: no figure" \
	fails env PATH="$tmp/fake:$PATH" bash -c '. "$1"; cg_fincore "$2"' _ \
	"$top/testsuite/lib/figures.sh" "$tmp/file"
stand_in 'echo 1.5M'
cg_expect "a fincore that prints '1.5M': no figure" \
	fails env PATH="$tmp/fake:$PATH" bash -c '. "$1"; cg_fincore "$2"' _ \
	"$top/testsuite/lib/figures.sh" "$tmp/file"
cg_expect "... the message quotes the reading" grep -q "'1.5M'" "$tmp/err"
stand_in 'echo "fincore: failed" >&2; exit 1'
cg_expect "a fincore that fails: no figure" \
	fails env PATH="$tmp/fake:$PATH" bash -c '. "$1"; cg_fincore "$2"' _ \
	"$top/testsuite/lib/figures.sh" "$tmp/file"
stand_in 'echo 4096'
cg_expect "a fincore that prints 4096: 4096" test "$(PATH="$tmp/fake:$PATH" \
	cg_fincore "$tmp/file")" = 4096
if command -v fincore >/dev/null; then
	cat "$tmp/file" >/dev/null
	cg_expect "the real fincore: a figure" cg_number fincore \
		"$(cg_fincore "$tmp/file")"
else
	cg_fail "the real fincore: a figure" "fincore is not installed" \
		"(util-linux-extra: make deps)"
fi

cg_expect "0 and 12.5 are figures" cg_number x 0
cg_expect "12.5 is a figure" cg_number x 12.5
for v in "" "-" "1.5M" "nan" "2.1e+09" "-3"; do
	cg_expect "'$v' is no figure" fails cg_number x "$v"
done

# A bound checked against no figure fails (the runner counts FAIL lines)
cg_expect "cg_expect_le: an empty reading fails the bound" \
	grep -q "^FAIL: b: no figure" <(cg_expect_le b "" 10)
cg_expect "cg_expect_ge: a '-' fails the bound" \
	grep -q "^FAIL: b: no figure" <(cg_expect_ge b - 0)

# A counter the kernel does not have is no figure (the benchmark's
# refaults read from memory.stat)
mkdir "$tmp/cg"
printf 'file 10\nanon 20\n' >"$tmp/cg/memory.stat"
BENCH_CG_VERSION=2
cg_expect "memory.stat: a counter that is there" \
	test "$(bench_cg_stat "$tmp/cg" file)" = 10
cg_expect "memory.stat: a counter that is not: no figure" \
	fails bench_cg_stat "$tmp/cg" workingset_refault_file

# CPU time: a child's while it runs, and in its parent's once reaped.
# The child is python itself (exec), which burns 0.5 s of CPU, says so
# and sleeps until killed; the subshell reads without forking
# (cg_ticks_of, cg_tree_ticks), so its own time hardly moves between
# the readings
hz=$CG_CLK_TCK
m0=$(cg_machine_ticks)
(
	(exec python3 -c 'import sys, time
while time.process_time() < 0.5:
	pass
sys.stdout.write("burnt\n"); sys.stdout.flush()
time.sleep(600)') >"$tmp/burnt" 2>/dev/null &
	child=$!
	until grep -q "burnt" "$tmp/burnt" 2>/dev/null; do sleep 0.05; done
	cg_ticks_of "$BASHPID"
	own=$CG_TICKS
	cg_tree_ticks "$BASHPID" >"$tmp/live"
	kill "$child"
	wait "$child"
	cg_ticks_of "$BASHPID"
	echo "$own $(cat "$tmp/live") $CG_TICKS" >"$tmp/ticks"
) &
wait $!
m1=$(cg_machine_ticks)
read -r own live reaped <"$tmp/ticks"
cg_expect_ge "a live child's 0.5 s of CPU count in its parent's tree (ticks)" \
	$((live - own)) $((hz * 45 / 100))
cg_expect_ge "... and in the parent's own figure (cutime) once reaped (ticks)" \
	$((reaped - own)) $((hz * 45 / 100))
cg_expect_ge "the machine's CPU time holds them (ticks)" $((m1 - m0)) \
	$((hz * 45 / 100))
cg_expect "a process that is gone: no figure" fails cg_proc_ticks 999999999
cg_expect "the median of 3,1,2 is 2" test "$(cg_median 3,1,2)" = 2
cg_expect "the ratios of 2,4,9 to 2,2,3: median 2, range 1-3" \
	test "$(cg_ratios 2,4,9 2,2,3)" = "2.00 1.00 3.00"

# The demo, without fincore: stops before it writes or starts anything
if [ "$(id -u)" = 0 ]; then
	PATH="$tmp/bin" timeout 60 "$top/tools/demo" >"$tmp/demo.out" 2>&1
	rc=$?
	cg_expect "make demo without fincore fails (exit $rc)" \
		test "$rc" != 0 -a "$rc" != 124
	want="cannot measure what a copy leaves in the page cache:"
	want+=".*fincore (Debian package util-linux-extra)"
	cg_expect "... naming what it cannot measure and the package" \
		grep -q "$want" "$tmp/demo.out"
	cg_expect "... before it writes the file or starts smbd" \
		bash -c '! grep -q "==>" "$1"' _ "$tmp/demo.out"

	# and with it, a small demo ends well (exit 0: on Samba 4.22 its
	# clean-up once ended a complete run with 1) and its figures are
	# real: the plain share leaves the whole 16 MiB file cached
	DEMO_SIZE=16 DEMO_ROUNDS=2 timeout 300 "$top/tools/demo" \
		>"$tmp/demo.out" 2>&1
	rc=$?
	cg_expect "a 16 MiB demo exits 0 (exit $rc)" test "$rc" = 0
	cg_expect "... the plain share left 16.0 MiB in the page cache" \
		grep -qE "^plain +[0-9]+ +1\.00 +[0-9]+\.[0-9]+ +16\.0 MiB$" \
		"$tmp/demo.out"
	cg_expect "... the default share has its row of figures" \
		grep -qE "^cacheguard \(default\) +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ MiB$" \
		"$tmp/demo.out"
else
	cg_skip "make demo without fincore" "needs root"
fi
exit 0
