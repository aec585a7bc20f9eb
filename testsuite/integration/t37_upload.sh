#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Uploads through real smbd and smbclient: a 1 GiB + 123 byte put through
# every mode is byte-identical and leaves at most 48 MiB of the file
# cached, peaking at 64 MiB while it runs (a plain share keeps it all);
# the same through smbd's recvfile path and its synchronous writes (aio
# write size = 0; 96 MiB per mode); a small file
# and random writes stay cached; a client that vanishes, or
# its smbd killed, mid-upload loses no acknowledged byte; and a
# writeback error reaches whoever it reaches through a plain share, in
# every mode: the client's flush; a later open's fsync when the client
# closed without flushing; the flush of a durable handle the client
# reconnects after its connection dropped (in another smbd process).
#
# The error is a real one, from the kernel: a share on ext4 (no journal)
# on a loop device whose image lives in a small tmpfs. Once the tmpfs is
# full, the loop device fails the writes: ext4 loses the pages' write
# ("lost async page write") and records the error for the file. The
# client writes half its upload, pauses while the filesystem is synced
# (the writeback of all that is dirty fails), then, with the space given
# back, writes the other half, whose writeback succeeds. Whoever waits
# for any writeback of the file on the open file description afterwards
# is told of the error and marks it seen (errseq): had the module's
# write-behind waited so, neither a later open nor the reconnected
# handle (a new open) would hear of it.
# (vfs_cgtest sits below cacheguard in the VFS, but the module's
# writeback calls are system calls, not VFS calls, so no test module
# can fail them.)
. "$(dirname "$0")/../lib/script.sh" "uploads" "$@"

size=$((1024 * MiB + 123))
modes="dontneed direct dontcache auto"

cg_smbd_init
cg_mode_shares "" "$modes" "cacheguard:window = 8M"

# Synchronous writes (aio write size = 0): answered as the hook returns,
# so a stream that lags catches up instead of being held
for m in dontneed dontcache; do
	cg_share "syncw-$m" "vfs objects = cacheguard" "cacheguard:mode = $m" \
		"cacheguard:window = 8M" "aio write size = 0"
done

# Every write followed by smbd's own fsync, through the module's hook
cg_share syncalways "vfs objects = cacheguard" "cacheguard:mode = dontneed" \
	"cacheguard:window = 8M" "strict sync = yes" "sync always = yes"

# The failing filesystem: a 1 GiB ext4 image in a 96 MiB tmpfs
wbtmp=$CG_ROOT/wbtmp wbfs=$CG_ROOT/wbfs
mkdir -p "$wbtmp" "$wbfs"
if mount -t tmpfs -o size=96m tmpfs "$wbtmp"; then
	CG_MOUNTS="$wbtmp ${CG_MOUNTS:-}"
	truncate -s 1G "$wbtmp/img"
	# inode tables written now, so that they are in the tmpfs already
	if mkfs.ext4 -q -F -m 0 -O ^has_journal -E lazy_itable_init=0 \
		"$wbtmp/img" >"$CG_ROOT/log/mkfs-wb.out" 2>&1 &&
		mount -o loop "$wbtmp/img" "$wbfs"; then
		CG_MOUNTS="$wbfs ${CG_MOUNTS:-}"
		chmod 1777 "$wbfs"
	fi
fi
# durable handles need smbd's own share modes and locks
for m in plain $modes; do
	cg_share_at "wb-$m" "$wbfs" "vfs objects = cacheguard" \
		"cacheguard:mode = ${m/plain/off}" "cacheguard:window = 8M" \
		"kernel oplocks = no" "kernel share modes = no" \
		"posix locking = no" "durable handles = yes"
done
cg_smbd_start || { cg_fail "smbd starts" "see above"; exit 1; }

src=$CG_ROOT/src.bin
head -c "$size" /dev/urandom >"$src"
sum=$(md5sum <"$src" | cut -d' ' -f1)

# put SHARE NAME LOCAL: upload; sets resident (after the close), peak,
# dirty-free sameness (same) of the file on the share
put()
{
	local share=$1 name=$2 local=$3 out=$CG_ROOT/put.out
	local file=$CG_SHARE/$name

	rm -f "$file"
	sync
	# (the file appears with the put; cgcache says so until then)
	cg_sample_start "$file" 2>/dev/null
	cg_smbclient "$share" "put $local $name" >"$out" 2>&1
	cg_sample_stop
	resident=$(cg_resident "$file" 2>/dev/null || echo -1)
	kept=$(cg_kept "$file" 2>/dev/null || echo -1)
	peak=$CG_PEAK
	same=no
	if [ "$(md5sum <"$file" | cut -d' ' -f1)" = \
		"$(md5sum <"$local" | cut -d' ' -f1)" ]; then
		same=yes
	fi
}

