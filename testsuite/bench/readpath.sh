#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# make bench-readpath: the module's read paths without smbd or the network
# (build/cgbench drives the engine, and direct mode's prefetch table, with
# 1 MiB requests one and four at a time, and with smbclient's 8 MiB reads
# four at a time) beside fio on the same file at the same request size and
# depth, in the same run, every figure cold.
#
#   READPATH_DIR	where the test file goes (default /var/tmp)
#   READPATH_MIB	its size (default 1024)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=${READPATH_DIR:-/var/tmp}
mib=${READPATH_MIB:-1024}
file=$(mktemp "$dir/cacheguard-readpath.XXXXXX")
trap 'rm -f "$file"' EXIT
head -c $((mib << 20)) /dev/urandom >"$file"
sync

echo "== $(nproc) cores, kernel $(uname -r), $(findmnt -no FSTYPE -T "$file")" \
	"on $(findmnt -no SOURCE -T "$file"), file $mib MiB"
for q in 1 4; do
	"$top/build/cgbench" -q "$q" "$file"
done
"$top/build/cgbench" -q 4 -b 8M -m dontneed,direct "$file"

# fio on the same file: the device limit, and the buffered baseline
fio_read()
{
	local name=$1 bs=$2
	shift 2
	"$top/build/cgcache" drop "$file"
	fio --name="$name" --filename="$file" --rw=read --bs="$bs" \
		--size=$((mib << 20)) --output-format=terse --terse-version=3 \
		"$@" 2>/dev/null | awk -F';' -v n="$name" '{
			if ($5 != "0") { print n ": error " $5; exit }
			printf "%-34s %9.0f MB/s\n", n, $7 * 1024 / 1e6 }'
}
echo "== fio, sequential reads, cold"
fio_read "fio --direct=1 libaio iodepth=16" 1M --direct=1 --ioengine=libaio \
	--iodepth=16
fio_read "fio --direct=1 libaio iodepth=4" 1M --direct=1 --ioengine=libaio \
	--iodepth=4
fio_read "fio --direct=1 psync" 1M --direct=1 --ioengine=psync
fio_read "fio buffered psync" 1M --ioengine=psync
fio_read "fio --direct=1 bs=8M libaio iodepth=4" 8M --direct=1 \
	--ioengine=libaio --iodepth=4
help=$(fio --cmdhelp=uncached 2>&1 </dev/null || true)
if [ -n "$help" ] && [[ "$help" != *"No such command"* ]]; then
	fio_read "fio --uncached=1" 1M --ioengine=psync --uncached=1
else
	# fio 3.33's pvsync2 "uncached" sets 0x40 (an old RWF_UNCACHED
	# proposal, now RWF_ATOMIC) and fails with EOPNOTSUPP; cgbench's
	# dontcache row is the preadv2(RWF_DONTCACHE) figure instead
	echo "fio --uncached=1: not in this fio ($(fio --version))"
fi
