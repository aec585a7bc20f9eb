#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# make bench-readpath: the module's read paths without smbd or the network
# (build/cgbench drives the engine, and direct mode's prefetch table, with
# 1 MiB requests one and four at a time, and with smbclient's 8 MiB reads
# four at a time) beside fio on the same file at the same request size and
# depth, in the same run, every figure cold. Each row's ratio is to fio's
# buffered sequential read of 1 MiB requests, which runs first.
#
# As root, beside each row: the bios the run sent (the bench's own blkio
# cgroup: what storage that counts requests charges) and the requests
# the device saw (block_rq_issue), with their average sizes, and the
# sizes of the folios the run added to the file's page cache
# (testsuite/lib/trace.sh), "4K:10,128K:90" meaning 10% of the bytes in
# 4 KiB folios.
#
#   READPATH_DIR	where the test file goes (default /var/tmp)
#   READPATH_MIB	its size (default 1024)
#   BENCH_READ_IOPS	empty: the disk as it is; N: the bench's reads
#			capped at N requests per second (root; the blkio
#			controller, as make bench does for smbd)
#   READPATH_READ_AHEAD_KB
#			the device's read_ahead_kb for the run (root; put
#			back after): the kernel's readahead window, which
#			sizes a buffered read's requests (128 on most
#			disks; this machine's virtio disk has 8192)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/testsuite/lib/blkio.sh"
. "$top/testsuite/lib/trace.sh"
dir=${READPATH_DIR:-/var/tmp}
mib=${READPATH_MIB:-1024}
iops=${BENCH_READ_IOPS:-}
file=$(mktemp "$dir/cacheguard-readpath.XXXXXX")
counted=0
ra_was=
queue=
cleanup()
{
	if [ "$counted" = 1 ]; then
		cg_trace_remove
		cg_blkio_remove
	fi
	[ -z "$ra_was" ] || echo "$ra_was" >"$queue/read_ahead_kb"
	rm -f "$file"
}
trap cleanup EXIT
head -c $((mib << 20)) /dev/urandom >"$file"
sync
# a first read of a file just written is slower than any later one on a
# virtual disk whose host caches it (this machine's: 300 against 1100-1600
# MB/s): read it once, so that no row pays for being first
"$top/build/cgcache" drop "$file"
cat "$file" >/dev/null

# the file's disk's queue: its largest request, its readahead window
queue=/sys/dev/block/$(stat -c '%Hd:%Ld' "$file")
[ -e "$queue/partition" ] && queue=$queue/..
queue=$(readlink -f "$queue/queue")
max_request=$(cat "$queue/max_sectors_kb" 2>/dev/null || echo 0)
ra_kb=$(cat "$queue/read_ahead_kb" 2>/dev/null || echo "?")
ra_was=
if [ -n "${READPATH_READ_AHEAD_KB:-}" ]; then
	ra_was=$ra_kb
	echo "$READPATH_READ_AHEAD_KB" >"$queue/read_ahead_kb"
	ra_kb=$READPATH_READ_AHEAD_KB
fi

profile="the disk as it is"
if [ "$(id -u)" = 0 ]; then
	# this shell and all it runs from now on: capped (or only counted)
	cg_blkio_make "$file" "$iops"
	cg_blkio_add $$
	counted=1
	cg_trace_make "$file" || counted=2
	[ -z "$iops" ] || profile="reads capped at $iops IOPS (blkio)"
elif [ -n "$iops" ]; then
	echo "BENCH_READ_IOPS needs root (a blkio cgroup)" >&2
	exit 1
fi
echo "== $(nproc) cores, kernel $(uname -r), $(findmnt -no FSTYPE -T "$file")" \
	"on $(findmnt -no SOURCE -T "$file"), file $mib MiB, $profile," \
	"read_ahead_kb $ra_kb, max_sectors_kb $max_request"
printf '%-36s %6s %6s %6s %7s %6s %6s %6s  %s\n' run MB/s xbuf \
	"peak" bios KiB reqs KiB folios

