#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A 32-bit smbd with the module (issue 47), inside the i386 root that
# testsuite/i386/run made and built this tree in: Debian 12's own
# smbd:i386 and smbclient:i386, run by qemu-user on this kernel.
#  a. smbd, smbclient and the module are i386 executables, and the
#     module calls no libc function by its 32-bit off_t symbol (pread
#     for pread64, ...; testsuite/lib/lfs.sh);
#  b. windows of a sparse file read past 2 GiB and past 4 GiB through
#     a plain share and a share per mode (off, dontneed, dontcache,
#     direct, auto), each from 8 MiB below the boundary to 24 MiB past
#     it (smbclient's reget), cold, are byte-identical; the file holds
#     other data in its first 32 MiB, where a 32-bit offset past 4 GiB
#     lands. Each mode's copy is a stream on its own path (the close
#     summary's bytes), never a fallback. Where off_t is 32 bits, reads
#     between 2 and 4 GiB fail (EINVAL) and fall back; past 4 GiB they
#     return the start of the file.
. "$(dirname "$0")/../lib/script.sh" "a 32-bit smbd" "$@"
. "$(dirname "$0")/../lib/lfs.sh"

modes="off dontneed dontcache direct auto"
# every file streams from its first read; the window stays 8M
tune=("cacheguard:min file size = 1M" "cacheguard:stream trigger = 512K"
	"cacheguard:window = 8M")

# elf FILE: "class/machine" of an ELF file, 1/3 for i386
elf()
{
	echo "$(od -An -tu1 -j4 -N1 "$1" | tr -d ' ')/$(od -An -tu2 -j18 -N2 \
		"$1" | tr -d ' ')"
}

# a: i386 through and through
arch=$(dpkg --print-architecture)
if [ "$arch" != i386 ]; then
	cg_fail "an i386 root" "dpkg says $arch"
	exit 0
fi
for f in "$(command -v smbd)" "$(command -v smbclient)" "$CG_MODULE"; do
	if [ "$(elf "$f")" = 1/3 ]; then
		cg_pass "$(basename "$f") is an i386 executable"
	else
		cg_fail "$(basename "$f") is an i386 executable" \
			"class/machine $(elf "$f")"
	fi
done
names=$(mktemp)
tree=$("$CG_TOP/tools/prepare-samba-tree" 2>/dev/null | tail -n 1)
if cg_lfs_names -std=gnu11 -I"$CG_TOP/source" -I"$tree" -- \
	"$CG_TOP"/source/*.c >"$names" && grep -qx pread "$names"; then
	cg_expect "the module calls no libc function with a 32-bit off_t" \
		test -z "$(cg_lfs_calls "$names" "$CG_MODULE" | tee /dev/stderr)"
else
	cg_fail "the 32-bit off_t names" "$(wc -l <"$names") names"
fi
rm -f "$names"

cg_smbd_init
cg_mode_shares guard_ "$modes" "${tune[@]}"
cg_smbd_start || { cg_fail "smbd:i386 starts" "see above"; exit 0; }
cg_pass "smbd:i386 starts and answers"

# files: f2g and f4g, each 32 MiB of its own data at its start, sparse
# up to 8 MiB below 2 GiB (4 GiB), then 32 MiB of other data, and its end
# 24 MiB past the boundary
for b in 2 4; do
	f=$CG_SHARE/f${b}g
	start=$((b * GiB - 8 * MiB))
	head -c $((32 * MiB)) /dev/urandom >"$f"
	head -c $((32 * MiB)) /dev/urandom |
		dd of="$f" bs=1M seek=$((start / MiB)) conv=notrunc status=none
	truncate -s $((b * GiB + 24 * MiB)) "$f"
	chmod 0644 "$f"
done
sync

# window SHARE FILE START: FILE read from START to its end through SHARE
# into $CG_ROOT/got, cold; the same bytes as the file's, to its end (cmp
# and its size). smbclient 4.17's reget now and then fails its close
# after the last byte, NT_STATUS_INVALID_NETWORK_RESPONSE, on a plain
# share as on any other and natively too (one in three here): that
# alone is not the module's, the bytes are checked all the same
window()
{
	local got=$CG_ROOT/got quirk=NT_STATUS_INVALID_NETWORK_RESPONSE

	dd if="$CG_SHARE/$2" iflag=nocache count=0 status=none
	rm -f "$got"
	truncate -s "$3" "$got"
	if ! cg_smbclient "$1" "reget $2 $got" >"$CG_ROOT/reget.out" 2>&1 &&
		grep -v -e '^getting file ' -e "^Error $quirk closing remote file$" \
			"$CG_ROOT/reget.out" | grep -q .; then
		tail -n 3 "$CG_ROOT/reget.out"
		return 1
	fi
	[ "$(stat -c %s "$got")" = "$(stat -c %s "$CG_SHARE/$2")" ] ||
		{ echo "got $(stat -c %s "$got") bytes"; return 1; }
	cmp -i "$3" "$CG_SHARE/$2" "$got"
}

# summaries: how many close summaries smbd has logged (with N, those
# after the first N)
summaries()
{
	if [ $# -eq 0 ]; then
		grep -c ': size ' "$CG_LOG"
	else
		grep ': size ' "$CG_LOG" | tail -n +$(($1 + 1))
	fi
}

# what qemu-user takes away (checked on qemu 7.2): preadv2's
# RWF_DONTCACHE (EOPNOTSUPP) and statx's STATX_DIOALIGN values (the mask
# bit set, the alignments 0)
qemu_lacks="no RWF_DONTCACHE|no O_DIRECT for this file: no alignment, or no reopen"
for m in plain $modes; do
	share=guard_$m
	[ "$m" = plain ] && share=plain
	for b in 2 4; do
		start=$((b * GiB - 8 * MiB))
		n0=$(summaries)
		cg_expect "[$m] $b GiB - 8 MiB to $b GiB + 24 MiB byte-identical" \
			window "$share" "f${b}g" "$start"
		case $m in
		plain | off) continue ;;
		dontneed) path="dropped [1-9]" ;;
		dontcache) path="dontcache [1-9]" ;;
		auto) path="(dontcache|direct|dropped) [1-9]" ;;
		direct) path="direct [1-9]" ;;
		esac
		# this copy's own, one file's
		s=$(summaries "$n0")
		if [ "$(wc -l <<<"$s")" = 1 ] &&
			grep -qE "f${b}g: .*$path.*streams 1 .*fallbacks 0" <<<"$s"
		then
			cg_pass "[$m] past $b GiB: one stream, $path, no fallback"
		elif [ -n "${CG_I386_QEMU:-}" ] && [ "$(wc -l <<<"$s")" = 1 ] &&
			grep -qE "f${b}g: .*mode dontneed;.*dropped [1-9].*streams 1 .*fallbacks [0-9]+: ($qemu_lacks)\$" <<<"$s"
		then
			cg_skip "[$m] past $b GiB: one stream, $path" \
				"qemu-user refuses RWF_DONTCACHE and reports statx's direct-I/O alignment as 0 (none), so the stream fell back as on such a kernel and dropped behind; the bytes were checked"
		else
			cg_fail "[$m] past $b GiB: one stream, $path, no fallback" \
				"${s:-no summary}"
		fi
	done
done
exit 0
