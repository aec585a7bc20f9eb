#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# make bench, scenario S: one cold copy with no memory pressure, the
# conditions of make demo and of every server whose page cache is not
# full yet. Each round copies the file through the plain share and then
# through each guarded share, cold (its pages dropped before each copy),
# so every configuration is compared with plain in the same run, in
# alternating pairs. plain-aa, a second plain share, is the A/A control:
# plain against plain in the same run, the spread of its ratios is the
# run's noise. Per configuration: throughput, smbd's CPU time per GiB
# (user + system of the smbd parent, the children it reaped and its live
# children, from the copy's start until the smbd process that served it
# has exited: testsuite/lib/figures.sh) and the whole machine's (every
# core's busy time over the same span: smbd, smbclient, this script and
# everything else the machine runs). Beside each row: what smbd sent to
# the device, from smbd's own blkio cgroup (blkio.throttle.io_serviced and
# io_service_bytes count smbd alone), and the average number of the
# device's requests in flight during the copies (its stat's weighted
# time in queue over the copies' time: everyone's, but the copy is all
# that runs).
#
#   PAIRS_CONFIGS	"plain-aa dontneed dontcache direct auto";
#			default: vfs objects = cacheguard and no option
#			(BENCH_OPTIONS neither); plain-aa: the A/A control
#   PAIRS_ROUNDS	5
#   PAIRS_MIB		1024 (the copied file, in MiB)
#   BENCH_READ_IOPS	empty: the disk as it is; N: smbd's reads capped at
#			N requests per second (blkio.throttle.read_iops_device
#			on the file's disk), storage that counts requests
#   BENCH_OPTIONS	more smb.conf lines for the guarded shares,
#			';'-separated
#   PAIRS_OUT		a file for the rows (TSV), besides stdout
#   PAIRS_MIN_RATIO	fail (exit 1) when a configuration's median ratio
#			to plain over the rounds is below this (the smoke)
#   PAIRS_LOG_LEVEL	smbd's log level (default 1; "1 cacheguard:2"
#			logs each file's close summary; CG_KEEP=1 keeps it)
#   PAIRS_FOLIOS	1: one more copy per configuration, after the
#			timed rounds and not counted in them, traced
#			(testsuite/lib/trace.sh): the sizes of the folios
#			it added to the file's page cache and the read
#			requests the disk saw, in a column of their own
#
# Output: two tables, one row per configuration in each. Throughput
# and CPU: the rate of each round, the sum (total bytes over total
# time), the ratio to plain's sum, the median of the rounds' ratios to
# the plain copy of the same round and their range (lowest-highest),
# smbd's CPU s/GiB over all rounds and the median of the rounds' ratios
# to plain's, the machine's CPU s/GiB. The device: requests and their
# average size, requests in flight, and the file's peak residency
# (sampled every 0.1 s during the copies). A figure that cannot be read
# stops the run with a message (exit 2), never a 0 in the table.
#
# PAIRS_OUT columns (tab-separated): config, IOPS cap (0: none), MB/s
# per round, MB/s, x plain (sums), requests, avg KiB, in flight, peak
# MiB, median x plain, smbd CPU s/GiB, its median x plain, machine CPU
# s/GiB, lowest and highest x plain of a round.
. "$(dirname "$0")/begin.sh" \
	"a private mount namespace, a blkio cgroup and dropping the file's pages" \
	"$@"
. "$top/testsuite/lib/blkio.sh"
. "$top/testsuite/lib/trace.sh"

configs=${PAIRS_CONFIGS:-plain-aa dontneed dontcache direct auto}
rounds=${PAIRS_ROUNDS:-5}
mib=${PAIRS_MIB:-1024}
iops=${BENCH_READ_IOPS:-}

cleanup()
{
	cg_smbd_cleanup
	cg_blkio_remove
	cg_trace_remove
}

if [ ! -x "$CG_BUILD/cgcache" ]; then
	echo "cannot measure the page cache: $CG_BUILD/cgcache is missing;" \
		"run make first" >&2
	exit 2
