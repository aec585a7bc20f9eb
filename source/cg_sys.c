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
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cg_sys.h"

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
		uint64_t n = end - pos;
		void *map = NULL;
		uint64_t i;

		if (n > CG_MINCORE_CHUNK) {
			n = CG_MINCORE_CHUNK;
		}
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
	long ret;

	ret = syscall(__NR_cachestat, fd, &range, &cs, 0);
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

const struct cg_sys cg_sys_linux = {
	.fadvise = cg_linux_fadvise,
	.resident = cg_linux_resident,
	.preadv2 = cg_linux_preadv2,
	.sync_file_range = cg_linux_sync_file_range,
	.pwritev2 = cg_linux_pwritev2,
};
