#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Every mode on every filesystem gives the right bytes: ext4, xfs and
# btrfs on loop devices made here, and tmpfs; smbclient copies of edge
# sizes and thousands of random unaligned reads through libsmbclient.
# Filesystems without RWF_DONTCACHE fall back with one log line, and a
# cold dontcache copy leaves (almost) nothing cached. auto on a FUSE
# filesystem (bindfs) drops behind: its files change beyond the kernel's
# sight.
. "$(dirname "$0")/../lib/script.sh" "modes on ext4, xfs, btrfs and tmpfs" "$@"

modes="dontneed dontcache direct auto"
sizes="0 1 511 4095 4097 $((MiB + 1)) $((257 * MiB + 123))"
# A low trigger so that every file above 1 MiB streams
tune=("cacheguard:min file size = 1M" "cacheguard:stream trigger = 512K")

cg_smbd_init
filesystems=
for fs in ext4 xfs btrfs tmpfs; do
	if cg_mount_fs "$fs" "$CG_ROOT/mnt/$fs"; then
		filesystems="$filesystems $fs"
		cg_mode_shares_at "${fs}_" "$CG_ROOT/mnt/$fs" "$modes" \
			"${tune[@]}"
	else
		cg_skip "$fs" "cannot make or mount one here (see" \
			"$CG_ROOT/log/mkfs-$fs.out)"
	fi
done
cg_share_at ext4_dontcache_cold "$CG_ROOT/mnt/ext4" \
	"vfs objects = cacheguard" "cacheguard:mode = dontcache"
for mode in dontcache direct; do
	cg_share_at "ext4_${mode}_ra" "$CG_ROOT/mnt/ext4" \
		"vfs objects = cacheguard" "cacheguard:mode = $mode" \
		"cacheguard:readahead = 32M"
done
# A FUSE filesystem (bindfs over a directory of the ext4 one): its files
# change beyond the kernel's sight, so auto must drop behind there, where
# the probe alone picked direct (O_DIRECT works through FUSE)
fuse=
if [ -c /dev/fuse ] && command -v bindfs >/dev/null &&
	mkdir -p "$CG_ROOT/mnt/ext4/fuse-src" "$CG_ROOT/mnt/fuse" &&
	bindfs -o allow_other "$CG_ROOT/mnt/ext4/fuse-src" \
		"$CG_ROOT/mnt/fuse" 2>"$CG_ROOT/log/bindfs.out"; then
	fuse=$CG_ROOT/mnt/fuse
	CG_MOUNTS="$fuse ${CG_MOUNTS:-}"
	cg_share_at fuse_auto "$fuse" "vfs objects = cacheguard" \
		"cacheguard:mode = auto" "${tune[@]}"
fi
cg_smbd_start || { cg_fail "smbd starts" "see above"; exit 1; }

mkdir -p "$CG_ROOT/back"
for fs in $filesystems; do
	dir=$CG_ROOT/mnt/$fs
	for size in $sizes; do
		head -c "$size" /dev/urandom >"$dir/f$size"
	done
	sync
	for mode in $modes; do
		share=${fs}_$mode
		bad=
		cmds=
		for size in $sizes; do
			cg_drop_cache "$dir/f$size"
			cmds="$cmds get f$size $CG_ROOT/back/f$size;"
		done
		cg_smbclient "$share" "$cmds" >"$CG_ROOT/log/client.out" 2>&1
		for size in $sizes; do
			cmp -s "$dir/f$size" "$CG_ROOT/back/f$size" ||
				bad="$bad $size"
			rm -f "$CG_ROOT/back/f$size"
		done
		if [ -n "$bad" ]; then
			cg_fail "[$share] smbclient copies of $sizes bytes" \
				"differ for:$bad"
		else
			cg_pass "[$share] smbclient copies of 7 edge sizes"
		fi
		big=$dir/f$((257 * MiB + 123))
		cg_drop_cache "$big"
		out=$("$CG_BUILD/smb_verify" -p "$CG_PORT" \
			-U "$CG_USER%$CG_PASS" -n 200 -s 7 -m $MiB \
			mixed "//127.0.0.1/$share/$(basename "$big")" "$big" 2>&1)
		cg_expect "[$share] random and sequential reads ($out)" \
			test "${out#ok }" != "$out"
	done
done

