/*
 * vfs_cacheguard engine: the real syscall layer
 *
 * Copyright (C) 2026 The vfs_cacheguard authors
 *
 * This program is free software; you can redistribute it and/or modify
 * it under the terms of the GNU General Public License as published by
 * the Free Software Foundation; either version 3 of the License, or
 * (at your option) any later version.
 *
 * This program is distributed in the hope that it will be useful,
 * but WITHOUT ANY WARRANTY; without even the implied warranty of
 * MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
 * GNU General Public License for more details.
 *
 * You should have received a copy of the GNU General Public License
 * along with this program.  If not, see <http://www.gnu.org/licenses/>.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "cg_sys.h"
#include "cg_util.h"

#ifndef __NR_cachestat
#define __NR_cachestat 451	/* the same on every architecture */
#endif

/* <linux/mman.h> has these from 6.5 on; Debian 12's headers do not */
struct cg_cachestat_range {
	uint64_t off;
	uint64_t len;
};

struct cg_cachestat {
	uint64_t nr_cache;
	uint64_t nr_dirty;
	uint64_t nr_writeback;
	uint64_t nr_evicted;
	uint64_t nr_recently_evicted;
};

/* mincore() looks at this much of the file per mapping */
#define CG_MINCORE_CHUNK (256ULL << 20)

static int cg_linux_fadvise(int fd, uint64_t off, uint64_t len, int advice)
{
	return posix_fadvise(fd, (off_t)off, (off_t)len, advice);
}

static int cg_mincore_resident(int fd,
			       uint64_t off,
			       uint64_t len,
			       uint64_t *bytes)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t pos = off & ~(page - 1);
	uint64_t end = off + len;
	unsigned char *vec = NULL;
	uint64_t count = 0;

	vec = malloc(CG_MINCORE_CHUNK / page);
	if (vec == NULL) {
		return ENOMEM;
	}
	while (pos < end) {
		uint64_t n = CG_MIN(end - pos, CG_MINCORE_CHUNK);
		void *map = NULL;
		uint64_t i;

		map = mmap(NULL, n, PROT_READ, MAP_SHARED, fd, (off_t)pos);
		if (map == MAP_FAILED) {
			int err = errno;

			free(vec);
			return err;
		}
		if (mincore(map, n, vec) == 0) {
			for (i = 0; i < (n + page - 1) / page; i++) {
				count += (vec[i] & 1) * page;
			}
		}
		munmap(map, n);
		pos += n;
	}
	free(vec);
	*bytes = count;
	return 0;
}

static int cg_linux_resident(int fd,
			     uint64_t off,
			     uint64_t len,
			     uint64_t *bytes)
{
	struct cg_cachestat_range range = {.off = off, .len = len};
	struct cg_cachestat cs = {0};
	long ret = syscall(__NR_cachestat, fd, &range, &cs, 0);

	if (ret == 0) {
		*bytes = cs.nr_cache * (uint64_t)sysconf(_SC_PAGESIZE);
		return 0;
	}
	if (errno != ENOSYS) {
		return errno;
	}
	return cg_mincore_resident(fd, off, len, bytes);
}

static ssize_t cg_linux_preadv2(int fd,
				void *buf,
				size_t n,
				uint64_t off,
				int flags)
{
	struct iovec iov = {.iov_base = buf, .iov_len = n};

	return preadv2(fd, &iov, 1, (off_t)off, flags);
}

static int cg_linux_file_size(int fd, uint64_t *size)
{
	struct stat st;

	if (fstat(fd, &st) != 0) {
		return errno;
	}
	*size = (uint64_t)st.st_size;
	return 0;
}

static int cg_linux_sync_file_range(int fd,
				    uint64_t off,
				    uint64_t len,
				    unsigned flags)
{
	return sync_file_range(fd, (off_t)off, (off_t)len, flags);
}

static ssize_t cg_linux_pwritev2(int fd,
				 const void *buf,
				 size_t n,
				 uint64_t off,
				 int flags)
{
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = n};

	return pwritev2(fd, &iov, 1, (off_t)off, flags);
}

/*
 * A HIT's copy by the kernel, process_vm_readv() on this process: where a
 * hypervisor shadows page tables (PVM), pages a user-space memcpy() wrote
 * fault again when the kernel sends them. Refused (seccomp, ENOSYS):
 * memcpy() from then on; any other failure copies the rest so.
 */
static void cg_linux_copy(void *dst, const void *src, size_t n)
{
	static int refused;
	size_t done = 0;

	while (done < n && !__atomic_load_n(&refused, __ATOMIC_RELAXED)) {
		struct iovec to = {
			.iov_base = (uint8_t *)dst + done,
			.iov_len = n - done,
		};
		struct iovec from = {
			.iov_base = (uint8_t *)src + done,
			.iov_len = n - done,
		};
		ssize_t got = process_vm_readv(getpid(), &to, 1, &from, 1, 0);

		if (got > 0) {
			done += (size_t)got;
			continue;
		}
		if (got == -1 && (errno == ENOSYS || errno == EPERM)) {
			__atomic_store_n(&refused, 1, __ATOMIC_RELAXED);
		}
		break;
	}
	if (done < n) {
		memcpy((uint8_t *)dst + done, (const uint8_t *)src + done,
		       n - done);
	}
}

