/*
 * smb_verify: read a file through SMB (libsmbclient) and compare every
 * byte with the same file read locally.
 *
 *   smb_verify [-p PORT] [-U USER%PASS] [-n COUNT] [-s SEED] [-m MAXLEN]
 *              [-l LIMIT] MODE //HOST/SHARE/PATH LOCALFILE
 *
 *   MODE random	COUNT reads at random offsets, 1 byte to MAXLEN long
 *			(default 8 MiB), some past the end of the file
 *   MODE small		COUNT reads of 4-64 KiB at random offsets (a database
 *			or web tier); prints the distinct bytes touched
 *   MODE seq		the whole file in order, in reads of random length up
 *			to MAXLEN (long enough to trigger a stream); with
 *			-l only its first LIMIT bytes, then the file is
 *			closed (a copy given up half way)
 *   MODE mixed		COUNT runs, alternating: a sequential run of up to
 *			32 MiB from a random offset (long enough to start a
 *			stream), then 16 random reads
 *
 * Exits 0 when every byte matched, 1 on a mismatch (offset printed),
 * 2 on a usage or I/O error.
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
#include <unistd.h>

#include "smb_common.h"

struct verify {
	SMBCCTX *ctx;
	SMBCFILE *remote;
	int local;
	uint64_t size;
	unsigned char *rbuf;
	unsigned char *lbuf;
	uint64_t maxlen;
	uint64_t reads;
	unsigned char *touched;	/* one byte per 4 KiB page, for "small" */
};

static uint64_t rnd64(void)
{
	return ((uint64_t)random() << 31) ^ (uint64_t)random();
}

/* Read [off, off+len) both ways and compare; 0 ok, 1 mismatch, 2 error */
static int check_range(struct verify *v, uint64_t off, uint64_t len)
{
	smbc_lseek_fn lseek_fn = smbc_getFunctionLseek(v->ctx);
	smbc_read_fn read_fn = smbc_getFunctionRead(v->ctx);
	uint64_t want = 0, got = 0;
	ssize_t n;

	if (off < v->size) {
		want = v->size - off < len ? v->size - off : len;
	}
	if (lseek_fn(v->ctx, v->remote, (off_t)off, SEEK_SET) < 0) {
		fprintf(stderr, "lseek %" PRIu64 ": %s\n", off, strerror(errno));
		return 2;
	}
	while (got < len) {
		n = read_fn(v->ctx, v->remote, v->rbuf + got, len - got);
		if (n < 0) {
			fprintf(stderr, "read %" PRIu64 "+%" PRIu64 ": %s\n",
				off + got, len - got, strerror(errno));
			return 2;
		}
		if (n == 0) {
			break;
		}
		got += (uint64_t)n;
	}
	v->reads++;
	if (got != want) {
		printf("MISMATCH length at %" PRIu64 "+%" PRIu64
		       ": got %" PRIu64 " want %" PRIu64 "\n",
		       off, len, got, want);
		return 1;
	}
	if (want > 0 && pread(v->local, v->lbuf, want, (off_t)off) !=
				(ssize_t)want) {
		fprintf(stderr, "local pread: %s\n", strerror(errno));
		return 2;
	}
	if (memcmp(v->rbuf, v->lbuf, want) != 0) {
		uint64_t i = 0;

		while (v->rbuf[i] == v->lbuf[i]) {
			i++;
		}
		printf("MISMATCH bytes at %" PRIu64 " (read %" PRIu64
		       "+%" PRIu64 ")\n", off + i, off, len);
		return 1;
	}
	if (v->touched != NULL && want > 0) {
		uint64_t p;

		for (p = off / 4096; p * 4096 < off + want; p++) {
			v->touched[p] = 1;
		}
	}
	return 0;
}

static int run_random(struct verify *v, uint64_t count, uint64_t minlen,
		      uint64_t maxlen)
{
	uint64_t i;
	int ret;

	for (i = 0; i < count; i++) {
		uint64_t len = minlen + rnd64() % (maxlen - minlen + 1);
		/* now and then start past the end: short and empty reads */
		uint64_t off = rnd64() % (v->size + v->size / 32 + 1);

		ret = check_range(v, off, len);
		if (ret != 0) {
			return ret;
		}
	}
	return 0;
}

