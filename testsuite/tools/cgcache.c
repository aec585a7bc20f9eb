/*
 * cgcache: the tests' page-cache oracle for one file
 *
 *   cgcache stat FILE   resident bytes of FILE (cachestat(2), else mincore)
 *   cgcache drop FILE   write back and drop FILE's pages: a cold start
 *   cgcache load FILE   read FILE whole, leaving it cached: a hot start
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
#include <unistd.h>

#include "cg_sys.h"

static int cg_stat(int fd)
{
	struct stat st;
	uint64_t bytes = 0;
	int ret;

	if (fstat(fd, &st) != 0) {
		return errno;
	}
	if (st.st_size == 0) {
		printf("0\n");
		return 0;
	}
	ret = cg_sys_linux.resident(fd, 0, (uint64_t)st.st_size, &bytes);
	if (ret != 0) {
		return ret;
	}
	printf("%" PRIu64 "\n", bytes);
	return 0;
}

static int cg_drop(int fd)
{
	if (fdatasync(fd) != 0) {
		return errno;
	}
	return posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
}

static int cg_load(int fd)
{
	static char buf[1 << 20];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
	}
	return n < 0 ? errno : 0;
}

int main(int argc, char **argv)
{
	int fd, ret;

	if (argc != 3) {
		fprintf(stderr, "usage: cgcache stat|drop|load FILE\n");
		return 2;
	}
	fd = open(argv[2], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "cgcache: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	if (strcmp(argv[1], "stat") == 0) {
		ret = cg_stat(fd);
	} else if (strcmp(argv[1], "drop") == 0) {
		ret = cg_drop(fd);
	} else if (strcmp(argv[1], "load") == 0) {
		ret = cg_load(fd);
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
