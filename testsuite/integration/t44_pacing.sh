#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# cacheguard:stream pacing (issue 28): a paced direct stream never has
# more of its reads at the device at once than its pacer allowed, and
# serves the right bytes. A cold 128 MiB get per share under strace
# (preadv2 of every smbd thread, with start times and durations): alone
# on the disk, where the disk's stat in sysfs shows nobody else reading,
# the paced stream sends whole reads, more than one at once, as an
# unpaced one does, once it has looked for 50 ms; with a
# neighbour reading another file of the disk with O_DIRECT (hotreader -d,
# 200 reads a second), it keeps one read at the device at once, in pieces
# (of 512 KiB at first), fewer than the unpaced share's in the same run,
# which keeps its whole prefetch loading. Two paced copies through two
# connections beside the neighbour take the disk's turn: one read of both
# smbd processes at the device at once. Reads of every size and alignment are
# right on the paced share, on both smbd read paths. What pacing does to
# the neighbour's latency is the benchmark's question (make bench,
# scenarios D, E).
set -u
. "$(dirname "$0")/../lib/check.sh"
cg_need_root "stream pacing"
if ! command -v strace >/dev/null; then
	cg_skip "stream pacing" "no strace (make deps installs it)"
	exit 0
fi
. "$(dirname "$0")/../lib/smbd.sh"
cg_enter_namespace "$0" "$@"

MiB=1048576
SIZE=$((128 * MiB))
direct=("vfs objects = cacheguard" "cacheguard:mode = direct")

cg_smbd_init
if [ "$(stat -f -c %T "$CG_SHARE")" != ext2/ext3 ]; then
	cg_skip "stream pacing" "the share $CG_SHARE is not on ext4"
	exit 0
fi
cg_share paced "${direct[@]}" "cacheguard:stream pacing = yes"
cg_share pacedsync "${direct[@]}" "cacheguard:stream pacing = yes" \
	"aio read size = 0"
cg_share unpaced "${direct[@]}"
cg_smbd_start || { cg_fail "smbd starts" "see above"; exit 1; }
head -c "$SIZE" /dev/urandom >"$CG_SHARE/big.bin"
chmod 0644 "$CG_SHARE/big.bin"

# traced SHARE: a cold get of big.bin from SHARE under strace; the trace
# in $CG_ROOT/strace.SHARE
traced()
{
	cg_traced_get "$1" big.bin -ttt -T -e trace=preadv2
}

