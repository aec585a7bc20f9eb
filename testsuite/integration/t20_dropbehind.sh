#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# dontneed mode through real smbd and smbclient, cold cache: the copy's
# footprint stays bounded on every read path (pread_send, sendfile,
# io_uring below us): within the kernel's readahead (the readahead budget)
# and two client reads for a stream alone, under two client reads without
# the budget, where it reads ahead on its own in pieces it drops as it
# goes; hot files, small files and random readers are left
# alone, and every byte is right.
. "$(dirname "$0")/../lib/script.sh" "drop-behind" "$@"

window=$((8 * MiB))
guard=("vfs objects = cacheguard" "cacheguard:mode = dontneed"
	"cacheguard:window = 8M")

cg_smbd_init
cg_share plain
cg_share guard "${guard[@]}"
cg_share sendfile "${guard[@]}" "use sendfile = yes" "aio read size = 0"
cg_share uring "vfs objects = cacheguard io_uring" "cacheguard:mode = dontneed"
cg_share ro "${guard[@]}" "read only = yes"
cg_share bounded "${guard[@]}" "cacheguard:readahead memory = 0"
cg_smbd_start || { cg_fail "smbd starts" "see above"; exit 1; }

big=$CG_SHARE/big.bin
head -c $((1024 * MiB)) /dev/urandom >"$big"
# window + readahead + 32M, the bound the drop-behind promises. Before a
# stream is seen the readahead is the kernel's (up to two windows of the
# device's read_ahead_kb ahead of the reader); an active stream's is its
# own (cacheguard:readahead, 4M by default), smaller here.
readahead=$((2 * $(cg_device_readahead "$big")))
bound=$((window + readahead + 32 * MiB))
echo "bound: window $window + readahead $readahead + 32 MiB = $bound"
# A stream alone on the server holds the readahead budget (cacheguard:
# readahead memory): the kernel's readahead with FADV_SEQUENTIAL, up to
# two windows of twice read_ahead_kb (the device's as it is; 4 MiB when
# unknown), and two client reads in flight, not yet dropped
dev_ra=$(cg_device_readahead "$big")
[ "$dev_ra" -gt 0 ] || dev_ra=$((4 * MiB))
kernel_bound=$((4 * dev_ra + 16 * MiB))
bound=$((bound > kernel_bound ? bound : kernel_bound))
echo "a stream with the kernel's readahead: 4 x $dev_ra + 16 MiB" \
	"= $kernel_bound"

# copy SHARE FILE: cold copy to a local file; sets resident, peak, same
copy()
{
	local share=$1 file=$2 out=$CG_ROOT/copy.out
	local back=$CG_ROOT/back.bin sum

	sum=$(md5sum <"$file" | cut -d' ' -f1)
	sync
	cg_drop_cache "$file"
	cg_sample_start "$file"
	rm -f "$back"
	cg_smbclient "$share" "get $(basename "$file") $back" >"$out" 2>&1
	cg_sample_stop
	resident=$(cg_resident "$file")
	kept=$(cg_kept "$file")
	peak=$CG_PEAK
	same=no
	if [ "$(md5sum <"$back" | cut -d' ' -f1)" = "$sum" ]; then
		same=yes
	fi
	rm -f "$back"
}

copy plain "$big"
cg_expect_ge "plain share leaves the 1 GiB file cached" "$kept" \
	$((1024 * MiB * 95 / 100))

# sendfile hands the pages of a read to the socket, which holds them
# until they are sent: a drop-behind cannot free those, so the reads in
# flight there are one read (8 MiB from smbclient) more than the socket
# has sent
for share in guard sendfile uring ro bounded; do
	copy "$share" "$big"
	limit=$bound
	[ "$share" = sendfile ] && limit=$((bound + 8 * MiB))
	cg_expect "[$share] copy is byte-identical" test "$same" = yes
	cg_expect_le "[$share] resident after the copy" "$resident" "$bound"
	cg_expect_le "[$share] peak resident during the copy" "$peak" \
		"$limit"
	case $share in
	sendfile) ;;
	bounded)
		# Without the budget a stream reads ahead on its own, in
		# 1 MiB pieces it drops once read: its readahead (one 8 MiB
		# client read) and a piece per read in flight, less than the
		# two reads smbclient keeps in flight (window drops alone
		# kept a window more and both reads: 24 MiB)
		cg_expect_le \
			"[$share] peak resident, a stream alone: under 2 client reads" \
			"$peak" $((16 * MiB - 1))
		;;
	*)
		cg_expect_le \
			"[$share] peak resident, a stream alone: the kernel's readahead and 2 client reads" \
			"$peak" "$kernel_bound"
		;;
	esac
done
cg_expect "[guard] the stream kept the kernel's readahead" \
	grep -qE "big.bin: .*streams 1 \(kernel readahead 1\)" "$CG_LOG"
cg_expect "[bounded] without the budget it read ahead on its own" \
	grep -qE "big.bin: .*streams 1 \(kernel readahead 0\)" "$CG_LOG"
cg_expect "the sendfile share read through SMB_VFS_SENDFILE" \
	grep -qE "big.bin: .*sendfile [1-9]" "$CG_LOG"
