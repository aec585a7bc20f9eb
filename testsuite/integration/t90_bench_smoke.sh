#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The mixed-workload benchmark at smoke sizes (BENCH_SMOKE=1: every
# configuration in scenarios A and B, tiny files; then scenario C alone
# with two copies) produces a complete table,
# the fio device-limit table and a PNG per configuration, and leaves no
# smbd, cgroup or data behind. It asserts no timings: at these sizes and
# on a shared 2-core machine they mean nothing; but one guard on speed:
# scenario S (pairs.sh), one cold copy of each mode against the plain
# share in seven alternating pairs (the median of the pairs' ratios: on
# these 2 cores one round in a few runs at a third of its speed, which
# drags a sum of three below any bound), in two profiles:
#
# - smbd's reads capped at 100 IOPS: the device binds every share, so
#   the ratio is what the module makes of the device's requests (their
#   size and depth), and it holds still: 0.8x plain or better. The
#   module of 00b5bb4 (its own readahead for every stream, in 4 KiB
#   folios) fails it: direct 0.69x, dontcache 0.74x, auto 0.77x, where
#   this one gave 1.01-3.81x (docs/benchmarks.md, "The guard").
# - the disk as it is: these machines are CPU-bound there (plain at
#   250-900 MB/s from one run to the next) and a mode's median moved
#   between 0.71x and 1.12x across CI runs of one build, so the bound is
#   the one the project's standards give a timed ratio: a 2x loss
#   fails it, with a margin (0.6x).
#   What a mode makes of the CPU is measured by make bench, not here;
#   the smoke checks that every row has its CPU figures (smbd's above
#   0, the machine's at least smbd's) and that S has its A/A row.
# Last, the small-file bench (smallfiles.sh) at 200 files: its rows.
set -u
. "$(dirname "$0")/../lib/check.sh"
cg_need_root "bench smoke"
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d /tmp/cacheguard-bench-smoke.XXXXXX)
trap 'rm -rf "$out"' EXIT
configs="plain off dontneed dontcache direct auto nocache smbd-cgroup"
# a port no other test's smbd holds right now
port=4476
while [ "$port" -lt 4499 ] &&
	ss -tanH "( sport = :$port or dport = :$port )" | grep -q .; do
	port=$((port + 1))
done

# The smoke's memory cgroup is 64 MiB for smbd and the reader together:
# direct mode's budget is sized to it, as an administrator would (at 64M,
# the default then, a direct stream's prefetch grew to 16 MiB of
# anonymous memory, and with smbclient's read buffers smbd was OOM-killed
# once)
if BENCH_SMOKE=1 BENCH_RESULTS=$out/results BENCH_CONFIGS=$configs \
	BENCH_OPTIONS="cacheguard:direct memory = 16M" \
	BENCH_SCENARIOS="A B" BENCH_PORT=$port \
	timeout 600 "$top/testsuite/bench/run" >"$out/run.log" 2>&1; then
	cg_pass "the smoke benchmark runs to the end"
else
	cg_fail "the smoke benchmark runs to the end" \
		"exit $?: $(tail -n 5 "$out/run.log" | tr '\n' ' ')"
fi
res=$out/results

