#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# make bench-smallfiles: what the module costs the reads it does not
# watch. A client reads thousands of small files, 4-64 KiB each, through
# a share as a client does (build/smb_smallfiles: open, read whole,
# close, on one connection), as a web tier or a build reads a file
# server. Every file is below cacheguard:min file size (16M), so the
# module keeps no state for them: what a watched share costs here is
# its hooks' own work per open and read, which most reads of most
# shares pay. The files are root's, 0644, read by the tests' unprivileged
# account (testsuite/lib/smbd.sh), and warm (read once locally and once
# through every share before the rounds): the hooks' cost, not the
# disk's.
#
# Each round runs the client once against every configuration, the plain
# share first in odd rounds and last in even ones, so that no share
# always has the same neighbour in time; each is compared with the plain
# run of the same round. plain-aa, a second plain share, is the A/A
# control: the spread of its ratios is the run's noise.
#
#   SMALL_FILES 4000	files, of 4-64 KiB each (sizes drawn once, from
#			a fixed seed)
#   SMALL_PASSES 2	passes over all of them per client run
#   SMALL_ROUNDS 5	rounds
#   SMALL_CONFIGS	"plain-aa default": default is vfs objects =
#			cacheguard with no option; a mode name (auto,
#			direct, ...) is a share in that mode, with
#			BENCH_OPTIONS (';'-separated smb.conf lines)
#   SMALL_OUT		a file for the rows (TSV), besides stdout:
#			config, ops/s per round, median ops/s, median x
#			plain, lowest and highest x plain of a round,
#			smbd CPU us/op, its median x plain, machine CPU
#			us/op
#
# smbd CPU per op: user + system time of the smbd parent, the children
# it reaped and its live children from the client's start until the
# smbd process that served it has exited (its fork and log-in
# included, the same for every share), over the ops; machine CPU: every
# core's busy time over the same span (testsuite/lib/figures.sh). A
# figure that cannot be read, or a client run that read other than
# every byte of every file, stops the run (exit 2).
. "$(dirname "$0")/begin.sh" "a private mount namespace for smbd" "$@"

nfiles=${SMALL_FILES:-4000}
passes=${SMALL_PASSES:-2}
rounds=${SMALL_ROUNDS:-5}
configs=${SMALL_CONFIGS:-plain-aa default}
tool=$CG_BUILD/smb_smallfiles
if [ ! -x "$tool" ]; then
	echo "$tool is missing: run make first" >&2
	exit 2
fi
cg_need_tools "small-file reads" python3 || exit 2

CG_LOG_LEVEL=1 cg_smbd_init
cg_guard_shares "$configs" "${BENCH_OPTIONS:-}"
cg_smbd_start || exit 2
dir=$CG_SHARE/small
mkdir -p "$dir"
chmod 0755 "$dir"
# the files, root's and 0644 whatever the umask, and their sizes, one a
# line, for the client (it reads each whole in one request, as a client
# that knows the size from the open's answer); prints their bytes
sizes=$CG_ROOT/small.sizes
total=$(python3 - "$dir" "$nfiles" "$sizes" <<'EOF'
import os, random, sys
d, n, sizes = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = random.Random(48)
total = 0
with open(sizes, "w") as out:
    for i in range(n):
        size = rng.randint(4096, 65536)
        path = os.path.join(d, "f%05d" % i)
        with open(path, "wb") as f:
            f.write(os.urandom(size))
        os.chmod(path, 0o644)
        out.write("%d\n" % size)
        total += size
print(total)
EOF
) || exit 2
sync
cat "$dir"/f* >/dev/null

share_of()
{
	cg_guard_share_name "$1"
}

