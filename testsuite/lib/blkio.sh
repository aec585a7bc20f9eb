# SPDX-License-Identifier: GPL-3.0-or-later
#
# A blkio cgroup (cgroup v1) for smbd: its reads of one disk capped at N
# requests per second, storage that counts requests (an IOPS-capped cloud
# volume, iSCSI), and counted apart from everyone else's. The cap charges
# every bio, and since Linux 6.16 every piece a bio is split into.
#
#   cg_blkio_make FILE [IOPS]	a cgroup capping reads of FILE's disk
#				(CG_BLKIO, CG_BLKIO_DISK, CG_BLKIO_NAME);
#				without IOPS one no device reaches, so that
#				the kernel counts (blk-throttle is set up on
#				a disk only once some cgroup limits it)
#   cg_blkio_add PID		move PID (and what it forks later) in
#   cg_blkio_counts		"requests bytes" read so far in CG_BLKIO
#				("- -" and a message when the cgroup has
#				no count of the disk: no figure, not 0)
#   cg_blkio_queue_ms		the disk's weighted time in queue (stat
#				field 11, everyone's), for requests in flight
#   cg_blkio_remove		move what is left out, remove the cgroup

CG_BLKIO=
CG_BLKIO_ROOT=/sys/fs/cgroup/blkio

cg_blkio_make()
{
	local file=$1 iops=${2:-1000000000} disk

	if [ ! -d "$CG_BLKIO_ROOT" ]; then
		echo "no cgroup v1 blkio controller at $CG_BLKIO_ROOT" >&2
		return 1
	fi
	# the whole disk of the file's partition, major:minor
	disk=$(stat -c '%Hd:%Ld' "$file") || return 1
	if [ -e "/sys/dev/block/$disk/partition" ]; then
		disk=$(cat "$(readlink -f "/sys/dev/block/$disk/..")/dev")
	fi
	CG_BLKIO_DISK=$disk
	CG_BLKIO_NAME=$(basename "$(readlink -f "/sys/dev/block/$disk")")
	CG_BLKIO=$CG_BLKIO_ROOT/cacheguard-bench.$$
	mkdir -p "$CG_BLKIO" || return 1
	echo "$disk $iops" >"$CG_BLKIO/blkio.throttle.read_iops_device"
}

cg_blkio_add()
{
	echo "$1" >"$CG_BLKIO/cgroup.procs"
}

cg_blkio_counts()
{
	local r b

	r=$(awk -v d="$CG_BLKIO_DISK" '$1 == d && $2 == "Read" {print $3}' \
		"$CG_BLKIO/blkio.throttle.io_serviced")
	b=$(awk -v d="$CG_BLKIO_DISK" '$1 == d && $2 == "Read" {print $3}' \
		"$CG_BLKIO/blkio.throttle.io_service_bytes")
	# the cap (cg_blkio_make) makes the kernel keep the disk's counts,
	# 0 until smbd reads it: a disk missing from them is no figure
	if [ -z "$r" ] || [ -z "$b" ]; then
		echo "cannot count smbd's reads: $CG_BLKIO has no count of" \
			"disk $CG_BLKIO_DISK" >&2
		echo "- -"
		return 1
	fi
	echo "$r $b"
}

cg_blkio_queue_ms()
{
	awk '{print $11}' "/sys/block/$CG_BLKIO_NAME/stat"
}

cg_blkio_remove()
{
	local p

	[ -n "$CG_BLKIO" ] && [ -d "$CG_BLKIO" ] || return 0
	while read -r p; do
		echo "$p" >"$CG_BLKIO_ROOT/cgroup.procs" 2>/dev/null
	done <"$CG_BLKIO/cgroup.procs"
	rmdir "$CG_BLKIO" 2>/dev/null
	CG_BLKIO=
}
