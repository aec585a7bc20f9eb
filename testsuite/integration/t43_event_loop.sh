#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# smbd's event loop is not held by the module (issue 22, point 3): no
# call of the module on it, for a read's send, its completion or the
# close, takes longer than a few milliseconds, even where the kernel
# lacks cachestat (Debian 12's 6.1) and the hot check falls back to
# mincore, which maps and walks every page it is asked about.
#
# A shim in smbd answers cachestat with ENOSYS, as 6.1 does. A client
# reads a 100 GiB sparse file (data at its start, middle and end) in
# runs started at random offsets, each a new stream whose hot check
# looks at the rest of the file, then 16 random reads (smb_verify
# mixed), through each mode; every byte is compared. Each open's close
# summary says the longest the module held the event loop in one call
# ("on the event loop at most N us"): 2-6 ms here, most of it the
# close's drop. With the hot check over the whole rest of the file, as
# before 3719d10, the stream's first read held the loop 1.2-1.4 s. The
# guests measure it on 6.1 itself (testsuite/kernel/guest-suite.sh).
. "$(dirname "$0")/../lib/script.sh" "the event loop" "$@"

# a few ms of the module's own work, with room for this shared
# machine's scheduling (a preempted call counts its wait)
BOUND_US=${CG_LOOP_BOUND_US:-20000}
modes="dontneed dontcache direct auto"
cg_smbd_init
dir=$CG_ROOT/mnt/ext4
cg_mount_fs ext4 "$dir" 2G || { cg_fail "an ext4 loop filesystem" \
	"$(cat "$CG_ROOT/log/mkfs-ext4.out")"; exit 0; }
cg_mode_shares_at loop_ "$dir" "$modes" "cacheguard:min file size = 1M" \
	"cacheguard:stream trigger = 1M"

shim=$CG_ROOT/shim_nocachestat.so
cat >"$CG_ROOT/shim_nocachestat.c" <<EOF
/* cachestat(2) is ENOSYS, as before Linux 6.5; the first call says so
 * by creating $CG_ROOT/cachestat-hidden */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <unistd.h>

#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif

long syscall(long nr, ...)
{
	static long (*real)(long, ...);
	long a[6];
	va_list ap;
	int i;

	if (nr == __NR_cachestat) {
		int fd = open("$CG_ROOT/cachestat-hidden",
			      O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

		if (fd >= 0) {
			close(fd);
		}
		errno = ENOSYS;
		return -1;
	}
	if (real == NULL) {
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	}
	va_start(ap, nr);
	for (i = 0; i < 6; i++) {
		a[i] = va_arg(ap, long);
	}
	va_end(ap);
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
EOF
cg_shim shim_nocachestat || exit 0
LD_PRELOAD=$shim cg_smbd_start || { cg_fail "smbd starts with the shim" \
	"see above"; exit 1; }

big=$dir/big.bin
truncate -s $((100 * GiB)) "$big"
for at in 0 $((50 * GiB)) $((100 * GiB - 64 * MiB)); do
	head -c $((64 * MiB)) /dev/urandom |
		dd of="$big" bs=1M seek=$((at / MiB)) conv=notrunc status=none
done
chmod 0644 "$big"
for mode in $modes; do
	cg_drop_cache "$big"
	out=$("$CG_BUILD/smb_verify" -p "$CG_PORT" -U "$CG_USER%$CG_PASS" \
		-n 8 -s 11 -m $MiB mixed "//127.0.0.1/loop_$mode/big.bin" \
		"$big" 2>&1)
	cg_expect "[loop_$mode] runs from random offsets of 100 GiB ($out)" \
		test "${out#ok }" != "$out"
	line=$(grep -E " big.bin: size [0-9]+ read " "$CG_LOG" | tail -n 1)
	echo "[loop_$mode] ${line#*big.bin: }"
	cg_expect "[loop_$mode] the summary has streams" \
		grep -qE "streams [1-9]" <<<"$line"
	us=$(sed -n 's/.*on the event loop at most \([0-9]*\) us.*/\1/p' \
		<<<"$line")
	cg_expect_le "[loop_$mode] the longest call on the event loop (us)" \
		"${us:-999999999}" "$BOUND_US"
done
cg_expect "the hot check ran without cachestat (the shim answered it)" \
	test -e "$CG_ROOT/cachestat-hidden"
exit 0