base=
# row LABEL CMD...: CMD prints "MB/s peak-MiB" on its last line and
# anything else (direct's prefetch summary) before it
row()
{
	local label=$1 out last r0 b0 r1 b1 ratio=- bios=- bkib=- reqs=-
	local rkib=- folios=-
	shift

	"$top/build/cgcache" drop "$file"
	if [ "$counted" != 0 ]; then
		read -r r0 b0 <<<"$(cg_blkio_counts)"
		[ "$counted" != 1 ] || cg_trace_start
	fi
	out=$("$@")
	if [ "$counted" != 0 ]; then
		read -r r1 b1 <<<"$(cg_blkio_counts)"
		bios=$((r1 - r0))
		[ "$bios" = 0 ] || bkib=$(((b1 - b0) / bios / 1024))
		if [ "$counted" = 1 ]; then
			cg_trace_stop
			folios=$CG_TRACE_FOLIOS
			read -r reqs rkib <<<"$CG_TRACE_REQS"
		fi
	fi
	last=$(tail -n 1 <<<"$out")
	set -- $last
	[ -n "$base" ] || base=$1
	ratio=$(awk -v a="$1" -v b="$base" 'BEGIN {
		if (a + 0 == a && b > 0) printf "%.2f", a / b; else print "-" }')
	printf '%-36s %6s %6s %6s %7s %6s %6s %6s  %s\n' "$label" "$1" \
		"$ratio" "$2" "$bios" "$bkib" "$reqs" "$rkib" "$folios"
	grep -v -x -F "$last" <<<"$out" | sed 's/^/    /' || true
}

# cgbench MODE DEPTH REQUEST: one mode of the engine's read paths
cgbench()
{
	"$top/build/cgbench" -q "$2" -b "$3" -m "$1" -S "${max_request}K" \
		"$file" |
		awk -v m="$1" '/^#   / {print substr($0, 5)}
			$1 == m {last = $2 " " $3} END {print last}'
}

fio_read()
{
	local bs=$1
	shift
	fio --name=readpath --filename="$file" --rw=read --bs="$bs" \
		--size=$((mib << 20)) --output-format=terse --terse-version=3 \
		"$@" 2>/dev/null | awk -F';' '{
			if ($5 != "0") { print "error " $5; exit }
			printf "%.0f -\n", $7 * 1024 / 1e6 }'
}

row "fio buffered psync 1M" fio_read 1M --ioengine=psync
for q in 1 4; do
	for m in buffered dontneed dontcache direct; do
		row "cgbench $m, 1M x $q" cgbench $m $q 1M
	done
done
for m in dontneed direct; do
	row "cgbench $m, 8M x 4 (smbclient's)" cgbench $m 4 8M
done
row "fio --direct=1 libaio 1M x 16" fio_read 1M --direct=1 \
	--ioengine=libaio --iodepth=16
row "fio --direct=1 libaio 1M x 4" fio_read 1M --direct=1 \
	--ioengine=libaio --iodepth=4
row "fio --direct=1 psync 1M" fio_read 1M --direct=1 --ioengine=psync
row "fio --direct=1 libaio 8M x 4" fio_read 8M --direct=1 \
	--ioengine=libaio --iodepth=4
help=$(fio --cmdhelp=uncached 2>&1 </dev/null || true)
if [ -n "$help" ] && [[ "$help" != *"No such command"* ]]; then
	row "fio --uncached=1 psync 1M" fio_read 1M --ioengine=psync \
		--uncached=1
else
	# fio 3.33's pvsync2 "uncached" sets 0x40 (an old RWF_UNCACHED
	# proposal, now RWF_ATOMIC) and fails with EOPNOTSUPP; cgbench's
	# dontcache row is the preadv2(RWF_DONTCACHE) figure instead
	echo "fio --uncached=1: not in this fio ($(fio --version))"
fi