put plain big.bin "$src"
cg_expect "[plain] upload is byte-identical" test "$same" = yes
cg_expect_ge "[plain] share leaves the uploaded file cached" "$kept" \
	$((size * 95 / 100))
for m in $modes; do
	put "$m" big.bin "$src"
	cg_expect "[$m] 1 GiB + 123 upload is byte-identical" test "$same" = yes
	# smbclient keeps 16 MiB of writes in flight (cli_push: two of
	# 8 MiB). dontneed and direct hold the answers once the front is
	# 4 windows past what is dropped (CG_W_MAX_BEHIND), so a device
	# slower than the client leaves at most those 32 MiB and the
	# writes in flight dirty at the close, and at most 32 MiB and
	# twice the writes in flight (those held, and those sent once they
	# are answered) while it runs. Before the hold counted from what
	# was dropped, t37 saw 72 MiB under load (test_write:
	# test_footprint_bound). dontcache and auto count from the end of
	# the running job's wait, for the device's sake; the kernel drops
	# their pages as their writeback ends.
	cg_expect_le "[$m] cached after the upload" "$resident" $((48 * MiB))
	cg_expect_le "[$m] peak cached during the upload" "$peak" \
		$((64 * MiB))
done
cg_expect "an upload stream was seen, written back and dropped" \
	grep -qE "big.bin: written $size mode dontneed; .*dropped [1-9]" \
	"$CG_LOG"
cg_expect "dontcache wrote the stream with RWF_DONTCACHE" \
	grep -qE "big.bin: written $size mode dontcache; .*uncached [1-9]" \
	"$CG_LOG"
rm -f "$CG_SHARE/big.bin"

# A client that vanishes, or its smbd killed, in the middle of an upload
# (write-behind jobs running, nothing flushed): every byte the server had
# acknowledged is in the file
for m in $modes; do
	for how in client smbd; do
		rm -f "$CG_ROOT/ready" "$CG_ROOT/acked.bin" "$CG_SHARE/gone.bin"
		"$CG_TOP/testsuite/tools/smb_upload.py" -p "$CG_PORT" \
			-U "$CG_USER%$CG_PASS" abandon "//127.0.0.1/$m/gone.bin" \
			$((64 * MiB + 5)) "$CG_ROOT/acked.bin" "$CG_ROOT/ready" \
			>"$CG_ROOT/abandon.out" 2>&1 &
		client=$!
		if ! cg_wait_file "$CG_ROOT/ready"; then
			cg_fail "[$m] an upload, then its $how gone" \
				"$(cat "$CG_ROOT/abandon.out")"
			kill "$client" 2>/dev/null
			wait "$client"
			continue
		fi
		if [ "$how" = smbd ]; then
			# shellcheck disable=SC2046
			kill -9 $(cg_smbd_holding gone.bin) 2>/dev/null
		fi
		kill -9 "$client" 2>/dev/null
		wait "$client" 2>/dev/null
		# smbd closes the file once it sees the connection gone
		for _ in $(seq 100); do
			[ -z "$(cg_smbd_holding gone.bin)" ] && break
			sleep 0.1
		done
		cg_expect "[$m] $how gone mid-upload: every acknowledged byte is in the file" \
			cmp -s "$CG_ROOT/acked.bin" "$CG_SHARE/gone.bin"
	done
done
rm -f "$CG_ROOT/ready" "$CG_ROOT/acked.bin" "$CG_SHARE/gone.bin"

# sync always: flushes interleave with the write-behind jobs
head -c $((96 * MiB + 5)) /dev/urandom >"$CG_ROOT/mid.bin"
put syncalways mid.bin "$CG_ROOT/mid.bin"
cg_expect "[sync always] a 96 MiB upload is byte-identical" \
	test "$same" = yes
cg_expect "[sync always] the upload was a write stream" \
	grep -qE "mid.bin: written $((96 * MiB + 5)) mode dontneed; .*jobs" \
	"$CG_LOG"
rm -f "$CG_SHARE/mid.bin"