# Every configuration has a row with all thirteen cells filled, per
# scenario
for scen in A B; do
	rows=$(awk -v s="## Scenario $scen:" '
		index($0, s) == 1 { on = 1; next }
		/^## / { on = 0 }
		on && /^\| / && !/^\| configuration/ { print }' \
		"$res/results.md" 2>/dev/null)
	n=$(printf '%s\n' "$rows" | grep -c '^|')
	cg_expect_ge "scenario $scen: a table row per configuration" "$n" 8
	bad=$(printf '%s\n' "$rows" | awk -F'|' 'NF != 15 { print; next }
		{ for (i = 2; i <= 14; i++) if ($i ~ /^ *$/ || $i ~ /failed/) {
			print; next } }')
	if [ -z "$bad" ] && [ "$n" -ge 8 ]; then
		cg_pass "scenario $scen: every row complete"
	else
		cg_fail "scenario $scen: every row complete" \
			"$(echo "$bad" | head -n 2)"
	fi
done

cg_expect "results.tsv: every run ok" awk -F'\t' 'NR > 1 && $3 != "ok" {
	bad = 1 } NR > 1 { n++ } END { exit bad || n != 16 }' "$res/results.tsv"

# cpu_ok FILE CONFIG-COLUMN SMBD-COLUMN MACHINE-COLUMN: every row has
# smbd's and the machine's CPU per GiB as numbers, smbd's above 0 (a
# copy costs smbd time) and the machine's at least smbd's (it holds
# smbd's, smbclient's and the rest)
cpu_ok()
{
	awk -F'\t' -v k="$2" -v s="$3" -v m="$4" '
		$k == "config" { next }
		{ n++ }
		$s !~ /^[0-9]+\.[0-9]+$/ || $m !~ /^[0-9]+\.[0-9]+$/ ||
			$s + 0 <= 0 || $m + 0 < $s + 0 {
			print "bad CPU figures: " $0; bad = 1 }
		END { exit bad || n == 0 }' "$1"
}
cg_expect "results.tsv: smbd's and the machine's CPU per GiB in every run" \
	cpu_ok "$res/results.tsv" 2 5 27

# fio: a figure, or an honest "unsupported by this fio" for --uncached
fio_rows=$(grep -c -E '^\| --direct=1|^\| buffered|^\| --uncached' \
	"$res/results.md" 2>/dev/null)
cg_expect_ge "the device-limit table has its four fio jobs" "$fio_rows" 4
cg_expect "fio rows hold a figure or say unsupported" awk -F'|' '
	/^\| (--direct|buffered|--uncached)/ { n++
		if ($3 !~ /[0-9]/ && $3 !~ /unsupported by this fio/) bad = 1 }
	END { exit bad || n < 4 }' "$res/results.md"

# A PNG per configuration against the plain share, and one of them all,
# per scenario
missing=
for scen in A B; do
	for cfg in $configs all; do
		[ "$cfg" = plain ] && continue
		png=$res/plots/$scen-$cfg.png
		if [ "$(head -c 4 "$png" 2>/dev/null | od -An -c | tr -d ' ')" \
			!= '211PNG' ] || [ "$(stat -c %s "$png")" -lt 10000 ]; then
			missing+=" $scen-$cfg"
		fi
	done
done
if [ -z "$missing" ]; then
	cg_pass "a PNG plot per configuration and scenario"
else
	cg_fail "a PNG plot per configuration and scenario" "missing:$missing"
fi
cg_expect "results.md links the plots" grep -q '(plots/A-dontneed.png)' \
	"$res/results.md"

# --report redoes the same report from the run's files
cp "$res/results.md" "$out/results.first.md" 2>/dev/null
if "$top/testsuite/bench/run" --report "$res" >"$out/report.log" 2>&1 &&
	cmp -s "$res/results.md" "$out/results.first.md"; then
	cg_pass "run --report reproduces results.md"
else
	cg_fail "run --report reproduces results.md" \
		"$(diff "$out/results.first.md" "$res/results.md" | head -n 4 |
			tr '\n' ' ')"
fi

# Scenario C alone (concurrent copies): a complete row per configuration
# with its two extra columns. Two copies of 48 MiB, and a cgroup large
# enough for two smbd children with smbclient's 8 MiB reads in flight
# (64 MiB is not: OOM).
resc=$out/results-c
if BENCH_SMOKE=1 BENCH_RESULTS=$resc BENCH_CONFIGS="plain dontcache" \
	BENCH_SCENARIOS=C BENCH_COPIES=2 BENCH_CGROUP_MIB=192 \
	BENCH_PORT=$port timeout 600 "$top/testsuite/bench/run" \
	>"$out/run-c.log" 2>&1; then
	cg_pass "scenario C alone runs to the end"
else
	cg_fail "scenario C alone runs to the end" \
		"exit $?: $(tail -n 5 "$out/run-c.log" | tr '\n' ' ')"