# overlap SHARE: the most reads of 64 KiB or more in flight at once, from
# each call's start and its duration (a call another thread interrupted
# starts on its "unfinished" line; its size and duration are on its
# "resumed" one)
overlap()
{
	awk '
	function add(t0, n, d) {
		gsub(/[<>]/, "", d)
		if (n + 0 < 65536) return
		printf "%.6f 1\n%.6f -1\n", t0, t0 + d
	}
	/preadv2\(.*<unfinished/ { start[$1] = $2; next }
	/<\.\.\. preadv2 resumed>/ {
		if ($1 in start) add(start[$1], $(NF - 1), $NF)
		delete start[$1]
		next
	}
	/preadv2\(.* = [0-9]+ </ { add($2, $(NF - 1), $NF) }' \
		"$CG_ROOT/strace.$1" |
		sort -k1,1g -k2,2n |
		awk '{ c += $2; if (c > m) m = c } END { print m + 0 }'
}

# sizes SHARE: the bytes of reads of 64 KiB or more, then those of reads
# larger than 512 KiB (whole reads, not a paced stream's pieces)
sizes()
{
	awk '
	function add(n) {
		if (n + 0 < 65536) return
		all += n
		if (n + 0 > 524288) whole += n
	}
	/<\.\.\. preadv2 resumed>/ { add($(NF - 1)); next }
	/preadv2\(.* = [0-9]+ </ { add($(NF - 1)) }
	END { print all + 0, whole + 0 }' "$CG_ROOT/strace.$1"
}

# paced: the last paced stream's end line
paced()
{
	grep 'direct stream paced: ' "$CG_LOG" | tail -n 1
}

# peak: the last paced stream's "at most N reads at once"
peak()
{
	paced | sed -n 's/.* at most \([0-9]*\) reads at once.*/\1/p'
}

# met: how many of the last paced stream's reads met others'
met()
{
	paced | sed -n 's/.* \([0-9]*\) reads met others.*/\1/p'
}

traced unpaced
free=$(overlap unpaced)
cg_expect "[unpaced] the stream logs no pacing" test -z "$(paced)"

# alone: whole reads after its first 50 ms of reads, deeper than one (a
# read of the disk by anything else on the machine turns the stream to
# pieces for another 50 ms)
traced paced
alone=$(overlap paced)
said=$(peak)
read -r all whole < <(sizes paced)
echo "alone: reads at the device at once: unpaced $free, paced $alone" \
	"(the stream says at most ${said:-?}); $whole of $all bytes whole"
cg_expect "[paced, alone] the stream's end says how deep it went" \
	test -n "$said"
cg_expect "[paced, alone] the disk's stat counts others' reads" \
	grep -q "(the device counts)" <<<"$(paced)"
cg_expect_le "[paced, alone] never more reads at once than the pacer allowed" \
	"$alone" "${said:-0}"
cg_expect "[paced, alone] whole reads once nobody else was seen ($whole)" \
	test "$whole" -gt 0
cg_expect "[paced, alone] more than one read at once ($said)" \
	test "${said:-0}" -ge 2

# a neighbour: one piece at a time
head -c $((64 * MiB)) /dev/urandom >"$CG_SHARE/hot.bin"
"$CG_BUILD/hotreader" -d -r 200 -t 60 "$CG_SHARE/hot.bin" >/dev/null &
hot=$!
sleep 1
traced paced
kill "$hot" 2>/dev/null
wait "$hot" 2>/dev/null
shared=$(overlap paced)
read -r all whole < <(sizes paced)
echo "with a neighbour: reads at once: $shared; $whole of $all bytes whole;" \
	"$(met) reads met others'"
cg_expect "[paced, neighbour] its reads met the neighbour's" \
	test "$(met)" -gt 0
cg_expect "[paced, neighbour] one read at the device at once ($shared)" \
	test "$shared" -eq 1
cg_expect "[paced, neighbour] fewer reads at once than unpaced" \
	test "$shared" -lt "$free"
# in pieces: they may grow where each request costs (strace makes every
# read dear), so only some of them are sure to be
cg_expect "[paced, neighbour] reads in pieces ($whole of $all bytes whole)" \
	test "$whole" -lt "$all"

# two copies through two connections (two smbd processes) beside the
# neighbour, under strace: their pieces take the disk's turn (a flock()
# on the disk's stat in sysfs), so one piece of the two is at the device
# at once, and each waits for the other's; before the turn each kept a
# piece out, two at once
head -c $((256 * MiB)) /dev/urandom >"$CG_SHARE/one.bin"
head -c $((256 * MiB)) /dev/urandom >"$CG_SHARE/two.bin"
chmod 0644 "$CG_SHARE/one.bin" "$CG_SHARE/two.bin"
sync
cg_drop_cache "$CG_SHARE/one.bin"
cg_drop_cache "$CG_SHARE/two.bin"
"$CG_BUILD/hotreader" -d -r 200 -t 60 "$CG_SHARE/hot.bin" >/dev/null &
hot=$!
strace -f -qq -ttt -T -e trace=preadv2 -o "$CG_ROOT/strace.two" \
	-p "$CG_SMBD_PID" &
trace=$!
sleep 1
gets=()
for f in one two; do
	cg_smbclient paced "get $f.bin $CG_ROOT/got.$f" >/dev/null 2>&1 &
	gets+=($!)
done
wait "${gets[@]}"
sleep 0.5
kill "$trace" "$hot" 2>/dev/null
wait "$trace" "$hot" 2>/dev/null
for f in one two; do
	cg_expect "[paced, two copies] $f.bin is byte-identical" \
		cmp -s "$CG_SHARE/$f.bin" "$CG_ROOT/got.$f"
done
waits=$(grep 'direct stream paced: ' "$CG_LOG" | tail -n 2 |
	sed -n 's/.*, \([0-9]*\) waited for the turn.*/\1/p')
two=$(overlap two)
echo "two copies beside the neighbour: reads at once $two; pieces that" \
	"waited for the turn:" $waits
cg_expect "[paced, two copies] one read of the two at the device at once" \
	test "$two" -eq 1
cg_expect "[paced, two copies] both streams' ends tell their turns" \
	test "$(wc -w <<<"$waits")" -eq 2
cg_expect "[paced, two copies] pieces waited for the other's turn" \
	test "$(($(tr ' ' '+' <<<"$waits" | tr -d '\n') + 0))" -gt 0
rm -f "$CG_SHARE/one.bin" "$CG_SHARE/two.bin" "$CG_ROOT"/got.*

# --- every size and alignment, both read paths ------------------------------
v=$CG_SHARE/v.bin
head -c $((64 * MiB + 12345)) /dev/urandom >"$v"
chmod 0644 "$v"
for share in paced pacedsync; do
	for args in "-n 1000 random" "-n 1 seq" "-n 4 mixed"; do
		sync
		cg_drop_cache "$v"
		# shellcheck disable=SC2086
		out=$("$CG_BUILD/smb_verify" -p "$CG_PORT" \
			-U "$CG_USER%$CG_PASS" -s 11 $args \
			"//127.0.0.1/$share/v.bin" "$v" 2>&1)
		cg_expect "[$share] smb_verify $args: every byte right" \
			grep -q '^ok ' <<<"$out"
	done
done
cg_expect "no smbd panicked" test "$(grep -c PANIC "$CG_LOG")" = 0
exit 0
