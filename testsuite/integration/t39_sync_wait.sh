#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The synchronous read path (aio read size = 0: SMB_VFS_PREAD on smbd's
# event loop) of a direct stream waits for a prefetch fill of the range it
# needs at most 1 s in all, then reads on its own (issue 22, point 3).
# A shim in smbd holds one fill (an O_DIRECT preadv2 at 16 MiB or more)
# for 6 s and sets the wall clock an hour ahead, as a clock step would:
# the wait's deadline must not move with it. The module of 9b3cc01 waited
# on CLOCK_REALTIME, here until the fill ended; the copy took 6 s longer.
set -u
. "$(dirname "$0")/../lib/check.sh"
cg_need_root "the sync path's wait"
. "$(dirname "$0")/../lib/smbd.sh"
cg_enter_namespace "$0" "$@"

MiB=1048576
HOLD=6
cg_smbd_init
cg_share directsync "vfs objects = cacheguard" "cacheguard:mode = direct" \
	"cacheguard:min file size = 1M" "cacheguard:stream trigger = 1M" \
	"aio read size = 0"

shim=$CG_ROOT/shim_hold.so
cat >"$CG_ROOT/shim_hold.c" <<EOF
/*
 * The first O_DIRECT preadv2 at $((16 * MiB)) or beyond sleeps $HOLD s; the
 * wall clock (CLOCK_REALTIME and its coarse variant) runs an hour ahead
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static atomic_int held;

ssize_t preadv2(int fd, const struct iovec *iov, int n, off_t off, int fl)
{
	static ssize_t (*real)(int, const struct iovec *, int, off_t, int);

	if (real == NULL) {
		real = dlsym(RTLD_NEXT, "preadv2");
	}
	if (off >= $((16 * MiB)) && (fcntl(fd, F_GETFL) & O_DIRECT) &&
	    atomic_exchange(&held, 1) == 0) {
		sleep($HOLD);
	}
	return real(fd, iov, n, off, fl);
}

int clock_gettime(clockid_t clk, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	int ret;

	if (real == NULL) {
		real = dlsym(RTLD_NEXT, "clock_gettime");
	}
	ret = real(clk, ts);
	if (ret == 0 &&
	    (clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE)) {
		ts->tv_sec += 3600;
	}
	return ret;
}
EOF
cg_shim shim_hold || exit 0
LD_PRELOAD=$shim cg_smbd_start || { cg_fail "smbd starts with the shim" \
	"see above"; exit 1; }

big=$CG_SHARE/big.bin
head -c $((96 * MiB)) /dev/urandom >"$big"
chmod 0644 "$big"
cg_drop_cache "$big"
t0=$(date +%s%N)
cg_smbclient directsync "get big.bin $CG_ROOT/back.bin" \
	>"$CG_ROOT/get.out" 2>&1
ms=$((($(date +%s%N) - t0) / 1000000))
cg_expect "the copy is byte-identical" cmp "$big" "$CG_ROOT/back.bin"
cg_expect "the copy went through the sync path, direct" \
	grep -qE "big.bin: size .* direct [1-9][0-9]*;.* pread [1-9]" "$CG_LOG"
# 1 s of wait and the copy itself (well under a second here), not $HOLD s
cg_expect_le "the copy, with a fill held ${HOLD} s (ms)" "$ms" 3500