fi
cg_need_tools "a copy" smbclient || exit 2
CG_LOG_LEVEL=${PAIRS_LOG_LEVEL:-1} cg_smbd_init
# after cg_smbd_init, whose own trap this one extends
trap cleanup EXIT
cg_guard_shares "$configs" "${BENCH_OPTIONS:-}"
file=$CG_SHARE/pairs.bin
head -c $((mib << 20)) /dev/urandom >"$file"
sync

# smbd and every process it forks in a blkio cgroup of their own
cg_blkio_make "$file" "$iops" || exit 1
cg_blkio_add $$
cg_smbd_start
# the bench itself leaves the cgroup: only smbd is counted and capped
echo $$ >"$CG_BLKIO_ROOT/cgroup.procs"

# copy SHARE: "seconds smbd-ticks machine-ticks requests bytes queue-ms
# peak-resident", every one a figure, or a message and false
copy()
{
	local r0 b0 r1 b1 q0 q1 m v

	cg_drop_cache "$file" || return 1
	read -r r0 b0 <<<"$(cg_blkio_counts)"
	q0=$(cg_blkio_queue_ms)
	cg_sample_start "$file"
	m=$(cg_smbd_measure "$CG_ROOT/copy.out" \
		cg_smbclient "$1" "get pairs.bin /dev/null")
	v=$?
	cg_sample_stop
	[ "$v" = 0 ] || return 1
	q1=$(cg_blkio_queue_ms)
	read -r r1 b1 <<<"$(cg_blkio_counts)"
	for v in $m "$r0" "$b0" "$q0" "$r1" "$b1" "$q1" "$CG_PEAK"; do
		cg_number "a copy through [$1]" "$v" >/dev/null || return 1
	done
	echo "$m $((r1 - r0)) $((b1 - b0)) $((q1 - q0)) $CG_PEAK"
}

# Per configuration: sums over the rounds, and comma-separated lists of
# each round's MB/s and smbd ticks (for the medians of the pairs)
declare -A secs reqs bytes qms peak rates sticks mticks stlist
all="plain $configs"
for c in $all; do
	secs[$c]=0 reqs[$c]=0 bytes[$c]=0 qms[$c]=0 peak[$c]=0 rates[$c]=
	sticks[$c]=0 mticks[$c]=0 stlist[$c]=
done
for r in $(seq 1 "$rounds"); do
	for c in $all; do
		share=$(cg_guard_share_name "$c")
		if ! out=$(copy "$share"); then
			echo "pairs.sh: round $r, $c: no figure; stopped" >&2
			exit 2
		fi
		read -r s st mt q b w p <<<"$out"
		secs[$c]=$(awk -v a="${secs[$c]}" -v b="$s" \
			'BEGIN { print a + b }')
		sticks[$c]=$((${sticks[$c]} + st))
		mticks[$c]=$((${mticks[$c]} + mt))
		stlist[$c]="${stlist[$c]}${stlist[$c]:+,}$st"
		reqs[$c]=$((${reqs[$c]} + q))
		bytes[$c]=$((${bytes[$c]} + b))
		qms[$c]=$((${qms[$c]} + w))
		[ "$p" -gt "${peak[$c]}" ] && peak[$c]=$p
		rates[$c]="${rates[$c]}${rates[$c]:+,}$(awk -v s="$s" \
			-v m="$mib" 'BEGIN { printf "%.0f", m * 1048576 / s / 1e6 }')"
	done
done

# the traced copies: "folio shares;requests;average KiB" per configuration
declare -A folios
if [ "${PAIRS_FOLIOS:-0}" = 1 ] && cg_trace_make "$file"; then
	for c in $all; do
		share=$(cg_guard_share_name "$c")
		cg_drop_cache "$file"
		cg_trace_start
		cg_smbclient "$share" "get pairs.bin /dev/null" >/dev/null 2>&1
		cg_trace_stop
		read -r q k <<<"$CG_TRACE_REQS"
		folios[$c]="$CG_TRACE_FOLIOS; $q requests of $k KiB"
	done
