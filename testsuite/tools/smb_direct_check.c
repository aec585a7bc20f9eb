/*
 * smb_direct_check: a sequential SMB reader (libsmbclient) that checks
 * every byte against the local file while the file changes under it,
 * for the direct mode's coherence tests; and a reader of two files at
 * once on one connection (one smbd process), for its memory budget.
 *
 *   smb_direct_check [-p PORT] [-U USER%PASS] [-b BLOCK] [-s SEED]
 *                    MODE //HOST/SHARE/PATH LOCALFILE [URL2 LOCAL2]
 *
 *   MODE smbwrite	every 8th read, write 64 KiB of new bytes a few MiB
 *			ahead of the reader through a second handle on the
 *			same connection (what the reader's prefetch holds)
 *   MODE localwrite	the same with pwrite() on LOCALFILE, no fsync
 *   MODE clientwrite	the same through a second SMB client: a connection
 *			of its own, so another smbd process writes
 *   MODE tickwrite	after every read, pwrite() on LOCALFILE at once at each
 *			MiB of the 8 MiB ahead of the reader (the prefetch
 *			just refilled): on kernels with per-tick timestamps
 *			some writes land in the tick of a fill's fstat()
 *   MODE truncate	a third of the way in, truncate LOCALFILE 3 MiB
 *			ahead of the reader; read on past the old end; then
 *			append new bytes there and read them too
 *   MODE pair		read the two files in turns, BLOCK bytes each;
 *			then close the first and read the second again
 *
 * Every read is compared with a pread() of LOCALFILE right after it:
 * SMB and local bytes must agree, short reads included. Exits 0 when all
 * matched, 1 on a mismatch (offset printed), 2 on a usage or I/O error.
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

#define MiB (1024 * 1024)
#define WRITE_LEN (64 * 1024)

struct reader {
	SMBCFILE *remote;
	int local;
	uint64_t off;		/* the next read */
	uint64_t reads;
	bool eof;
};

static SMBCCTX *ctx;
static SMBCCTX *wctx;	/* the SMB writer's: ctx, or a second client's */
static size_t block = MiB;
static unsigned char *rbuf, *lbuf, *wbuf;
static SMBCFILE *remote_open(SMBCCTX *c, const char *url, int flags)
{
	char full[4096];
	SMBCFILE *f = NULL;

	snprintf(full, sizeof(full), "smb:%s", url);
	f = smbc_getFunctionOpen(c)(c, full, flags, 0);
	if (f == NULL) {
		fprintf(stderr, "open %s: %s\n", full, strerror(errno));
	}
	return f;
}

static void fill_random(unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		p[i] = (unsigned char)random();
	}
}

/* The next block of r through SMB, compared with the local file now */
static int read_check(struct reader *r)
{
	smbc_lseek_fn lseek_fn = smbc_getFunctionLseek(ctx);
	smbc_read_fn read_fn = smbc_getFunctionRead(ctx);
	ssize_t got, want;

	if (lseek_fn(ctx, r->remote, (off_t)r->off, SEEK_SET) < 0) {
		fprintf(stderr, "lseek: %s\n", strerror(errno));
		return 2;
	}
	got = read_fn(ctx, r->remote, rbuf, block);
	if (got < 0) {
		fprintf(stderr, "read %" PRIu64 ": %s\n", r->off,
			strerror(errno));
		return 2;
	}
	want = pread(r->local, lbuf, block, (off_t)r->off);
	if (want < 0) {
		fprintf(stderr, "local pread: %s\n", strerror(errno));
		return 2;
	}
	r->reads++;
	if (got != want) {
		printf("MISMATCH length at %" PRIu64 ": got %zd want %zd\n",
		       r->off, got, want);
		return 1;
	}
	if (memcmp(rbuf, lbuf, (size_t)got) != 0) {
		ssize_t i = 0;

		while (rbuf[i] == lbuf[i]) {
			i++;
		}
		printf("MISMATCH bytes at %" PRIu64 " (stale or wrong)\n",
		       r->off + (uint64_t)i);
		return 1;
	}
	r->off += (uint64_t)got;
	r->eof = got == 0;
	return 0;
}

/* New bytes at off, through a second SMB handle or the local file */
static int write_ahead(struct reader *r, SMBCFILE *w, uint64_t off)
{
	ssize_t ret;

	fill_random(wbuf, WRITE_LEN);
	if (w == NULL) {
		ret = pwrite(r->local, wbuf, WRITE_LEN, (off_t)off);
	} else if (smbc_getFunctionLseek(wctx)(wctx, w, (off_t)off,
					       SEEK_SET) < 0) {
		ret = -1;
	} else {
		ret = smbc_getFunctionWrite(wctx)(wctx, w, wbuf, WRITE_LEN);
	}
	if (ret != WRITE_LEN) {
		fprintf(stderr, "write at %" PRIu64 ": %s\n", off,
			strerror(errno));
		return 2;
	}
	return 0;
}

/* Read r on to end of file */
static int run_seq(struct reader *r)
{
	int ret = 0;

	while (ret == 0 && !r->eof) {
		ret = read_check(r);
	}
	return ret;
}

static int run_writes(struct reader *r, SMBCFILE *w, uint64_t size)
{
	uint64_t writes = 0;
	int ret = 0;

	while (ret == 0 && !r->eof) {
		ret = read_check(r);
		if (ret == 0 && r->reads % 8 == 0 &&
		    r->off + 8 * MiB + WRITE_LEN < size) {
			uint64_t ahead = (uint64_t)(random() % (6 * MiB));

			ret = write_ahead(r, w, r->off + ahead);
			writes++;
		}
	}
	printf("%" PRIu64 " writes\n", writes);
	return ret;
}