for m in dontneed dontcache; do
	before=$(grep -c "mid.bin: synchronous pwrite of " "$CG_LOG")
	put "syncw-$m" mid.bin "$CG_ROOT/mid.bin"
	cg_expect "[$m] synchronous writes: a 96 MiB upload is byte-identical" \
		test "$same" = yes
	cg_expect "[$m] synchronous writes: through the module's pwrite" test \
		"$(grep -c "mid.bin: synchronous pwrite of " "$CG_LOG")" \
		-gt "$before"
	# the same bounds as smbd's asynchronous writes (above)
	cg_expect_le "[$m] synchronous writes: cached after the upload" \
		"$resident" $((48 * MiB))
	cg_expect_le "[$m] synchronous writes: peak cached during the upload" \
		"$peak" $((64 * MiB))
	rm -f "$CG_SHARE/mid.bin"
done

# Below min file size (16M): untouched, in every mode
head -c $((12 * MiB)) /dev/urandom >"$CG_ROOT/small.bin"
for m in $modes; do
	put "$m" small.bin "$CG_ROOT/small.bin"
	cg_expect "[$m] a 12 MiB upload is byte-identical" test "$same" = yes
	cg_expect_ge "[$m] a 12 MiB upload stays cached" "$kept" \
		$((12 * MiB))
done

# Random 64 KiB writes: every page they wrote stays cached
for m in dontneed dontcache; do
	out=$("$CG_TOP/testsuite/tools/smb_upload.py" -p "$CG_PORT" \
		-U "$CG_USER%$CG_PASS" random "//127.0.0.1/$m/rnd.bin" \
		$((256 * MiB)) 1500 7 2>&1)
	touched=$(sed -n 's/^touched //p' <<<"$out")
	if [ -z "$touched" ]; then
		cg_fail "[$m] random writes through the share" "$out"
		continue
	fi
	cg_expect_ge "[$m] random writes stay cached" \
		"$(cg_kept "$CG_SHARE/rnd.bin")" "$touched"
	rm -f "$CG_SHARE/rnd.bin"
done

# The writeback error reaches the flush, a later open, a reconnect
if ! mountpoint -q "$wbfs"; then
	cg_skip "writeback errors" "no tmpfs-backed ext4 loop filesystem"
	exit 0
fi
# fsync_later FILE: a local open's fsync of FILE, as any later reader
# (another client's flush, a backup tool) would make it: "fsync ok" or
# "fsync failed ERRNO"
fsync_later()
{
	python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
try:
    os.fsync(fd)
    print("fsync ok")
except OSError as e:
    print("fsync failed %d" % e.errno)' "$1"
}
for kind in flush close durable; do
for m in plain $modes; do
	ready=$CG_ROOT/ready go=$CG_ROOT/go
	rm -f "$wbfs"/up.bin "$ready" "$go" "$wbtmp/filler"
	sync
	# the last upload's blocks go back to the tmpfs: every run starts
	# from the same free space, and no block is backed already
	fstrim "$wbfs"
	# 4 MiB of the tmpfs left: the upload's writeback fails soon
	free=$(df -B1 --output=avail "$wbtmp" | tail -n 1)
	head -c $((free - 4 * MiB)) /dev/zero >"$wbtmp/filler" 2>/dev/null
	"$CG_TOP/testsuite/tools/smb_upload.py" -p "$CG_PORT" \
		-U "$CG_USER%$CG_PASS" "$kind" "//127.0.0.1/wb-$m/up.bin" \
		$((96 * MiB)) "$ready" "$go" >"$CG_ROOT/flush.out" 2>&1 &
	client=$!
	if ! cg_wait_file "$ready"; then
		cg_fail "[$m] $kind: writeback error" \
			"the client never got half way"
		kill "$client" 2>/dev/null
		wait "$client"
		continue
	fi
	# The writeback of the first half fails now, then space comes back
	sync -f "$wbfs"
	rm -f "$wbtmp/filler"
	touch "$go"
	wait "$client"
	out=$(tr '\n' ' ' <"$CG_ROOT/flush.out")
	case $kind in
	flush)
		cg_expect "[$m] the writeback error reaches the client's flush ($out)" \
			grep -q '^flush failed' "$CG_ROOT/flush.out"
		;;
	close)
		cg_expect "[$m] closed without a flush: the close succeeds ($out)" \
			grep -q '^close ok' "$CG_ROOT/flush.out"
		# the full tmpfs under the loop device: EIO, or ENOSPC
		# where the loop device passes its backing file's error
		# up (the plain share in Debian 13's root, CI)
		later=$(fsync_later "$wbfs/up.bin")
		cg_expect "[$m] ... and a later open's fsync gets the error ($later)" \
			grep -qxE "fsync failed (5|28)" <<<"$later"
		;;
	durable)
		cg_expect "[$m] a durable handle reconnects after its connection dropped ($out)" \
			grep -q '^reconnect ok' "$CG_ROOT/flush.out"
		cg_expect "[$m] ... and its flush gets the error" \
			grep -q '^flush failed' "$CG_ROOT/flush.out"
		;;
	esac
