/*
 * cgbench: the module's read paths without smbd or the network
 *
 *   cgbench [-q DEPTH] [-b REQUEST] [-m MODES] FILE
 *
 * Reads FILE from start to end in REQUEST-sized reads (default 1 MiB)
 * with DEPTH of them in flight (default 4 threads, as an SMB2 client keeps
 * several reads outstanding), cold (the file's pages dropped first), once
 * per mode, and prints MB/s with the file's peak and final page-cache
 * residency:
 *
 *   buffered	pread(), nothing else (plain smbd)
 *   dontneed	pread() with the engine's stream detection and drop-behind
 *   dontcache	preadv2(RWF_DONTCACHE) with the engine
 *   direct	aligned O_DIRECT reads into a bounce buffer, copied out as
 *		the module hands bytes back, with the engine
 *
 * The engine calls run under one mutex, as they run in smbd's main thread.
 *
 * Copyright (C) 2026 The vfs_cacheguard authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "cacheguard.h"
#include "cg_sys.h"

#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080
#endif
#define ALIGN 4096

enum mode { BUFFERED, DONTNEED, DONTCACHE, DIRECT };
static const char *const mode_names[] = {"buffered", "dontneed", "dontcache",
					 "direct"};

struct bench {
	enum mode mode;
	int fd;
	int dfd;
	uint64_t size;
	size_t req;
	uint64_t next;		/* next offset to hand out */
	uint64_t done;
	bool failed;
	bool running;
	uint64_t peak;
	pthread_mutex_t lock;
	struct cg_config cfg;
	struct cg_stream stream;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One request, served the way the mode serves it */
static ssize_t serve(struct bench *b, char *out, char *bounce, uint64_t off)
{
	struct iovec iov = {.iov_base = out, .iov_len = b->req};
	uint64_t aoff, alen;
	ssize_t n;

	switch (b->mode) {
	case DONTCACHE:
		return preadv2(b->fd, &iov, 1, (off_t)off, RWF_DONTCACHE);
	case DIRECT:
		aoff = off & ~(uint64_t)(ALIGN - 1);
		alen = (off + b->req - aoff + ALIGN - 1) & ~(uint64_t)(ALIGN - 1);
		n = pread(b->dfd, bounce, alen, (off_t)aoff);
		if (n < 0) {
			return n;
		}
		n = n > (ssize_t)(off - aoff) ? n - (ssize_t)(off - aoff) : 0;
		n = n > (ssize_t)b->req ? (ssize_t)b->req : n;
		memcpy(out, bounce + (off - aoff), (size_t)n);
		return n;
	default:
		return pread(b->fd, out, b->req, (off_t)off);
	}
}

static void *worker(void *arg)
{
	struct bench *b = arg;
	char *out = NULL;
	char *bounce = NULL;

	if (posix_memalign((void **)&out, ALIGN, b->req) != 0 ||
	    posix_memalign((void **)&bounce, ALIGN, b->req + 2 * ALIGN) != 0) {
		b->failed = true;
		return NULL;
	}
	for (;;) {
		struct cg_io io = {0};
		uint64_t off;
		ssize_t n;

		pthread_mutex_lock(&b->lock);
		off = b->next;
		b->next += b->req;
		if (off < b->size && b->mode != BUFFERED) {
			io = cg_read_begin(&b->stream, b->fd, off, b->req);
		}
		pthread_mutex_unlock(&b->lock);
		if (off >= b->size) {
			break;
		}
		n = serve(b, out, bounce, off);
		pthread_mutex_lock(&b->lock);
		if (b->mode != BUFFERED) {
			cg_read_end(&b->stream, b->fd, &io, n);
		}
		if (n < 0) {
			b->failed = true;
		} else {
			b->done += (uint64_t)n;
		}
		pthread_mutex_unlock(&b->lock);
	}
	free(out);
	free(bounce);
	return NULL;
}

