#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# The small suite "make test-kernels" runs inside a QEMU guest booted with
# one of Debian's own kernels (testsuite/kernel/run boots it; guest-init
# starts this). Debian's kernels are where real users run the module and
# where the defaults differ from a current kernel:
#   - no RWF_DONTCACHE before 6.15 (xfs) / 6.17 (ext4): dontcache falls
#     back, and auto resolves to direct;
#   - no cachestat(2) before 6.5: residency comes from mincore(2), for the
#     hot-file check of the module and for the test's own oracle;
#   - per-tick file timestamps before 6.13, which direct mode's coherence
#     check must not depend on.
# So: every mode on ext4 and xfs with byte-identical copies, the random
# read verifier and the footprint of a cold copy, and an upload (bytes
# and footprint, t37's bound); a hot file kept; what
# auto resolves to and that it is logged; 4 readers of one file read it
# from the device about once; direct mode coherent under a
# local writer, SMB writers (recvfile) and set-zero-data, copy-chunk and
# end-of-file changes. Files are modest (TCG is slow).
#
# CG_GUEST_SET=ci (kernel command line cg.set=ci; .ci/run's subset): ext4
# only, without the 4 readers; every mode's copy, upload, hot keep, auto
# choice and coherence stay. full (make test-kernels) runs all of it.
#
# Prints PASS:/FAIL:/SKIPPED: lines like every integration script.
set -u
. "$(dirname "$0")/../lib/check.sh"
cg_need_root "the kernel suite"
. "$(dirname "$0")/../lib/smbd.sh"
cg_enter_namespace "$0" "$@"

MiB=1048576
set=${CG_GUEST_SET:-full}
fs_list="ext4 xfs"
[ "$set" = ci ] && fs_list=ext4
modes="dontneed dontcache direct auto"
tune=("cacheguard:min file size = 1M" "cacheguard:stream trigger = 512K")
kver=$(uname -r)
echo "guest kernel: $kver (set $set)"
if [ -n "${CG_EXPECT_KERNEL:-}" ]; then
	cg_expect "the guest runs Debian's kernel $CG_EXPECT_KERNEL" \
		test "$kver" = "$CG_EXPECT_KERNEL"
fi

# kernel_at_least MAJOR.MINOR: is the running kernel that new?
kernel_at_least()
{
	local want_major=${1%.*} want_minor=${1#*.} major minor rest

	IFS=. read -r major minor rest <<<"$kver"
	minor=${minor%%[!0-9]*}
	[ "$major" -gt "$want_major" ] ||
		{ [ "$major" -eq "$want_major" ] && [ "$minor" -ge "$want_minor" ]; }
}

# What auto should resolve to on FS with this kernel: RWF_DONTCACHE
# reads work on xfs from 6.15 and on ext4 from 6.17; else direct.
auto_expected()
{
	case $1 in
	xfs) kernel_at_least 6.15 && { echo dontcache; return; } ;;
	ext4) kernel_at_least 6.17 && { echo dontcache; return; } ;;
	esac
	echo direct
}

# summary NAME: the last close summary line of file NAME in the log
summary()
{
	grep -E " $1: size [0-9]+ read " "$CG_LOG" | tail -n 1
}

cold()
{
	sync
	cg_drop_cache "$1"
}

# four_readers FILE DIR: 4 clients of FILE's dontneed share at once
four_readers()
{
	local f=$1 dir=$2 before read_bytes readers i fs

	fs=$(basename "$dir")
	cold "$f"
	before=$(cg_dev_read "$(cg_loop_dev "$dir")")
	readers=
	for i in 1 2 3 4; do
		(cg_smbclient "${fs}_dontneed" "get f.bin -" 2>/dev/null |
			md5sum | cut -d' ' -f1 >"$CG_ROOT/shared.$i") &
		readers="$readers $!"
	done
	# shellcheck disable=SC2086
	wait $readers
	read_bytes=$(($(cg_dev_read "$(cg_loop_dev "$dir")") - before))
	cg_expect "[${fs}_dontneed] 4 readers of one file: right bytes" \
		test "$(cat "$CG_ROOT"/shared.? | sort -u)" = "$sum"
	cg_expect_le "[${fs}_dontneed] 4 readers: the device reads the file at most 1.5 times" \
		"$read_bytes" $((96 * MiB * 3 / 2))
	cg_expect_le "[${fs}_dontneed] 4 readers: resident after" \
		"$(cg_resident "$f")" $((16 * MiB))
}