fi
rows=$(awk 'index($0, "## Scenario C:") == 1 { on = 1; next }
	/^## / { on = 0 }
	on && /^\| / && !/^\| configuration/ { print }' \
	"$resc/results.md" 2>/dev/null)
bad=$(printf '%s\n' "$rows" | awk -F'|' 'NF != 17 { print; next }
	{ for (i = 2; i <= 16; i++) if ($i ~ /^ *$/ || $i ~ /failed/) {
		print; next } }')
n=$(printf '%s\n' "$rows" | grep -c '^|')
if [ -z "$bad" ] && [ "$n" = 2 ]; then
	cg_pass "scenario C: every row complete, summed and slowest copy"
else
	cg_fail "scenario C: every row complete, summed and slowest copy" \
		"$n rows; $(echo "$bad" | head -n 2)"
fi
cg_expect "scenario C: smbd's and the machine's CPU per GiB in every run" \
	cpu_ok "$resc/results.tsv" 2 5 27
cg_expect "scenario C: each copied file sampled on its own" awk \
	'NF != 7 { bad = 1 } END { exit bad || NR == 0 }' \
	"$resc/runs/C-plain/samples"

# Scenario S: one copy of each mode against plain, two profiles (above).
# Seven pairs of 256 MiB rather than three of 512: a slow spell of this
# shared machine lasts seconds and took one or two of three pairs with
# it (every mode's median moved between 0.74x and 1.04x from run to run
# on 2026-12-02, plain at 350 MB/s); with seven, one spell moves the
# median less, in about the same time.
pairs_mib=256
pairs_rounds=7
for profile in "100 0.8" "- 0.6"; do
	read -r iops bound <<<"$profile"
	[ "$iops" = - ] && iops=
	profile=${iops:+"$iops IOPS"}
	profile=${profile:-"the disk as it is"}
	: >"$out/pairs.tsv"
	PAIRS_MIB=$pairs_mib PAIRS_ROUNDS=$pairs_rounds \
		PAIRS_OUT=$out/pairs.tsv \
		BENCH_READ_IOPS=$iops timeout 600 \
		"$top/testsuite/bench/pairs.sh" >"$out/pairs.log" 2>&1
	sed -n '/^config/,$p' "$out/pairs.log"
	cg_expect "scenario S, $profile: CPU per GiB in every row" \
		cpu_ok "$out/pairs.tsv" 1 11 13
	cg_expect "scenario S, $profile: an A/A row (plain against plain)" \
		grep -q "^plain-aa	" "$out/pairs.tsv"
	for mode in dontneed dontcache direct auto; do
		ratio=$(awk -F'\t' -v m="$mode" '$1 == m { print $10 }' \
			"$out/pairs.tsv")
		name="scenario S, $profile: $mode at ${bound}x plain or better"
		name="$name (median of $pairs_rounds pairs)"
		if [ -z "$ratio" ]; then
			cg_fail "$name" "no figure: $(tail -n 3 "$out/pairs.log" |
				tr '\n' ' ')"
		elif awk -v r="$ratio" -v b="$bound" \
			'BEGIN { exit !(r >= b) }'; then
			cg_pass "$name (${ratio}x)"
		else
			cg_fail "$name" "${ratio}x"
		fi
	done
done

# Small files (smallfiles.sh, issue 48): 200 files, two rounds; a row
# for plain, the A/A control and the default share, each with its
# ops/s and CPU per op; the script itself checks that every run read
# every byte of every file. No bound on the ratio: that is make bench's
: >"$out/small.tsv"
if SMALL_FILES=200 SMALL_PASSES=1 SMALL_ROUNDS=2 SMALL_OUT=$out/small.tsv \
	timeout 300 "$top/testsuite/bench/smallfiles.sh" >"$out/small.log" 2>&1
then
	cg_pass "small files: runs to the end"
else
	cg_fail "small files: runs to the end" \
		"exit $?: $(tail -n 3 "$out/small.log" | tr '\n' ' ')"
fi
sed -n '/^Small files/,$p' "$out/small.log"
cg_expect "small files: a row for plain, plain-aa and default" \
	test "$(cut -f1 "$out/small.tsv" | xargs)" = "plain plain-aa default"
cg_expect "small files: ops/s, and CPU per op of smbd and the machine" \
	awk -F'\t' '{ n++ }
		$3 + 0 <= 0 || $7 !~ /^[0-9]+\.[0-9]$/ || $7 + 0 <= 0 ||
			$9 + 0 < $7 + 0 { print; bad = 1 }
		END { exit bad || n != 3 }' "$out/small.tsv"

# Cleanup: no smbd on the smoke port, no cgroup of the run left
if ss -ltnH "( sport = :$port )" | grep -q .; then
	cg_fail "no smbd left listening" "port $port is still open"
else
	cg_pass "no smbd left listening"
fi
left=$(find /sys/fs/cgroup -maxdepth 6 -type d \
	-name "cacheguard-bench.*" 2>/dev/null | while read -r d; do
		pid=${d##*.}
		kill -0 "$pid" 2>/dev/null || echo "$d"
	done)
if [ -z "$left" ]; then
	cg_pass "no benchmark cgroup left behind"
else
	cg_fail "no benchmark cgroup left behind" "$left"
fi
exit 0
