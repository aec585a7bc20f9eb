#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The libFuzzer harnesses of the engine (testsuite/fuzz, make build-fuzz:
# build-fuzz/fuzz_*), each for CG_FUZZ_TIME seconds (default 60), one
# per core at a time:
#
#   fuzz_stream    reads begun and ended in any order, closes, hot files:
#                  no drop over a read in flight, retained-range bound
#   fuzz_prefetch  the direct prefetch table under writes and truncates:
#                  no stale byte served, no slot reused while it loads
#   fuzz_share     three opens of a file as three processes, real OFD
#                  locks: no drop over another's claim or a read in flight
#   fuzz_options   the option parser against a reference parser
#
# First every input in testsuite/fuzz/repro/NAME (inputs that once broke
# an invariant) runs once and must pass, then fuzzing starts from
# testsuite/fuzz/corpus/NAME, which it only reads (new inputs go to a
# temporary directory; make fuzz-corpus merges them into the tree). A
# crash, sanitizer report, broken invariant (abort), timeout (10 s per
# input) or out-of-memory fails; the input is kept in
# build-fuzz/artifacts/.
set -u
. "$(dirname "$0")/../lib/check.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
fuzz=${CG_FUZZ_BUILD:-$top/build-fuzz}
secs=${CG_FUZZ_TIME:-60}
art=$fuzz/artifacts

if ! ls "$fuzz"/fuzz_* >/dev/null 2>&1; then
	cg_fail "fuzz harnesses" "none in $fuzz: make build-fuzz"
	exit 0
fi
work=$(mktemp -d /tmp/cacheguard-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$art"

# why LOG: the line that says what broke, and where the input is
why()
{
	grep -a -m 1 -E 'INVARIANT VIOLATED|ERROR: |runtime error|SUMMARY' \
		"$1" | cut -c 1-300
	grep -a -m 1 'Test unit written to' "$1"
}

for bin in "$fuzz"/fuzz_*; do
	[ -x "$bin" ] || continue
	name=${bin##*/fuzz_}
	corpus=$top/testsuite/fuzz/corpus/$name
	repro=$top/testsuite/fuzz/repro/$name
	mkdir -p "$work/$name"

	for f in "$repro"/*; do
		[ -f "$f" ] || continue
		if "$bin" "$f" >"$work/$name.repro" 2>&1; then
			cg_pass "fuzz_$name: repro/$name/$(basename "$f") passes"
		else
			cg_fail "fuzz_$name: repro/$name/$(basename "$f") passes" \
				"$(why "$work/$name.repro")"
		fi
	done

	dirs=("$work/$name")
	[ -d "$corpus" ] && dirs+=("$corpus")
	# one harness per core at a time, each its full time
	cg_cpu_slot
	(
		"$bin" -max_total_time="$secs" -max_len=4096 -timeout=10 \
			-rss_limit_mb=2048 -print_final_stats=1 \
			-artifact_prefix="$art/$name-" "${dirs[@]}" \
			>"$work/$name.log" 2>&1
		echo $? >"$work/$name.rc"
	) &
done
wait

for bin in "$fuzz"/fuzz_*; do
	[ -x "$bin" ] || continue
	name=${bin##*/fuzz_}
	rc="no status"
	[ -f "$work/$name.rc" ] && rc=$(cat "$work/$name.rc")
	done_line=$(grep -a 'DONE' "$work/$name.log" | tail -n 1)
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' \
		"$work/$name.log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/$name.log")
	cov=$(sed -n 's/.* cov: \([0-9]*\) ft: \([0-9]*\) corp: \([0-9]*\).*/\
edges \1, features \2, corpus \3/p' <<<"$done_line" | tr -d '\n')
	if [ "$rc" = 0 ] && [ -n "$done_line" ]; then
		cg_pass "fuzz_$name: ${secs}s, ${runs:-?} runs,\
 ${rate:-?} exec/s, $cov, no crash"
	else
		cg_fail "fuzz_$name: ${secs}s without a crash" \
			"exit $rc: $(why "$work/$name.log")"
	fi
done
exit 0