done
done

# Uploads through smbd's recvfile path ("min receivefile size"; smbclient
# does not sign): the writes come from the socket into the file
cg_smbd_stop
sed -i 's/^\[global\]$/[global]\n\tmin receivefile size = 16384/' "$CG_CONF"
cg_smbd_start || { cg_fail "smbd starts with recvfile" "see above"; exit 1; }
for m in $modes; do
	before=$(grep -c "mid.bin: recvfile of " "$CG_LOG")
	put "$m" mid.bin "$CG_ROOT/mid.bin"
	cg_expect "[$m] recvfile: a 96 MiB upload is byte-identical" \
		test "$same" = yes
	cg_expect "[$m] recvfile: the writes went through recvfile" test \
		"$(grep -c "mid.bin: recvfile of " "$CG_LOG")" -gt "$before"
	cg_expect_le "[$m] recvfile: cached after the upload" "$resident" \
		$((48 * MiB))
	cg_expect_le "[$m] recvfile: peak cached during the upload" "$peak" \
		$((64 * MiB))
	rm -f "$CG_SHARE/mid.bin"
done

# An upload under memory pressure never fails its flush (issue 22, point
# 1): starting writeback (SYNC_FILE_RANGE_WRITE, WB_SYNC_NONE) fails
# with ENOMEM or EAGAIN there while blocking writeback retries, and the
# data lands; only what blocking writeback reports may reach the
# client. smbd (and so the connection's process it forks) runs in a
# memory cgroup of 64 MiB while a client writes 160 MiB and flushes;
# the cgroup's peak usage shows the pressure was there.
# test_write's test_start_error_is_no_error fails the start
# call itself.
. "$CG_TOP/testsuite/bench/cgroup.sh"
if ! bench_cg_detect >/dev/null 2>&1 || ! bench_cg_top ||
	! bench_cg_make "$BENCH_CG_TOP/up" $((64 * MiB)); then
	cg_fail "an upload under memory pressure" "no memory cgroup here"
	exit 0
fi
echo "$CG_SMBD_PID" >"$BENCH_CG_TOP/up/cgroup.procs"
for m in plain $modes; do
	rm -f "$CG_SHARE/up.bin"
	touch "$CG_ROOT/go"
	"$CG_TOP/testsuite/tools/smb_upload.py" -p "$CG_PORT" \
		-U "$CG_USER%$CG_PASS" flush "//127.0.0.1/$m/up.bin" \
		$((160 * MiB)) "$CG_ROOT/ready" "$CG_ROOT/go" \
		>"$CG_ROOT/flush.out" 2>&1
	out=$(tr '\n' ' ' <"$CG_ROOT/flush.out")
	cg_expect "[$m] 160 MiB in a 64 MiB memory cgroup: flush and close succeed ($out)" \
		grep -q 'flush ok close ok' <<<"$out"
	cg_expect "[$m] 160 MiB in a 64 MiB memory cgroup: every byte written" \
		test "$(stat -c %s "$CG_SHARE/up.bin")" = $((160 * MiB))
done
peak=memory.peak
[ "$BENCH_CG_VERSION" = 1 ] && peak=memory.max_usage_in_bytes
cg_expect_ge "the memory cgroup's peak usage: under pressure" \
	"$(cat "$BENCH_CG_TOP/up/$peak" 2>/dev/null || echo 0)" $((60 * MiB))
cg_expect "smbd stayed in its memory cgroup (no OOM kill)" \
	test "$(bench_cg_oom_kills "$BENCH_CG_TOP/up")" = 0
rm -f "$CG_SHARE/up.bin"
cg_smbd_stop
bench_cg_cleanup
exit 0