static uint64_t resident(struct bench *b)
{
	uint64_t r = 0;

	cg_sys_linux.resident(b->fd, 0, b->size, &r);
	return r;
}

/* Samples the file's residency while the workers run */
static void *sampler(void *arg)
{
	struct bench *b = arg;

	while (__atomic_load_n(&b->running, __ATOMIC_RELAXED)) {
		uint64_t r = resident(b);

		if (r > b->peak) {
			b->peak = r;
		}
		usleep(20000);
	}
	return NULL;
}

static int run(struct bench *b, unsigned depth)
{
	pthread_t th[64], smp;
	double t0, t1;
	unsigned i;

	fdatasync(b->fd);
	posix_fadvise(b->fd, 0, 0, POSIX_FADV_DONTNEED);
	b->next = 0;
	b->done = 0;
	b->peak = 0;
	b->failed = false;
	cg_stream_init(&b->stream, &b->cfg, &cg_sys_linux, b->size);
	b->running = true;
	pthread_create(&smp, NULL, sampler, b);
	t0 = now();
	for (i = 0; i < depth; i++) {
		pthread_create(&th[i], NULL, worker, b);
	}
	for (i = 0; i < depth; i++) {
		pthread_join(th[i], NULL);
	}
	if (b->mode != BUFFERED) {
		cg_stream_close(&b->stream, b->fd);
	}
	t1 = now();
	__atomic_store_n(&b->running, false, __ATOMIC_RELAXED);
	pthread_join(smp, NULL);
	if (b->failed || b->done != b->size) {
		fprintf(stderr, "%s: read %" PRIu64 " of %" PRIu64 " bytes: %s\n",
			mode_names[b->mode], b->done, b->size, strerror(errno));
		return 1;
	}
	printf("%-10s %9.0f %14.1f %14.1f\n",
	       mode_names[b->mode],
	       b->size / (t1 - t0) / 1e6,
	       b->peak / 1048576.0,
	       resident(b) / 1048576.0);
	return 0;
}

int main(int argc, char **argv)
{
	struct bench b = {.req = 1 << 20, .dfd = -1};
	const char *modes = "buffered,dontneed,dontcache,direct";
	unsigned depth = 4;
	struct stat st;
	int opt, ret = 0, m;

	while ((opt = getopt(argc, argv, "q:b:m:")) != -1) {
		switch (opt) {
		case 'q': depth = (unsigned)atoi(optarg); break;
		case 'b': b.req = strtoul(optarg, NULL, 0); break;
		case 'm': modes = optarg; break;
		default: goto usage;
		}
	}
	if (optind + 1 != argc || depth == 0 || depth > 64 || b.req == 0 ||
	    b.req % ALIGN != 0) {
		goto usage;
	}
	b.fd = open(argv[optind], O_RDONLY);
	b.dfd = open(argv[optind], O_RDONLY | O_DIRECT);
	if (b.fd < 0 || fstat(b.fd, &st) != 0) {
		perror(argv[optind]);
		return 2;
	}
	b.size = (uint64_t)st.st_size;
	pthread_mutex_init(&b.lock, NULL);
	cg_config_init(&b.cfg);
	printf("# %s: %" PRIu64 " MiB, %zu KiB requests, %u in flight, cold\n",
	       argv[optind], b.size >> 20, b.req >> 10, depth);
	printf("%-10s %9s %14s %14s\n", "mode", "MB/s", "peak res MiB",
	       "final res MiB");
	for (m = BUFFERED; m <= DIRECT; m++) {
		if (strstr(modes, mode_names[m]) == NULL) {
			continue;
		}
		if (m == DIRECT && b.dfd < 0) {
			printf("%-10s O_DIRECT: %s\n", mode_names[m],
			       strerror(errno));
			continue;
		}
		b.mode = (enum mode)m;
		ret |= run(&b, depth);
	}
	return ret;
usage:
	fprintf(stderr, "usage: cgbench [-q DEPTH] [-b REQUEST] [-m MODES] "
			"FILE\n");
	return 2;
}