# run CONFIG PASSES: "ops/s smbd-ticks machine-ticks ops" of one client
# run through CONFIG's share; false, with a message, when a figure
# cannot be read or the client did not read every byte of every file
run()
{
	local out=$CG_ROOT/small.out m ops bytes rate

	m=$(cg_smbd_measure "$out" "$tool" -p "$CG_PORT" \
		-U "$CG_USER%$CG_PASS" -r "$2" "$sizes" \
		"//127.0.0.1/$(share_of "$1")/small") || return 1
	read -r ops bytes rate < <(awk '$1 == "files" {
		print $6, $8, $12 }' "$out")
	if [ "${ops:-}" != $((nfiles * $2)) ] ||
		[ "${bytes:-}" != $((total * $2)) ]; then
		echo "[$1] the client read ${ops:-no} files and ${bytes:-no}" \
			"bytes, not $((nfiles * $2)) and $((total * $2)):" \
			"$(tail -n 2 "$out")" >&2
		return 1
	fi
	cg_number "[$1] ops/s" "$rate" >/dev/null || return 1
	echo "$rate ${m#* } $ops"
}

all="plain $configs"
echo "==> $nfiles files, $((total >> 20)) MiB; one untimed pass" \
	"through every share"
for c in $all; do
	run "$c" 1 >/dev/null || exit 2
done

declare -A rates sticks mticks
for r in $(seq 1 "$rounds"); do
	order=$all
	if [ $((r % 2)) = 0 ]; then
		# shellcheck disable=SC2086 # one word per configuration
		order=$(printf '%s\n' $all | tac | xargs)
	fi
	line="    round $r:"
	for c in $order; do
		if ! out=$(run "$c" "$passes"); then
			echo "smallfiles.sh: round $r, $c: no figure;" \
				"stopped" >&2
			exit 2
		fi
		read -r rate st mt ops <<<"$out"
		rates[$c]+="${rates[$c]:+,}$rate"
		sticks[$c]+="${sticks[$c]:+,}$st"
		mticks[$c]+="${mticks[$c]:+,}$mt"
		line+=" $c $rate,"
	done
	echo "${line%,} ops/s"
done

# us_per_op TICKS-LIST: the median run's CPU time per op, in us
us_per_op()
{
	awk -v t="$(cg_median "$1")" -v hz="$CG_CLK_TCK" \
		-v n=$((nfiles * passes)) \
		'BEGIN { printf "%.1f", t / hz / n * 1e6 }'
}

printf '\nSmall files: %s files of 4-64 KiB (%s MiB), warm, %s passes a' \
	"$nfiles" "$((total >> 20))" "$passes"
printf ' run (%s ops), %s rounds\n' $((nfiles * passes)) "$rounds"
fmt='%-10s %-36s %6s %7s %-11s %8s %7s %8s\n'
# shellcheck disable=SC2059 # one format for the header and the rows
printf "$fmt" "" "" "" "x plain" "" "smbd CPU" "" "machine"
# shellcheck disable=SC2059
printf "$fmt" config "ops/s (rounds)" "ops/s" median "(range)" "us/op" \
	"x plain" "CPU us/op"
for c in $all; do
	read -r median lo hi <<<"$(cg_ratios "${rates[$c]}" "${rates[plain]}")"
	read -r cpu_x _ <<<"$(cg_ratios "${sticks[$c]}" "${sticks[plain]}")"
	scpu=$(us_per_op "${sticks[$c]}")
	mcpu=$(us_per_op "${mticks[$c]}")
	# shellcheck disable=SC2059
	printf "$fmt" "$c" "${rates[$c]}" "$(cg_median "${rates[$c]}")" \
		"$median" "($lo-$hi)" "$scpu" "$cpu_x" "$mcpu"
	if [ -n "${SMALL_OUT:-}" ]; then
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$c" \
			"${rates[$c]}" "$(cg_median "${rates[$c]}")" \
			"$median" "$lo" "$hi" "$scpu" "$cpu_x" "$mcpu" \
			>>"$SMALL_OUT"
	fi
done
cat <<'EOF'

ops/s: the median run's; x plain: the median of the rounds' ratios to the
plain run of the same round (range: lowest-highest; plain-aa's is this
run's noise). CPU us/op: the median run's; smbd: user + system time of
smbd and its children; machine: every core's busy time (the client's and
all else this machine ran meanwhile).
EOF
