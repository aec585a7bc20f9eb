# SPDX-License-Identifier: GPL-3.0-or-later
#
# One sampler for the tests and the benchmark: in the background, every
# PERIOD seconds, one line of numbers appended to OUT, the outputs of
# the COLUMN command lines side by side (each run with eval, printing one
# or more numbers on one line; a function of the caller's is fine: the
# sampler is a subshell of it), for at most MAX seconds or until
# cg_sampler_stop. Keep a column to few processes: with 32 copies busy
# on 2 cores, a sampler of 100 forks per line saw none of them.
#
# A column whose command printed nothing, or something other than
# numbers (a tool that is missing or failed), is written as "-": no
# figure, which cg_sample_peak refuses, rather than a 0 that passes
# every "at most" check (testsuite/lib/figures.sh).
#
#   cg_sampler_start OUT PERIOD MAX COLUMN...	sets CG_SAMPLER, its pid
#   cg_sampler_stop				kills and reaps it
#   cg_sample_peak N OUT			the largest value in column N
#						of OUT; a message and false
#						when OUT has no line, or a
#						line without a number there

cg_sampler_start()
{
	local out=$1 period=$2 max=$3

	shift 3
	(
		local end col line v

		end=$(awk -v n="$EPOCHREALTIME" -v m="$max" \
			'BEGIN { printf "%d", n + m }')
		while [ "${EPOCHREALTIME%.*}" -lt "$end" ]; do
			line=
			for col in "$@"; do
				v=$(eval "$col" 2>/dev/null)
				[[ "$v" =~ ^[0-9.]+( [0-9.]+)*$ ]] || v=-
				line="$line${line:+ }$v"
			done
			echo "$line" >>"$out"
			sleep "$period"
		done
	) &
	CG_SAMPLER=$!
}

cg_sampler_stop()
{
	[ -n "${CG_SAMPLER:-}" ] || return 0
	kill "$CG_SAMPLER" 2>/dev/null
	wait "$CG_SAMPLER" 2>/dev/null
	CG_SAMPLER=
	return 0
}

cg_sample_peak()
{
	if [ ! -s "$2" ]; then
		echo "no samples in $2: the sampler never ran" >&2
		return 1
	fi
	awk -v c="$1" -v f="$2" 'BEGIN { m = 0 }
		$c !~ /^[0-9]+(\.[0-9]+)?$/ {
			printf "%s, line %d: no figure in column %d (\"%s\"):" \
				" a reading failed\n", f, NR, c, $0 >"/dev/stderr"
			bad = 1; exit 1 }
		$c + 0 > m { m = $c + 0 }
		END { if (!bad) printf "%.0f\n", m }' "$2"
}