static int run_tickwrites(struct reader *r, uint64_t size)
{
	uint64_t writes = 0;
	uint64_t ahead;
	int ret = 0;

	while (ret == 0 && !r->eof) {
		ret = read_check(r);
		for (ahead = MiB; ret == 0 && ahead <= 8 * MiB; ahead += MiB) {
			if (r->off + ahead + WRITE_LEN >= size) {
				break;
			}
			ret = write_ahead(r, NULL, r->off + ahead);
			writes++;
		}
	}
	printf("%" PRIu64 " writes\n", writes);
	return ret;
}

static int run_truncate(struct reader *r, uint64_t size)
{
	uint64_t cut = size / 3;
	uint64_t end = 0;
	int ret = 0;

	while (ret == 0 && r->off < cut) {
		ret = read_check(r);
	}
	if (ret == 0 && ftruncate(r->local, (off_t)(r->off + 3 * MiB)) != 0) {
		perror("ftruncate");
		return 2;
	}
	end = r->off + 3 * MiB;
	/* read up to and past the new end: short, then empty */
	ret = ret != 0 ? ret : run_seq(r);
	r->off = end - 2 * MiB;
	r->eof = false;
	if (ret == 0) {
		/* the file grows again, with new bytes */
		for (uint64_t o = end; o < end + 16 * MiB; o += WRITE_LEN) {
			ret = write_ahead(r, NULL, o);
			if (ret != 0) {
				return ret;
			}
		}
	}
	return ret != 0 ? ret : run_seq(r);
}

static int run_pair(struct reader *a, struct reader *b)
{
	int ret = 0;

	while (ret == 0 && (!a->eof || !b->eof)) {
		if (!a->eof) {
			ret = read_check(a);
		}
		if (ret == 0 && !b->eof) {
			ret = read_check(b);
		}
	}
	return ret;
}

static int reader_open(struct reader *r, const char *url, const char *path,
		       uint64_t *size)
{
	struct stat st;

	*r = (struct reader){.local = -1};
	r->local = open(path, O_RDWR);
	if (r->local < 0 || fstat(r->local, &st) != 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return 2;
	}
	*size = (uint64_t)st.st_size;
	r->remote = remote_open(ctx, url, O_RDONLY);
	return r->remote == NULL ? 2 : 0;
}

int main(int argc, char **argv)
{
	struct reader a, b;
	SMBCFILE *w = NULL;
	uint64_t size = 0, size2 = 0;
	unsigned seed = 1;
	int port = 445, opt, ret;
	const char *mode = NULL;

	while ((opt = getopt(argc, argv, "p:U:b:s:")) != -1) {
		if (smbt_option(opt, &port, &seed)) {
			continue;
		}
		switch (opt) {
		case 'b': block = strtoull(optarg, NULL, 0); break;
		default: goto usage;
		}
	}
	if (argc - optind != 3 && argc - optind != 5) {
		goto usage;
	}
	mode = argv[optind];
	srandom(seed);
	rbuf = malloc(block);
	lbuf = malloc(block);
	wbuf = malloc(WRITE_LEN);
	ctx = smbt_connect(port);
	if (block == 0 || rbuf == NULL || lbuf == NULL || wbuf == NULL ||
	    ctx == NULL) {
		return 2;
	}
	ret = reader_open(&a, argv[optind + 1], argv[optind + 2], &size);
	if (ret != 0) {
		return ret;
	}

	if (strcmp(mode, "smbwrite") == 0) {
		wctx = ctx;
		w = remote_open(wctx, argv[optind + 1], O_RDWR);
		ret = w == NULL ? 2 : run_writes(&a, w, size);
	} else if (strcmp(mode, "clientwrite") == 0) {
		/* a context of its own: its own connection and smbd */
		wctx = smbt_connect(port);
		w = wctx == NULL ? NULL
				 : remote_open(wctx, argv[optind + 1], O_RDWR);
		ret = w == NULL ? 2 : run_writes(&a, w, size);
	} else if (strcmp(mode, "localwrite") == 0) {
		ret = run_writes(&a, NULL, size);
	} else if (strcmp(mode, "tickwrite") == 0) {
		ret = run_tickwrites(&a, size);
	} else if (strcmp(mode, "truncate") == 0) {
		ret = run_truncate(&a, size);
	} else if (strcmp(mode, "pair") == 0 && argc - optind == 5) {
		ret = reader_open(&b, argv[optind + 3], argv[optind + 4],
				  &size2);
		ret = ret != 0 ? ret : run_pair(&a, &b);
		if (ret == 0) {
			/* what the first stream held is free again */
			smbc_getFunctionClose(ctx)(ctx, a.remote);
			smbc_getFunctionClose(ctx)(ctx, b.remote);
			ret = reader_open(&b, argv[optind + 3],
					  argv[optind + 4], &size2);
		}
		ret = ret != 0 ? ret : run_seq(&b);
	} else {
		goto usage;
	}
	if (ret == 0) {
		printf("ok %" PRIu64 " reads\n", a.reads);
	}
	if (wctx != NULL && wctx != ctx) {
		smbc_free_context(wctx, 1);
	}
	smbc_free_context(ctx, 1);
	return ret;
usage:
	fprintf(stderr,
		"usage: smb_direct_check [-p PORT] [-U USER%%PASS] [-b BLOCK] "
		"[-s SEED] smbwrite|clientwrite|localwrite|tickwrite|truncate|pair "
		"//HOST/SHARE/PATH LOCALFILE [URL2 LOCAL2]\n");
	return 2;
}