# btrfs has no RWF_DONTCACHE: one session reading two files from the
# dontcache share logs the fallback once, and the bytes are right
if [[ " $filesystems " == *" btrfs "* ]]; then
	dir=$CG_ROOT/mnt/btrfs
	head -c $((64 * MiB)) /dev/urandom >"$dir/g1"
	cp "$dir/g1" "$dir/g2"
	cg_drop_cache "$dir/g1"
	cg_drop_cache "$dir/g2"
	before=$(grep -c "has no RWF_DONTCACHE" "$CG_LOG")
	cg_smbclient btrfs_dontcache \
		"get g1 $CG_ROOT/back/g1; get g2 $CG_ROOT/back/g2" \
		>/dev/null 2>&1
	after=$(grep -c "has no RWF_DONTCACHE" "$CG_LOG")
	# before cmp reads the files locally
	cg_expect_le "the fallback files were still dropped behind" \
		$(($(cg_resident "$dir/g1") + $(cg_resident "$dir/g2"))) \
		$((16 * MiB))
	cg_expect "btrfs dontcache fallback: right bytes" \
		cmp "$dir/g1" "$CG_ROOT/back/g1"
	cg_expect "btrfs dontcache fallback: right bytes (second file)" \
		cmp "$dir/g2" "$CG_ROOT/back/g2"
	cg_expect "btrfs dontcache fallback logged once per smbd" \
		test $((after - before)) -eq 1
fi

# More filesystems than the old 32-entry table (btrfs subvolumes each
# have a device of their own): each is found out once, like the first
# ones, and no stream pays a failing uncached read per request
if [[ " $filesystems " == *" btrfs "* ]]; then
	dir=$CG_ROOT/mnt/btrfs
	nsub=40
	head -c $((16 * MiB)) /dev/urandom >"$CG_ROOT/sub.src"
	cmds=
	for i in $(seq 1 $nsub); do
		btrfs -q subvolume create "$dir/sub$i" >/dev/null
		chmod 0755 "$dir/sub$i"
		cp "$CG_ROOT/sub.src" "$dir/sub$i/f"
		cmds="$cmds get sub$i/f $CG_ROOT/back/sub$i;"
	done
	sync
	for i in $(seq 1 $nsub); do
		cg_drop_cache "$dir/sub$i/f"
	done
	before=$(grep -c "has no RWF_DONTCACHE" "$CG_LOG")
	cg_smbclient btrfs_dontcache "$cmds" >"$CG_ROOT/log/client.out" 2>&1
	bad=0
	for i in $(seq 1 $nsub); do
		cmp -s "$CG_ROOT/sub.src" "$CG_ROOT/back/sub$i" ||
			bad=$((bad + 1))
	done
	cg_expect "$nsub btrfs subvolumes: every copy byte-identical" \
		test "$bad" = 0
	cg_expect "each of $nsub devices is found without RWF_DONTCACHE once" \
		test $(($(grep -c "has no RWF_DONTCACHE" "$CG_LOG") - before)) \
		-eq "$nsub"
	# Reads in flight when the first one fails fail too; after that
	# the file's mode is dontneed, and stays so, on every device
	cg_expect "every subvolume's file ends in dontneed, the fallback kept" \
		test "$(grep -cE "sub[0-9]+/f: size .* mode dontneed;" \
			"$CG_LOG")" -eq "$nsub"
fi

# auto's probe on a descriptor opened for writing only (an upload that
# asked for write access alone) gets EBADF from its uncached read: no
# answer. Taken for RWF_DONTCACHE support, the same smbd served the next
# stream of btrfs, which has none, with a failed uncached read and a
# fallback; it must ask again and serve it direct.
if [[ " $filesystems " == *" btrfs "* ]]; then
	dir=$CG_ROOT/mnt/btrfs
	head -c $((64 * MiB)) /dev/urandom >"$dir/w1.src"
	sync
	cg_drop_cache "$dir/w1.src"
	out=$("$CG_TOP/testsuite/tools/smb_upload.py" -p "$CG_PORT" \
		-U "$CG_USER%$CG_PASS" wronly //127.0.0.1/btrfs_auto/w1.new \
		$((2 * MiB)) w1.src 2>&1)
	if [ $? -eq 77 ]; then
		cg_skip "auto's probe on a write-only descriptor" "$out"
	else
		sum=$(sha256sum <"$dir/w1.src" | cut -d' ' -f1)
		cg_expect "write-only upload, then a read: right bytes ($out)" \
			test "$out" = "read $((64 * MiB)) $sum"
		cg_expect "after a write-only probe a btrfs stream is direct" \
			grep -qE "w1.src: size .* mode direct;.* fallbacks 0" \
			"$CG_LOG"
	fi
fi

