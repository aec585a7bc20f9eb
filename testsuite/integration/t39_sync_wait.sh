#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The synchronous read path (aio read size = 0: SMB_VFS_PREAD on smbd's
# event loop) of a direct stream waits for a prefetch fill a thread is
# reading only while the fill is not overdue (twice what the stream's
# fills take: cg_dsched_sync_deadline); then it reads the bytes it needs
# on its own, as a plain pread of them would (issue 24; issue 22, point
# 3, bounded the wait to 1 s in all).
# A shim in smbd holds one fill (an O_DIRECT preadv2 at 16 MiB or more,
# in a thread of smbd's pool: the sync path may run a fill no thread has
# started yet on the spot, and then it reads as any pread does) for 6 s
# and sets the wall clock an hour ahead, as a clock step would.
# The copy with the fill held must take no longer than a copy of another
# file right after it, with nothing held, and 0.4 s of noise. The module
# of 9b3cc01 waited on CLOCK_REALTIME, here until the fill ended; that of
# 03212de waited 250 ms for each request on the held segment, until the
# fill ended: about 6 s more.
set -u
. "$(dirname "$0")/../lib/check.sh"
cg_need_root "the sync path's wait"
. "$(dirname "$0")/../lib/smbd.sh"
cg_enter_namespace "$0" "$@"

MiB=1048576
HOLD=6
cg_smbd_init
# requests of 64 KiB: 64 of them on the held fill's 4 MiB segment
cg_global "smb2 max read = 65536"
cg_share directsync "vfs objects = cacheguard" "cacheguard:mode = direct" \
	"cacheguard:min file size = 1M" "cacheguard:stream trigger = 1M" \
	"aio read size = 0"

shim=$CG_ROOT/shim_hold.so
mkdir -m 1777 "$CG_ROOT/marks"
cat >"$CG_ROOT/shim_hold.c" <<EOF
/*
 * The first O_DIRECT preadv2 of big.bin at $((16 * MiB)) or beyond in a
 * thread other than smbd's main one sleeps $HOLD s, and says so in
 * $CG_ROOT/marks/held (as the client's user: smbd reads as that user);
 * the wall clock (CLOCK_REALTIME and its coarse variant)
 * runs an hour ahead
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static atomic_int held;

/* fd is big.bin's (ref.bin is never held) */
static int is_big(int fd)
{
	char link[64], path[4096];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0) {
		return 0;
	}
	path[n] = '\0';
	return strstr(path, "/big.bin") != NULL;
}

ssize_t preadv2(int fd, const struct iovec *iov, int n, off_t off, int fl)
{
	static ssize_t (*real)(int, const struct iovec *, int, off_t, int);

	if (real == NULL) {
		real = dlsym(RTLD_NEXT, "preadv2");
	}
	if (off >= $((16 * MiB)) && (fcntl(fd, F_GETFL) & O_DIRECT) &&
	    syscall(SYS_gettid) != getpid() && is_big(fd) &&
	    atomic_exchange(&held, 1) == 0) {
		close(open("$CG_ROOT/marks/held", O_WRONLY | O_CREAT, 0644));
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

# copy NAME: a cold get of NAME; sets ms
copy()
{
	local t0

	cg_drop_cache "$CG_SHARE/$1"
	t0=$(date +%s%N)
	cg_smbclient directsync "get $1 $CG_ROOT/back.bin" \
		>"$CG_ROOT/get.out" 2>&1
	ms=$((($(date +%s%N) - t0) / 1000000))
	cg_expect "[$1] the copy is byte-identical" \
		cmp "$CG_SHARE/$1" "$CG_ROOT/back.bin"
}

for f in big.bin ref.bin; do
	head -c $((96 * MiB)) /dev/urandom >"$CG_SHARE/$f"
	chmod 0644 "$CG_SHARE/$f"
done
copy big.bin
held=$ms
copy ref.bin
cg_expect "the copies went through the sync path, direct" \
	test "$(grep -cE "(big|ref).bin: size .* direct [1-9][0-9]*;.* pread [1-9]" \
		"$CG_LOG")" = 2
echo "copy with a fill held ${HOLD} s: $held ms; without: $ms ms"
cg_expect "a fill in a pool thread was held" test -e "$CG_ROOT/marks/held"
cg_expect_le "the copy with a fill held ${HOLD} s (ms), against one without" \
	"$held" $((ms + 400))
