#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# make bench, scenario S: one cold copy with no memory pressure, the
# conditions of make demo and of every server whose page cache is not
# full yet. Each round copies the file through the plain share and then
# through each guarded share, cold (its pages dropped before each copy),
# so every configuration is compared with plain in the same run, in
# alternating pairs. Beside each row: what smbd sent to the device, from
# smbd's own blkio cgroup (blkio.throttle.io_serviced and
# io_service_bytes count smbd alone), and the average number of the
# device's requests in flight during the copies (its stat's weighted
# time in queue over the copies' time: everyone's, but the copy is all
# that runs).
#
#   PAIRS_CONFIGS	"dontneed dontcache direct auto"
#   PAIRS_ROUNDS	3
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
# Output: one row per configuration: the rate of each round, the sum
# (total bytes over total time), the ratio to plain's sum, the median of
# the rounds' ratios to the plain copy of the same round, requests and
# their average size, requests in flight, and the file's peak residency
# (sampled every 0.1 s during the copies).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
if [ "$(id -u)" != 0 ]; then
	echo "pairs.sh needs root: a private mount namespace, a blkio" \
		"cgroup and dropping the file's pages" >&2
	exit 1
fi
. "$top/testsuite/lib/smbd.sh"
. "$top/testsuite/lib/blkio.sh"
. "$top/testsuite/lib/trace.sh"
cg_enter_namespace "$0" "$@"

configs=${PAIRS_CONFIGS:-dontneed dontcache direct auto}
rounds=${PAIRS_ROUNDS:-3}
mib=${PAIRS_MIB:-1024}
iops=${BENCH_READ_IOPS:-}

cleanup()
{
	cg_smbd_cleanup
	cg_blkio_remove
	cg_trace_remove
}

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

# copy SHARE: "seconds requests bytes queue-ms peak-resident"
copy()
{
	local start end r0 b0 r1 b1 q0 q1

	cg_drop_cache "$file"
	read -r r0 b0 <<<"$(cg_blkio_counts)"
	q0=$(cg_blkio_queue_ms)
	cg_sample_start "$file"
	start=$(date +%s.%N)
	cg_smbclient "$1" "get pairs.bin /dev/null" >/dev/null 2>&1
	end=$(date +%s.%N)
	cg_sample_stop
	q1=$(cg_blkio_queue_ms)
	read -r r1 b1 <<<"$(cg_blkio_counts)"
	awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f", e - s }'
	echo " $((r1 - r0)) $((b1 - b0)) $((q1 - q0)) $CG_PEAK"
}

declare -A secs reqs bytes qms peak rates
all="plain $configs"
for c in $all; do
	secs[$c]=0 reqs[$c]=0 bytes[$c]=0 qms[$c]=0 peak[$c]=0 rates[$c]=
done
for r in $(seq 1 "$rounds"); do
	for c in $all; do
		share=plain
		[ "$c" = plain ] || share=guard_$c
		read -r s q b w p <<<"$(copy "$share")"
		secs[$c]=$(awk -v a="${secs[$c]}" -v b="$s" \
			'BEGIN { print a + b }')
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
		share=plain
		[ "$c" = plain ] || share=guard_$c
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
printf '%-10s %-18s %7s %7s %7s %9s %8s %8s %9s\n' config "MB/s (rounds)" \
	"MB/s" "x plain" median requests "avg KiB" inflight "peak MiB"
fail=0
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
	median=$(awk -v a="${rates[$c]}" -v b="${rates[plain]}" 'BEGIN {
		n = split(a, x, ","); split(b, y, ",")
		for (i = 1; i <= n; i++) r[i] = x[i] / y[i]
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
			if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
		printf "%.2f", n % 2 ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2 }')
	printf '%-10s %-18s %7s %7s %7s %9s %8s %8s %9s\n' "$c" "${rates[$c]}" \
		"$rate" "$ratio" "$median" "$q" "$kib" "$inflight" "$pmib"
	[ -z "${folios[$c]:-}" ] ||
		printf '%-10s traced copy: folios %s\n' "" "${folios[$c]}"
	if [ -n "${PAIRS_OUT:-}" ]; then
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$c" \
			"${iops:-0}" "${rates[$c]}" "$rate" "$ratio" "$q" \
			"$kib" "$inflight" "$pmib" "$median" >>"$PAIRS_OUT"
	fi
	if [ -n "${PAIRS_MIN_RATIO:-}" ] && [ "$c" != plain ] &&
		awk -v r="$median" -v m="$PAIRS_MIN_RATIO" \
			'BEGIN { exit !(r < m) }'; then
		fail=1
	fi
done
exit $fail