# The file changes under a stream (writes through SMB and local, unsynced;
# a truncate): in every mode the reader gets the current bytes
if [[ " $filesystems " == *" ext4 "* ]]; then
	c=$CG_ROOT/mnt/ext4/c.bin
	for mode in dontneed dontcache auto; do
		for what in smbwrite localwrite truncate; do
			head -c $((128 * MiB)) /dev/urandom >"$c"
			# the SMB writer writes a file of its own user
			chown "$CG_USER" "$c"
			sync
			cg_drop_cache "$c"
			out=$("$CG_BUILD/smb_direct_check" -p "$CG_PORT" \
				-U "$CG_USER%$CG_PASS" -s 5 "$what" \
				"//127.0.0.1/ext4_$mode/c.bin" "$c" 2>&1)
			cg_expect "[ext4_$mode] $what under a stream: right bytes" \
				grep -q '^ok ' <<<"$out"
		done
	done
fi

# cold_copy SHARE: a cold copy of $big; sets peak and behind (sampled:
# all of it, and what lay more than $span below the highest resident
# byte) and after
cold_copy()
{
	sync
	cg_drop_cache "$big"
	CG_SAMPLE_BEHIND=$span cg_sample_start "$big"
	cg_smbclient "$1" "get big.bin /dev/null" >/dev/null 2>&1
	cg_sample_stop
	peak=$CG_PEAK
	behind=$CG_PEAK_BEHIND
	after=$(cg_resident "$big")
}

# Hints follow the path: a cold 1 GiB copy in dontcache mode keeps at
# most the kernel's readahead and the reads in flight cached, and leaves
# nothing. The stream holds the readahead budget: the kernel's readahead
# ahead of it, four of the device's read_ahead_kb (cg_kernel_ra_cost,
# 10 MiB on a loop device at 2560 KiB), and smbclient keeps two 8 MiB
# reads in flight, which that readahead has read by the time smbd copies
# them. Behind them nothing stays: the window drops come a window and the
# reads in flight behind the front and drop the last four windows again
# (what the kernel's readahead for a lagging thread brought back), so
# nothing lies more than that far below the front (5 MiB strays stayed
# there to the end of the copy before, in about half of the copies: two
# copies per share). Direct mode uses no page cache
# at all, also with cacheguard:readahead set (no WILLNEED for a stream
# that reads around the cache).
big=$CG_ROOT/mnt/ext4/big.bin
head -c $((1024 * MiB)) /dev/urandom >"$big"
ra=$(cg_device_readahead "$big")
ra=$((ra > 0 ? ra : 4 * MiB))
inflight=$((16 * MiB))
bound=$((4 * ra + inflight))
span=$((4 * ra + inflight + 5 * 8 * MiB))
uncached="big.bin: .* dontcache [1-9][0-9]{8}"
for share in ext4_dontcache_cold ext4_dontcache_ra; do
	for copy in 1 2; do
		before=$(grep -cE "$uncached" "$CG_LOG")
		cold_copy $share
		what="[$share] cold 1 GiB copy $copy"
		cg_expect_le "$what: peak resident" "$peak" "$bound"
		cg_expect_le "$what: peak resident $((span / MiB)) MiB behind" \
			"$behind" 0
		cg_expect_le "$what: resident after" "$after" $((16 * MiB))
		cg_expect "$what: served the stream uncached" \
			test "$(grep -cE "$uncached" "$CG_LOG")" -gt "$before"
	done
done
cold_copy ext4_direct_ra
cg_expect_le "direct, readahead 32M: peak resident (no page cache)" \
	"$peak" $((1 * MiB))
cg_expect_le "direct, readahead 32M: resident after" "$after" $((1 * MiB))

# auto on FUSE: a copy is right and dropped behind, not direct
if [ -z "$fuse" ]; then
	cg_skip "auto on FUSE (bindfs)" "no /dev/fuse or bindfs here, or the" \
		"mount failed: $(cat "$CG_ROOT/log/bindfs.out" 2>/dev/null)"
else
	head -c $((64 * MiB)) /dev/urandom >"$fuse/fuse.bin"
	sync
	cg_drop_cache "$CG_ROOT/mnt/ext4/fuse-src/fuse.bin"
	cg_smbclient fuse_auto "get fuse.bin $CG_ROOT/back/fuse.bin" \
		>"$CG_ROOT/log/client.out" 2>&1
	cg_expect "auto on FUSE: the copy is byte-identical" \
		cmp -s "$fuse/fuse.bin" "$CG_ROOT/back/fuse.bin"
	rm -f "$CG_ROOT/back/fuse.bin"
	dev=$(mountpoint -d "$fuse")
	cg_expect "auto on FUSE: the probe of device $dev says dontneed" \
		grep -q "device $dev: mode auto serves streams with dontneed" \
		"$CG_LOG"
	line=$(grep -E " fuse.bin: size" "$CG_LOG" | tail -n 1)
	cg_expect "auto on FUSE: the stream was served dropping behind" \
		grep -qE "mode dontneed; served buffered [1-9]" <<<"$line"
fi
exit 0