fi

profile="the disk as it is"
[ -n "$iops" ] && profile="smbd's reads capped at $iops IOPS"
printf '\nOne cold copy of %s MiB, no memory pressure, %s rounds; %s\n' \
	"$mib" "$rounds" "$profile"
fmt='%-12s %-24s %5s %7s %6s %-11s %9s %7s %9s\n'
# shellcheck disable=SC2059 # one format for the header and the rows
printf "$fmt" "" "" "" "" "x plain" "" "smbd CPU" "" "machine"
# shellcheck disable=SC2059
printf "$fmt" config "MB/s (rounds)" "MB/s" "x plain" median "(range)" \
	"s/GiB" "x plain" "CPU s/GiB"
fail=0
declare -A line2
for c in $all; do
	row=$(awk -v s="${secs[plain]}" -v t="${secs[$c]}" -v m="$mib" \
		-v n="$rounds" -v q="${reqs[$c]}" -v b="${bytes[$c]}" \
		-v w="${qms[$c]}" -v p="${peak[$c]}" 'BEGIN {
		rate = m * 1048576 * n / t / 1e6
		printf "%.0f %.2f %d %.0f %.1f %.1f", rate, s / t, q,
			q ? b / q / 1024 : 0, w / (t * 1000), p / 1048576 }')
	read -r rate ratio q kib inflight pmib <<<"$row"
	# the median of the rounds' ratios: one round that a neighbour on
	# these 2 cores slowed down moves it less than the sum
	read -r median lo hi <<<"$(cg_ratios "${rates[$c]}" "${rates[plain]}")"
	copied=$((rounds * (mib << 20)))
	scpu=$(cg_per_gib "${sticks[$c]}" "$copied")
	mcpu=$(cg_per_gib "${mticks[$c]}" "$copied")
	read -r scpu_x _ <<<"$(cg_ratios "${stlist[$c]}" "${stlist[plain]}")"
	# shellcheck disable=SC2059
	printf "$fmt" "$c" "${rates[$c]}" "$rate" "$ratio" "$median" \
		"($lo-$hi)" "$scpu" "$scpu_x" "$mcpu"
	line2[$c]=$(printf '%-12s %9s %8s %8s %9s' "$c" "$q" "$kib" \
		"$inflight" "$pmib")
	if [ -n "${PAIRS_OUT:-}" ]; then
		printf '%s\t' "$c" "${iops:-0}" "${rates[$c]}" "$rate" \
			"$ratio" "$q" "$kib" "$inflight" "$pmib" "$median" \
			"$scpu" "$scpu_x" "$mcpu" "$lo" >>"$PAIRS_OUT"
		echo "$hi" >>"$PAIRS_OUT"
	fi
	if [ -n "${PAIRS_MIN_RATIO:-}" ] && [ "$c" != plain ] &&
		awk -v r="$median" -v m="$PAIRS_MIN_RATIO" \
			'BEGIN { exit !(r < m) }'; then
		fail=1
	fi
done
printf "\nWhat reached the device (smbd's blkio cgroup), the file's peak\n"
printf '%-12s %9s %8s %8s %9s\n' config requests "avg KiB" inflight \
	"peak MiB"
for c in $all; do
	echo "${line2[$c]}"
	[ -z "${folios[$c]:-}" ] ||
		printf '%-12s traced copy: folios %s\n' "" "${folios[$c]}"
done
cat <<'EOF'

x plain: the ratio of the sums; median (range): of the rounds' ratios to
the plain copy of the same round (plain-aa's range is this run's noise).
smbd CPU: user + system time of smbd and its children per GiB copied,
all rounds; x plain: the median of the rounds' ratios. machine CPU: every
core's busy time over the copies per GiB: smbd, smbclient and all else
this machine ran meanwhile.
EOF
exit $fail
