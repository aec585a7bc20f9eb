/*
 * smb_smallfiles: read many small files through SMB (libsmbclient) as a
 * client does, open, read whole, close, and report the rate.
 *
 *   smb_smallfiles [-p PORT] [-U USER%PASS] [-r PASSES] [-s SEED]
 *                  SIZES //HOST/SHARE/DIR
 *
 * DIR holds files named f00000, f00001, ..., one per line of the local
 * file SIZES, which gives each one's size in bytes, at most 16 MiB
 * (testsuite/bench/smallfiles.sh writes both). Each pass reads every
 * file once, in an order shuffled by SEED (the same order for every
 * share given the same seed), on one connection: one open, one read of
 * the file's size and one close, three requests a file, as from a
 * client that knows the size from the open's answer (libsmbclient reads
 * on until a read comes back empty: asked for more, it would send a
 * fourth, a READ at the end of the file). The connection is made before
 * the clock starts.
 *
 * Prints "files N passes P ops O bytes B seconds S ops_per_s R", an op
 * being one file opened, read and closed; exits 0, or 2 with a message
 * on a usage or I/O error (a file that cannot be opened or read, or
 * whose read gives fewer bytes than its size).
 *
 * Copyright (C) 2026 The vfs_cacheguard authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "smb_common.h"

/* The largest file size SIZES may give */
#define SMALLFILES_MAX (16 << 20)

struct smallfiles {
	SMBCCTX *ctx;
	const char *dir;	/* //HOST/SHARE/DIR */
	unsigned nfiles;
	unsigned passes;
	size_t *sizes;		/* per file, from SIZES */
	size_t maxsize;		/* the largest of them */
	unsigned *order;	/* file numbers, shuffled */
	char *buf;		/* maxsize */
	uint64_t ops;
	uint64_t bytes;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Fisher-Yates, from random() seeded by -s */
static void shuffle(unsigned *order, unsigned n)
{
	unsigned i, j, t;

	for (i = 0; i < n; i++) {
		order[i] = i;
	}
	for (i = n; i > 1; i--) {
		j = (unsigned)random() % i;
		t = order[i - 1];
		order[i - 1] = order[j];
		order[j] = t;
	}
}

/* One op: open file number k, read it whole, close it; false on error */
static bool read_one(struct smallfiles *sf, unsigned k)
{
	smbc_open_fn open_fn = smbc_getFunctionOpen(sf->ctx);
	smbc_read_fn read_fn = smbc_getFunctionRead(sf->ctx);
	smbc_close_fn close_fn = smbc_getFunctionClose(sf->ctx);
	SMBCFILE *fh = NULL;
	char url[4096];
	ssize_t n;

	snprintf(url, sizeof(url), "smb:%s/f%05u", sf->dir, k);
	fh = open_fn(sf->ctx, url, O_RDONLY, 0);
	if (fh == NULL) {
		fprintf(stderr, "open %s: %s\n", url, strerror(errno));
		return false;
	}
	n = read_fn(sf->ctx, fh, sf->buf, sf->sizes[k]);
	if (n < 0) {
		fprintf(stderr, "read %s: %s\n", url, strerror(errno));
		close_fn(sf->ctx, fh);
		return false;
	}
	if (close_fn(sf->ctx, fh) != 0) {
		fprintf(stderr, "close %s: %s\n", url, strerror(errno));
		return false;
	}
	if ((size_t)n != sf->sizes[k]) {
		fprintf(stderr, "%s: read %zd bytes of %zu\n", url, n,
			sf->sizes[k]);
		return false;
	}
	sf->ops++;
	sf->bytes += (uint64_t)n;
	return true;
}

/* SIZES: one size a line; sets nfiles, sizes and maxsize */
static bool read_sizes(struct smallfiles *sf, const char *path)
{
	FILE *f = fopen(path, "r");
	unsigned long long v = 0;
	size_t *grown = NULL;
	unsigned room = 0;

	if (f == NULL) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return false;
	}
	while (fscanf(f, "%llu", &v) == 1) {
		if (v == 0 || v > SMALLFILES_MAX) {
			fprintf(stderr, "%s: a size of %llu, not 1 to %d\n",
				path, v, SMALLFILES_MAX);
			fclose(f);
			return false;
		}
		if (sf->nfiles == room) {
			room = room == 0 ? 1024 : room * 2;
			grown = realloc(sf->sizes, room * sizeof(*grown));
			if (grown == NULL) {
				fclose(f);
				return false;
			}
			sf->sizes = grown;
		}
		sf->sizes[sf->nfiles++] = (size_t)v;
		if (v > sf->maxsize) {
			sf->maxsize = (size_t)v;
		}
	}
	fclose(f);
	if (sf->nfiles == 0) {
		fprintf(stderr, "%s: no sizes\n", path);
		return false;
	}
	return true;
}

/* Log in and look at DIR, so that the clock counts no connection set-up */
static bool connect_dir(struct smallfiles *sf, int port)
{
	smbc_stat_fn stat_fn = NULL;
	struct stat st;
	char url[4096];

	sf->ctx = smbt_connect(port);
	if (sf->ctx == NULL) {
		return false;
	}
	stat_fn = smbc_getFunctionStat(sf->ctx);
	snprintf(url, sizeof(url), "smb:%s", sf->dir);
	if (stat_fn(sf->ctx, url, &st) != 0) {
		fprintf(stderr, "stat %s: %s\n", url, strerror(errno));
		return false;
	}
	return true;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: smb_smallfiles [-p PORT] [-U USER%%PASS] [-r PASSES] "
		"[-s SEED] SIZES //HOST/SHARE/DIR\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct smallfiles sf = {
		.passes = 1,
	};
	unsigned seed = 1, p, i;
	int port = 445, opt;
	double start, secs;

	while ((opt = getopt(argc, argv, "p:U:r:s:")) != -1) {
		if (smbt_option(opt, &port, &seed)) {
			continue;
		}
		switch (opt) {
		case 'r':
			sf.passes = (unsigned)strtoul(optarg, NULL, 0);
			break;
		default:
			return usage();
		}
	}
	if (argc - optind != 2 || sf.passes == 0) {
		return usage();
	}
	if (!read_sizes(&sf, argv[optind])) {
		return 2;
	}
	sf.dir = argv[optind + 1];
	srandom(seed);
	sf.order = calloc(sf.nfiles, sizeof(*sf.order));
	sf.buf = malloc(sf.maxsize);
	if (sf.order == NULL || sf.buf == NULL) {
		fprintf(stderr, "out of memory\n");
		return 2;
	}
	if (!connect_dir(&sf, port)) {
		return 2;
	}

	start = now_s();
	for (p = 0; p < sf.passes; p++) {
		shuffle(sf.order, sf.nfiles);
		for (i = 0; i < sf.nfiles; i++) {
			if (!read_one(&sf, sf.order[i])) {
				return 2;
			}
		}
	}
	secs = now_s() - start;

	printf("files %u passes %u ops %" PRIu64 " bytes %" PRIu64
	       " seconds %.3f ops_per_s %.0f\n", sf.nfiles, sf.passes,
	       sf.ops, sf.bytes, secs, (double)sf.ops / secs);
	smbc_free_context(sf.ctx, 1);
	free(sf.order);
	free(sf.buf);
	free(sf.sizes);
	return 0;
}
