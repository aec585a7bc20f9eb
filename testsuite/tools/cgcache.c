/*
 * cgcache: the tests' page-cache oracle for one file
 *
 *   cgcache stat FILE [OFF LEN]  resident bytes of FILE, or of a range
 *                                (cachestat(2), else mincore)
 *   cgcache evicted FILE [OFF LEN]
 *                                bytes of FILE, or of a range, that the
 *                                kernel's reclaim evicted: cachestat(2)'s
 *                                nr_evicted, the shadow entries reclaim
 *                                leaves where a page was. Invalidating a
 *                                resident page (POSIX_FADV_DONTNEED,
 *                                truncate) leaves none, so resident +
 *                                evicted is what no one dropped. Exit 3
 *                                without cachestat (Linux before 6.5)
 *   cgcache drop FILE            write back and drop FILE's pages: cold
 *   cgcache load FILE [OFF LEN]  read FILE, or a range, leaving it cached
 *   cgcache sum FILE...          resident bytes of all the files, summed
 *                                (one process for a sampler's many files;
 *                                a file that cannot be opened counts 0)
 *   cgcache behind FILE SPAN     resident bytes of FILE more than SPAN
 *                                below its highest resident byte: what
 *                                a stream left behind its front (0 for
 *                                a file with nothing resident)
 *   cgcache budget FILE LIMIT    bytes of the server-wide direct budget
 *                                that smbd processes hold below LIMIT,
 *                                FILE being its lock file (cg_budget.c)
 *
 * The load reads without readahead (POSIX_FADV_RANDOM), so a range
 * leaves just that range cached: another reader's share of a file.
 *
 * Residency is read from the kernel, never inferred from timing.
 *
 * Copyright (C) 2026 The vfs_cacheguard authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cg_budget.h"
#include "cg_sys.h"

/* The range of the file a command covers: the whole file by default */
struct range {
	uint64_t off;
	uint64_t len;
};

static int cg_stat(int fd, struct range r)
{
	uint64_t bytes = 0;
	int ret;

	if (r.len == 0) {
		printf("0\n");
		return 0;
	}
	ret = cg_sys_linux.resident(fd, r.off, r.len, &bytes);
	if (ret != 0) {
		return ret;
	}
	printf("%" PRIu64 "\n", bytes);
	return 0;
}

#ifndef __NR_cachestat
#define __NR_cachestat 451	/* the same on every architecture */
#endif

/* Exit status of "evicted" where the kernel has no cachestat(2) */
#define CGCACHE_NO_CACHESTAT 3

static int cg_evicted(int fd, struct range r)
{
	/* struct cachestat_range and struct cachestat of <linux/mman.h> */
	uint64_t range[2] = {r.off, r.len};
	uint64_t cs[5] = {0};

	if (syscall(__NR_cachestat, fd, range, cs, 0) != 0) {
		return errno;
	}
	printf("%" PRIu64 "\n", cs[3] * (uint64_t)sysconf(_SC_PAGESIZE));
	return 0;
}

static int cg_drop(int fd)
{
	if (fdatasync(fd) != 0) {
		return errno;
	}
	return posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
}

static int cg_load(int fd, struct range r)
{
	static char buf[1 << 20];
	uint64_t off = r.off;
	ssize_t n = 0;

	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	while (off < r.off + r.len) {
		size_t want = sizeof(buf);

		if (want > r.off + r.len - off) {
			want = r.off + r.len - off;
		}
		n = pread(fd, buf, want, (off_t)off);
		if (n <= 0) {
			break;
		}
		off += (uint64_t)n;
	}
	return n < 0 ? errno : 0;
}

static int cg_sum(int nfiles, char **files)
{
	uint64_t total = 0;
	int i;

	for (i = 0; i < nfiles; i++) {
		uint64_t bytes = 0;
		struct stat st;
		int fd = open(files[i], O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			continue;
		}
		if (fstat(fd, &st) == 0 && st.st_size > 0 &&
		    cg_sys_linux.resident(fd, 0, (uint64_t)st.st_size,
					  &bytes) == 0) {
			total += bytes;
		}
		close(fd);
	}
	printf("%" PRIu64 "\n", total);
	return 0;
}

/* The end of the highest resident MiB of the file, 0 if none */
static uint64_t cg_top(int fd, uint64_t size)
{
	const uint64_t step = 1 << 20;
	uint64_t off = (size + step - 1) / step * step;

	while (off > 0) {
		uint64_t bytes = 0;

		off -= step;
		if (cg_sys_linux.resident(fd, off, step, &bytes) == 0 &&
		    bytes > 0) {
			return off + step < size ? off + step : size;
		}
	}
	return 0;
}

static int cg_behind(int fd, uint64_t size, uint64_t span)
{
	uint64_t top = cg_top(fd, size);
	uint64_t bytes = 0;

	if (top > span &&
	    cg_sys_linux.resident(fd, 0, top - span, &bytes) != 0) {
		return errno;
	}
	printf("%" PRIu64 "\n", bytes);
	return 0;
}

int main(int argc, char **argv)
{
	struct range r = {0};
	struct stat st;
	int fd, ret;

	if (argc >= 2 && strcmp(argv[1], "sum") == 0) {
		return cg_sum(argc - 2, argv + 2);
	}

	if (argc != 3 && argc != 5 &&
	    !(argc == 4 && (strcmp(argv[1], "budget") == 0 ||
			    strcmp(argv[1], "behind") == 0))) {
		fprintf(stderr,
			"usage: cgcache stat|evicted|drop|load FILE [OFF LEN]\n"
			"       cgcache sum FILE...\n"
			"       cgcache behind FILE SPAN\n"
			"       cgcache budget FILE LIMIT\n");
		return 2;
	}
	fd = open(argv[2], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		fprintf(stderr, "cgcache: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	r.len = (uint64_t)st.st_size;
	if (argc == 5) {
		r.off = strtoull(argv[3], NULL, 0);
		r.len = strtoull(argv[4], NULL, 0);
	}
	if (argc == 4 && strcmp(argv[1], "behind") == 0) {
		ret = cg_behind(fd, r.len, strtoull(argv[3], NULL, 0));
		if (ret != 0) {
			fprintf(stderr, "cgcache behind %s: %s\n", argv[2],
				strerror(ret));
		}
		return ret == 0 ? 0 : 1;
	}
	if (argc == 4) {
		uint64_t limit = strtoull(argv[3], NULL, 0);

		printf("%" PRIu64 "\n",
		       cg_budget_used(&cg_sys_linux, fd, limit));
		return 0;
	}
	if (strcmp(argv[1], "stat") == 0) {
		ret = cg_stat(fd, r);
	} else if (strcmp(argv[1], "evicted") == 0) {
		ret = cg_evicted(fd, r);
		if (ret == ENOSYS) {
			fprintf(stderr, "cgcache evicted: no cachestat(2) "
				"in this kernel\n");
			return CGCACHE_NO_CACHESTAT;
		}
	} else if (strcmp(argv[1], "drop") == 0) {
		ret = cg_drop(fd);
	} else if (strcmp(argv[1], "load") == 0) {
		ret = cg_load(fd, r);
	} else {
		fprintf(stderr, "cgcache: unknown command %s\n", argv[1]);
		return 2;
	}
	if (ret != 0) {
		fprintf(stderr, "cgcache %s %s: %s\n", argv[1], argv[2],
			strerror(ret));
		return 1;
	}
	return 0;
}
