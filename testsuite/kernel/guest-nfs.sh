# SPDX-License-Identifier: GPL-3.0-or-later
# shellcheck shell=bash disable=SC2034,SC2154
#
# NFS in the guest (sourced by guest-suite.sh): a share on an NFS mount,
# as a gateway re-exporting NFS serves it. On NFS, fstat answers from
# the client's attribute cache, so direct mode's coherence check (the
# file's ctime) cannot see another NFS client's write; auto must
# therefore serve streams dropping behind (dontneed) there, whatever
# O_DIRECT and RWF_DONTCACHE the probe finds (cg_fs_type_shared).
#
# The kernel's own NFS server (nfsd, with rpcbind, rpc.mountd and
# rpc.nfsd of nfs-kernel-server) exports a directory of the guest's root
# disk to 127.0.0.1; NFSv3 over TCP, no lock manager. Two mounts of it
# are two NFS clients (nosharecache: separate inodes, page cache and
# attributes): smbd's, with noac (attributes fetched at every read, so
# a change by another client is seen at the next read, not up to 60 s
# later), and a second client that writes.
#
#   nfs_start	export and mount; shares nfs_plain and nfs_auto; false
#		with nfs_why set when it cannot
#   nfs_checks	after cg_smbd_start
#
# Checks: auto's choice on NFS is dontneed, logged, and the copy is
# served that way within t20's bound; copies byte-identical through the
# plain share and auto; after the second client rewrites the file, the
# next copy has the new bytes; and the second client writing while an
# SMB stream is open (paused part way) is seen by the stream's later
# reads, through auto as through the plain share.

nfs_export=/srv/cgnfs

nfs_start()
{
	local opts="vers=3,proto=tcp,nolock"

	nfs_dir=$CG_ROOT/mnt/nfs
	nfs_other=$CG_ROOT/mnt/nfs2
	nfs_why=
	if ! grep -qw nfsd /proc/filesystems; then
		nfs_why="nfsd.ko is not loaded (the initramfs insmods it)"
		return 1
	fi
	mkdir -p /proc/fs/nfsd /var/lib/nfs /run/rpcbind "$nfs_export" \
		"$nfs_dir" "$nfs_other"
	chmod 1777 "$nfs_export"
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd
	echo "$nfs_export 127.0.0.1(rw,no_root_squash,insecure,no_subtree_check,fsid=7)" \
		>/etc/exports
	{
		rpcbind &&
		exportfs -ra &&
		rpc.mountd --no-nfs-version 4 &&
		rpc.nfsd --no-nfs-version 4 4 &&
		mount -t nfs -o "$opts,noac" "127.0.0.1:$nfs_export" \
			"$nfs_dir" &&
		mount -t nfs -o "$opts,nosharecache" \
			"127.0.0.1:$nfs_export" "$nfs_other"
	} >"$CG_ROOT/log/nfs.out" 2>&1 || {
		nfs_why="$(tail -n 3 "$CG_ROOT/log/nfs.out" | tr '\n' ' ')"
		return 1
	}
	CG_MOUNTS="$nfs_other $nfs_dir ${CG_MOUNTS:-}"
	cg_share_at nfs_plain "$nfs_dir"
	cg_share_at nfs_auto "$nfs_dir" "vfs objects = cacheguard" \
		"cacheguard:mode = auto" "${tune[@]}"
}

# nfs_copy SHARE: a cold copy of n.bin through SHARE into back.bin; sets
# nfs_resident (the file's pages on smbd's NFS client after it) and
# nfs_same (the copy is the file as it is now)
nfs_copy()
{
	rm -f "$CG_ROOT/back.bin"
	cg_drop_cache "$nfs_dir/n.bin"
	cg_drop_cache "$nfs_export/n.bin"
	cg_smbclient "$1" "get n.bin $CG_ROOT/back.bin" \
		>"$CG_ROOT/log/client.out" 2>&1
	nfs_resident=$(cg_resident "$nfs_dir/n.bin")
	nfs_same=0
	cmp -s "$CG_ROOT/back.bin" "$nfs_export/n.bin" && nfs_same=1
	rm -f "$CG_ROOT/back.bin"
}

nfs_checks()
{
	local size=$((48 * MiB + 4097)) dev line share out

	echo "[nfs] NFSv3 over loopback, $(date +%T)"
	# written by the second client
	head -c "$size" /dev/urandom >"$nfs_other/n.bin"
	for share in nfs_plain nfs_auto; do
		nfs_copy "$share"
		cg_expect "[$share] cold copy of 48 MiB is byte-identical" \
			test "$nfs_same" = 1
	done
	line=$(summary n.bin)
	echo "[nfs_auto] ${line#*n.bin: }"
	cg_expect_le "[nfs_auto] resident after the cold copy" \
		"$nfs_resident" $((16 * MiB))
	dev=$(mountpoint -d "$nfs_dir")
	cg_expect "[nfs_auto] the probe of NFS device $dev says dontneed" \
		grep -q "device $dev: mode auto serves streams with dontneed" \
		"$CG_LOG"
	cg_expect "[nfs_auto] the stream was served dropping behind" \
		grep -qE "mode dontneed; served buffered [1-9]" <<<"$line"

	# the second client rewrites the file in place: a new open sees it
	dd if=/dev/urandom of="$nfs_other/n.bin" bs=1M count=48 \
		conv=notrunc,fsync status=none
	nfs_copy nfs_auto
	cg_expect "[nfs_auto] after another NFS client's rewrite: the new bytes" \
		test "$nfs_same" = 1

	# ... and while a stream is open: paused at 16 MiB, the second
	# client changes 24-32 MiB, then the stream reads on; every read
	# is compared with the exported file as it is then
	for share in nfs_plain nfs_auto; do
		rm -f "$CG_ROOT/nfs.go" "$CG_ROOT/nfs.ready"
		cg_drop_cache "$nfs_dir/n.bin"
		"$CG_BUILD/smb_readpause" -p "$CG_PORT" \
			-U "$CG_USER%$CG_PASS" -b $((16 * MiB)) \
			-w "$CG_ROOT/nfs.go" -t 30 -r "$CG_ROOT/nfs.ready" \
			"//127.0.0.1/$share/n.bin" "$nfs_export/n.bin" \
			>"$CG_ROOT/log/nfs-pause.out" 2>&1 &
		if cg_wait_file "$CG_ROOT/nfs.ready"; then
			dd if=/dev/urandom of="$nfs_other/n.bin" bs=1M \
				seek=24 count=8 conv=notrunc,fsync status=none
		fi
		touch "$CG_ROOT/nfs.go"
		wait $!
		out=$(tail -n 1 "$CG_ROOT/log/nfs-pause.out")
		cg_expect "[$share] another NFS client writes mid-stream: the current bytes ($out)" \
			grep -q '^ok ' <<<"$out"
	done
	cg_expect "[nfs_auto] the paused stream dropped behind" \
		grep -qE "mode dontneed; served buffered [1-9]" \
		<<<"$(summary n.bin)"
	rm -f "$nfs_export/n.bin"
}