/* Sequential reads over [off, end), each of random length up to maxlen */
static int run_seq(struct verify *v, uint64_t off, uint64_t end)
{
	int ret;

	while (off < end) {
		uint64_t len = 1 + rnd64() % v->maxlen;

		ret = check_range(v, off, len);
		if (ret != 0) {
			return ret;
		}
		off += len;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct verify v = {.local = -1, .maxlen = 8 << 20};
	uint64_t count = 1000, limit = 0, i;
	unsigned seed = 1;
	int port = 445, opt, ret = 0;
	const char *mode, *url, *path;
	struct stat st;

	while ((opt = getopt(argc, argv, "p:U:n:s:m:l:")) != -1) {
		if (smbt_option(opt, &port, &seed)) {
			continue;
		}
		switch (opt) {
		case 'n': count = strtoull(optarg, NULL, 0); break;
		case 'm': v.maxlen = strtoull(optarg, NULL, 0); break;
		case 'l': limit = strtoull(optarg, NULL, 0); break;
		default: goto usage;
		}
	}
	if (argc - optind != 3 || v.maxlen == 0) {
		goto usage;
	}
	mode = argv[optind];
	url = argv[optind + 1];
	path = argv[optind + 2];
	srandom(seed);

	v.local = open(path, O_RDONLY);
	if (v.local < 0 || fstat(v.local, &st) != 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return 2;
	}
	v.size = (uint64_t)st.st_size;
	v.rbuf = malloc(v.maxlen < (64 << 10) ? 64 << 10 : v.maxlen);
	v.lbuf = malloc(v.maxlen < (64 << 10) ? 64 << 10 : v.maxlen);
	v.ctx = smbt_connect(port);
	if (v.rbuf == NULL || v.lbuf == NULL || v.ctx == NULL) {
		return 2;
	}
	{
		char full[4096];

		snprintf(full, sizeof(full), "smb:%s", url);
		v.remote = smbc_getFunctionOpen(v.ctx)(v.ctx, full, O_RDONLY, 0);
		if (v.remote == NULL) {
			fprintf(stderr, "open %s: %s\n", full, strerror(errno));
			return 2;
		}
	}

	if (strcmp(mode, "random") == 0) {
		ret = run_random(&v, count, 1, v.maxlen);
	} else if (strcmp(mode, "small") == 0) {
		v.touched = calloc(v.size / 4096 + 1, 1);
		ret = run_random(&v, count, 4096, 65536);
		if (ret == 0) {
			uint64_t pages = 0;

			for (i = 0; i <= v.size / 4096; i++) {
				pages += v.touched[i];
			}
			printf("touched %" PRIu64 "\n", pages * 4096);
		}
	} else if (strcmp(mode, "seq") == 0) {
		ret = run_seq(&v, 0, limit > 0 ? limit : v.size + 1);
	} else if (strcmp(mode, "mixed") == 0) {
		for (i = 0; i < count && ret == 0; i++) {
			uint64_t from = rnd64() % (v.size + 1);
			uint64_t len = 1 + rnd64() % (32 << 20);

			ret = (i % 2) ? run_random(&v, 16, 1, v.maxlen)
				      : run_seq(&v, from, from + len);
		}
	} else {
		goto usage;
	}
	smbc_getFunctionClose(v.ctx)(v.ctx, v.remote);
	smbc_free_context(v.ctx, 1);
	if (ret == 0) {
		printf("ok %" PRIu64 " reads\n", v.reads);
	}
	return ret;
usage:
	fprintf(stderr,
		"usage: smb_verify [-p PORT] [-U USER%%PASS] [-n COUNT] "
		"[-s SEED] [-m MAXLEN] [-l LIMIT] random|small|seq|mixed "
		"//HOST/SHARE/PATH LOCALFILE\n");
	return 2;
}