cg_expect "the guard share read through SMB_VFS_PREAD_SEND" \
	grep -qE "big.bin: .*pread_send [1-9]" "$CG_LOG"

# Hot: pre-read by someone else, then copied: left alone
cg_drop_cache "$big"
"$CG_BUILD/cgcache" load "$big"
cg_smbclient guard "get big.bin /dev/null" >/dev/null 2>&1
cg_expect_ge "a hot file stays cached after a guarded copy" \
	"$(cg_kept "$big")" \
	$((1024 * MiB * 95 / 100))
# The client owns no file and can write none: on a read-only share too
cg_smbclient ro "get big.bin /dev/null" >/dev/null 2>&1
cg_expect_ge "[ro] a hot file stays cached after a copy" "$(cg_kept "$big")" \
	$((1024 * MiB * 95 / 100))

# A copy given up after 48 MiB drops what it read and the readahead it
# caused, not the file: the 40% another reader keeps cached further on
# stays cached
others_off=$((512 * MiB)) others_len=$((410 * MiB))
cg_drop_cache "$big"
"$CG_BUILD/cgcache" load "$big" "$others_off" "$others_len"
out=$("$CG_BUILD/smb_verify" -p "$CG_PORT" -U "$CG_USER%$CG_PASS" \
	-m $MiB -l $((48 * MiB)) seq //127.0.0.1/guard/big.bin "$big" 2>&1)
cg_expect "a copy given up after 48 MiB read the right bytes" \
	grep -q '^ok ' <<<"$out"
cg_expect_ge "a given-up copy leaves another reader's 40% cached" \
	"$(cg_kept "$big" "$others_off" "$others_len")" \
	$((others_len * 95 / 100))
cg_expect_le "a given-up copy drops what it read" \
	"$(cg_resident "$big" 0 "$others_off")" "$bound"

# The oracle of the "stays cached" checks (cg_kept): a page the
# machine's memory pressure took counts as kept, a page dropped does
# not. The pressure: 32 MiB read in an 8 MiB memory cgroup.
oracle=$CG_ROOT/oracle.bin
head -c $((32 * MiB)) /dev/urandom >"$oracle"
cg_drop_cache "$oracle"
. "$CG_TOP/testsuite/bench/cgroup.sh"
if ! "$CG_BUILD/cgcache" evicted "$oracle" >/dev/null 2>&1; then
	cg_skip "the oracle counts what reclaim took" \
		"no cachestat(2) in Linux $(uname -r): cg_kept counts" \
		"resident pages alone"
elif ! bench_cg_detect >/dev/null 2>&1 || ! bench_cg_top ||
	! bench_cg_make "$BENCH_CG_TOP/oracle" $((8 * MiB)); then
	cg_skip "the oracle counts what reclaim took" "no memory cgroup here"
	bench_cg_cleanup
else
	bench_cg_run "$BENCH_CG_TOP/oracle" "$CG_BUILD/cgcache" load "$oracle"
	cg_expect_le "the oracle: 32 MiB read in 8 MiB of memory, reclaimed" \
		"$(cg_resident "$oracle")" $((16 * MiB))
	cg_expect_ge "the oracle: what reclaim took counts as kept" \
		"$(cg_kept "$oracle")" $((32 * MiB))
	# all of it read back (a refault replaces the trace), then dropped
	"$CG_BUILD/cgcache" load "$oracle"
	cg_drop_cache "$oracle"
	cg_expect_le "the oracle: what was dropped does not count" \
		"$(cg_kept "$oracle")" 0
	bench_cg_cleanup
fi
rm -f "$oracle"

# Below min file size (16M): untouched
small=$CG_SHARE/small.bin
head -c $((12 * MiB)) /dev/urandom >"$small"
copy guard "$small"
cg_expect "a 12 MiB file copies byte-identical" test "$same" = yes
cg_expect_ge "a 12 MiB file (below min file size) stays cached" \
	"$kept" $((12 * MiB))

# Random 4-64 KiB reads through the share: every page they read stays
cg_drop_cache "$big"
out=$("$CG_BUILD/smb_verify" -p "$CG_PORT" -U "$CG_USER%$CG_PASS" -n 2000 \
	small //127.0.0.1/guard/big.bin "$big" 2>&1)
touched=$(echo "$out" | sed -n 's/^touched //p')
kept=$(cg_kept "$big")
if [ -z "$touched" ]; then
	cg_fail "random reads through the share" "smb_verify: $out"
else
	cg_pass "random reads through the share return the right bytes"
	cg_expect_ge "random reads are not dropped" "$kept" "$touched"
fi

# smbtorture's read tests with the module loaded. smb2.rw.invalid expects
# DISK_FULL for a write at 2^63 and fails on a plain ext4 share too.
for t in smb2.read smb2.rw.rw1 smb2.rw.rw2; do
	if smbtorture "//127.0.0.1/guard" -p "$CG_PORT" \
		-U "$CG_USER%$CG_PASS" "$t" >"$CG_ROOT/torture.out" 2>&1; then
		cg_pass "smbtorture $t on the guarded share"
	else
		cg_fail "smbtorture $t on the guarded share" \
			"$(grep -E '^(failure|error)' "$CG_ROOT/torture.out" |
				head -n 3)"
	fi
done
exit 0