cg_smbd_init
# SMB writes of 16 KiB and more go through recvfile (unsigned ones)
cg_global "min receivefile size = 16384"
filesystems=
for fs in $fs_list; do
	if cg_mount_fs "$fs" "$CG_ROOT/mnt/$fs"; then
		filesystems="$filesystems $fs"
		for mode in $modes; do
			cg_share_at "${fs}_$mode" "$CG_ROOT/mnt/$fs" \
				"vfs objects = cacheguard" \
				"cacheguard:mode = $mode" "${tune[@]}"
		done
	else
		cg_fail "$fs" "cannot make or mount one: $(tail -n 2 \
			"$CG_ROOT/log/mkfs-$fs.out" 2>/dev/null)"
	fi
done
cg_smbd_start || { cg_fail "smbd starts" "see above"; exit 1; }
if kernel_at_least 6.5; then
	echo "cachestat(2): yes (6.5+)"
else
	echo "cachestat(2): no (before 6.5): residency from mincore(2)"
fi

for fs in $filesystems; do
	echo "[$fs] every mode, $(date +%T)"
	dir=$CG_ROOT/mnt/$fs
	f=$dir/f.bin
	v=$dir/v.bin
	head -c $((96 * MiB + 4097)) /dev/urandom >"$f"
	head -c $((64 * MiB + 12345)) /dev/urandom >"$v"
	sum=$(md5sum <"$f" | cut -d' ' -f1)
	auto_line=
	for mode in $modes; do
		share=${fs}_$mode
		rm -f "$CG_ROOT/back.bin"
		cold "$f"
		cg_smbclient "$share" "get f.bin $CG_ROOT/back.bin" \
			>"$CG_ROOT/log/client.out" 2>&1
		# before anything reads the file locally again
		resident=$(cg_resident "$f")
		cg_expect "[$share] cold copy of 96 MiB is byte-identical" \
			test "$(md5sum <"$CG_ROOT/back.bin" |
				cut -d' ' -f1)" = "$sum"
		cg_expect_le "[$share] resident after the cold copy" \
			"$resident" $((16 * MiB))
		line=$(summary f.bin)
		echo "[$share] ${line#*f.bin: }"
		[ "$mode" = auto ] && auto_line=$line
		cold "$v"
		out=$("$CG_BUILD/smb_verify" -p "$CG_PORT" \
			-U "$CG_USER%$CG_PASS" -n 200 -s 7 -m $MiB \
			mixed "//127.0.0.1/$share/v.bin" "$v" 2>&1)
		cg_expect "[$share] random and sequential reads ($out)" \
			test "${out#ok }" != "$out"
		# the write path: an upload (recvfile), left out of the cache
		# as t37 bounds it
		cg_smbclient "$share" "put $CG_ROOT/back.bin up.bin" \
			>"$CG_ROOT/log/client.out" 2>&1
		# before the checksum reads the file into the cache
		cg_expect_le "[$share] resident after the upload" \
			"$(cg_resident "$dir/up.bin")" $((48 * MiB))
		cg_expect "[$share] 96 MiB upload is byte-identical" \
			test "$(md5sum <"$dir/up.bin" | cut -d' ' -f1)" = "$sum"
		line=$(grep -E " up.bin: written " "$CG_LOG" | tail -n 1)
		echo "[$share] upload: ${line#*up.bin: }"
		rm -f "$dir/up.bin"
	done
	rm -f "$CG_ROOT/back.bin"

	# auto: what it resolved to on this filesystem, and the log line
	dev=$(mountpoint -d "$dir")
	want=$(auto_expected "$fs")
	line=$(grep -E "device $dev: mode auto serves streams with " \
		"$CG_LOG" | tail -n 1)
	got=$(sed -n 's/.*mode auto serves streams with \([a-z]*\).*/\1/p' \
		<<<"$line")
	echo "auto on $fs ($dev) with $kver: ${got:-not logged}"
	cg_expect "auto on $fs is logged at level 2 (mode auto serves ...)" \
		test -n "$got"
	cg_expect "auto on $fs resolves to $want on $kver (got ${got:-none})" \
		test "$got" = "$want"
	cg_expect "the auto copy on $fs ran in mode $want" \
		grep -q "mode $want;" <<<"$auto_line"
	if [ "$want" != dontcache ]; then
		cg_expect "dontcache on $fs falls back with a log line" \
			grep -q "has no RWF_DONTCACHE" "$CG_LOG"
	fi

	# hot: a file already cached by someone else stays cached
	echo "[$fs] hot file, coherence, $(date +%T)"
	cold "$f"
	"$CG_BUILD/cgcache" load "$f"
	for mode in dontneed auto; do
		cg_smbclient "${fs}_$mode" "get f.bin /dev/null" \
			>/dev/null 2>&1
		cg_expect_ge "[${fs}_$mode] a hot file stays cached after a copy" \
			"$(cg_resident "$f")" $((96 * MiB * 95 / 100))
	done

	# 4 clients read one file at once (4 smbd processes): each stream
	# keeps what the others still need, so the device reads the file
	# about once (OFD locks in the state directory, cg_share.c)
	[ "$set" = ci ] || four_readers "$f" "$dir"
	# direct mode coherence: the file changes while a direct stream
	# prefetches it; every read must give the current bytes
	c=$dir/c.bin
	recvfiles=$(grep -c "c.bin: recvfile at " "$CG_LOG")
	for what in localwrite smbwrite clientwrite tickwrite truncate; do
		head -c $((128 * MiB)) /dev/urandom >"$c"
		# the SMB writers write a file of their own user
		chown "$CG_USER" "$c"
		cold "$c"
		out=$("$CG_BUILD/smb_direct_check" -p "$CG_PORT" \
			-U "$CG_USER%$CG_PASS" -s 5 "$what" \
			"//127.0.0.1/${fs}_direct/c.bin" "$c" 2>&1)
		last=$(tail -n 1 <<<"$out")
		cg_expect "[${fs}_direct] $what under a direct stream: the current bytes ($last)" \
			grep -q '^ok ' <<<"$out"
		cg_expect "[${fs}_direct] $what: the stream was direct" \
			grep -qE "direct [1-9]" <<<"$(summary c.bin)"
	done
	# every other way smbd changes a file, by the client streaming it
	head -c $((8 * MiB + 65536)) /dev/urandom >"$dir/src.bin"
	for what in zerodata copychunk setsize; do
		head -c $((128 * MiB)) /dev/urandom >"$c"
		chown "$CG_USER" "$c"
		cold "$c"
		out=$("$CG_TOP/testsuite/tools/smb_write_paths.py" \
			-p "$CG_PORT" -U "$CG_USER%$CG_PASS" "$what" \
			"//127.0.0.1/${fs}_direct/c.bin" "$c" src.bin 2>&1)
		last=$(tail -n 1 <<<"$out")
		cg_expect "[${fs}_direct] $what under a direct stream: the current bytes ($last)" \
			grep -q '^ok ' <<<"$out"
	done
	cg_expect "[${fs}_direct] the SMB writes went through recvfile" \
		test "$(grep -c "c.bin: recvfile at " "$CG_LOG")" -gt "$recvfiles"
	rm -f "$f" "$v" "$c" "$dir/src.bin"
done
echo "[done] $(date +%T)"
cg_expect "no smbd panicked" test "$(grep -c PANIC "$CG_LOG")" = 0
exit 0