int cg_sys_lock(const struct cg_sys *sys, int fd, int cmd, struct flock *fl)
{
	int ret;

	do {
		ret = sys->lock != NULL ? sys->lock(fd, cmd, fl)
					: fcntl(fd, cmd, fl);
	} while (ret == -1 && errno == EINTR);
	return ret;
}

int cg_sys_dup(const struct cg_sys *sys, int fd)
{
	return sys->dup != NULL ? sys->dup(fd) : fcntl(fd, F_DUPFD_CLOEXEC, 0);
}

int cg_sys_fs_type(const struct cg_sys *sys, int fd, uint64_t *f_type)
{
	struct statfs sfs;

	if (sys->fs_type != NULL) {
		return sys->fs_type(fd, f_type);
	}
	if (fstatfs(fd, &sfs) != 0) {
		return errno;
	}
	*f_type = (uint64_t)sfs.f_type;
	return 0;
}

/* Via /proc/self/fd, as the calling user: permissions are checked again */
static int cg_sys_reopen(int fd, int flags)
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, flags | O_CLOEXEC);
}

int cg_sys_reopen_direct(const struct cg_sys *sys, int fd)
{
	return sys->reopen_direct != NULL
		       ? sys->reopen_direct(fd)
		       : cg_sys_reopen(fd, O_RDONLY | O_DIRECT);
}

int cg_sys_readable(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags != -1 && (flags & O_ACCMODE) != O_WRONLY) {
		return CG_SYS_SAME_FD;
	}
	return cg_sys_reopen(fd, O_RDONLY);
}

void cg_sys_sleep(const struct cg_sys *sys, uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000ULL),
		.tv_nsec = (long)(ns % 1000000000ULL),
	};

	if (sys->sleep != NULL) {
		sys->sleep(ns);
		return;
	}
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
	}
}

const struct cg_sys cg_sys_linux = {
	.fadvise = cg_linux_fadvise,
	.resident = cg_linux_resident,
	.preadv2 = cg_linux_preadv2,
	.file_size = cg_linux_file_size,
	.sync_file_range = cg_linux_sync_file_range,
	.pwritev2 = cg_linux_pwritev2,
	.copy = cg_linux_copy,
};

#define CG_IOPRIO_WHO_PROCESS 1	/* with 0: the calling thread */

int cg_ioprio_enter(unsigned prio)
{
	long old;

	if (prio == 0) {
		return -1;
	}
	old = syscall(SYS_ioprio_get, CG_IOPRIO_WHO_PROCESS, 0);
	if (old == -1 || (unsigned long)old == prio ||
	    syscall(SYS_ioprio_set, CG_IOPRIO_WHO_PROCESS, 0, prio) != 0) {
		return -1;
	}
	return (int)old;
}

void cg_ioprio_leave(int saved)
{
	if (saved != -1) {
		(void)syscall(SYS_ioprio_set, CG_IOPRIO_WHO_PROCESS, 0, saved);
	}
}

/*
 * Uncached or dropping reads go in pieces of at most this much: the
 * kernel holds every missing page of one call until it copies them out.
 */
#define CG_UNCACHED_PIECE (1024 * 1024)

void cg_sys_copy(const struct cg_sys *sys, void *dst, const void *src, size_t n)
{
	if (sys->copy != NULL) {
		sys->copy(dst, src, n);
		return;
	}
	memcpy(dst, src, n);
}

ssize_t cg_pread_full(const struct cg_sys *sys,
		      int fd,
		      void *buf,
		      size_t n,
		      uint64_t off,
		      int flags)
{
	size_t done = 0;

	while (done < n) {
		size_t want = n - done;
		ssize_t ret;

		if ((flags & (CG_RWF_DONTCACHE | CG_READ_DROP)) &&
		    want > CG_UNCACHED_PIECE) {
			want = CG_UNCACHED_PIECE;
		}
		ret = sys->preadv2(fd, (char *)buf + done, want, off + done,
				   flags & ~CG_READ_DROP);
		if (ret > 0 && (flags & CG_READ_DROP)) {
			sys->fadvise(fd, off + done, (uint64_t)ret,
				     POSIX_FADV_DONTNEED);
		}

		if (ret == -1 && errno == EINTR) {
			continue;
		}
		if (ret == -1) {
			return -1;
		}
		if (ret == 0) {
			break; /* end of file */
		}
		done += (size_t)ret;
	}
	return (ssize_t)done;
}

ssize_t cg_pwrite_full(const struct cg_sys *sys,
		       int fd,
		       const void *buf,
		       size_t n,
		       uint64_t off,
		       int flags)
{
	const char *p = buf;
	size_t done = 0;

	while (done < n) {
		ssize_t ret = sys->pwritev2(fd, p + done, n - done, off + done,
					    flags);

		if (ret == -1 && errno == EINTR) {
			continue;
		}
		if (ret == -1) {
			return -1;
		}
		if (ret == 0) {
			errno = EIO;
			return -1;
		}
		done += (size_t)ret;
	}
	return (ssize_t)n;
}
