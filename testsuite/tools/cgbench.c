/*
 * cgbench: the module's read paths without smbd or the network
 *
 *   cgbench [-q DEPTH] [-b REQUEST] [-p PREFETCH] [-F] [-H] [-r READAHEAD]
 *	     [-m MODES] [-S DEVICE-REQUEST] FILE
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
 *   direct	the module's direct path: the engine's prefetch table
 *		(cacheguard:direct prefetch, -p) loaded by O_DIRECT fills
 *		in a pool of threads, as smbd's pthreadpool runs them;
 *		each request copied out of it (HIT), waiting for its fill
 *		(PENDING), or read on its own into an aligned bounce
 *		buffer (MISS); the table grows with the reads in flight
 *		as the module grows it (-F: it keeps its first size)
 *
 * -r sets cacheguard:readahead: 0 is the kernel's readahead for the
 * stream, as a stream holding the server's readahead budget has it.
 * -H puts direct's prefetch buffer in 4 KiB pages, with the engine's
 * own segment size, where the module uses transparent huge pages.
 * -S is the device's largest request (its max_sectors_kb): direct's
 * segments grow to it as the module's do (cg_prefetch_align).
 *
 * The engine calls run under one mutex, as they run in smbd's main thread;
 * what the module does in its thread pool (version checks, reads, a HIT's
 * copy) runs outside it.
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "cg_prefetch.h"
#include "cg_sys.h"

#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080
#endif
#define ALIGN 4096
/* The module's prefetch buffer: transparent huge pages (cacheguard_direct.c) */
#define HUGE_PAGE (2 * 1024 * 1024)

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
	bool small_pages;	/* -H: direct's buffer in 4 KiB pages */
	uint64_t max_request;	/* -S: the device's largest request */
	uint64_t peak;
	pthread_mutex_t lock;
	struct cg_config cfg;
	struct cg_stream stream;

	/* direct: the prefetch table, its buffer and the fill threads */
	struct cg_prefetch pf;
	uint8_t *mem;
	pthread_cond_t filled;		/* a fill ended */
	pthread_cond_t queued;		/* a fill waits for a thread */
	struct fill {
		unsigned slot;
		uint64_t off;
		size_t len;
	} queue[CG_PREFETCH_MAX_SEGS];
	unsigned nqueue;
	bool stop;
	unsigned nfillers;
	uint64_t waiting[64];		/* per worker: offset it waits at */
	uint64_t hits, waits, misses;
	bool adapt;			/* grow the table as the module does */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* An O_DIRECT read to count bytes or end of file, as the module's jobs */
static ssize_t read_full(int fd, uint8_t *buf, size_t count, uint64_t off)
{
	return cg_dio_read_full(&cg_sys_linux, fd, buf, count, off, ALIGN);
}

/* Queue the fills the table asks for; under the lock */
static void refill(struct bench *b)
{
	uint64_t keep = UINT64_MAX;
	struct fill f;
	unsigned i;

	for (i = 0; i < 64; i++) {
		keep = b->waiting[i] < keep ? b->waiting[i] : keep;
	}
	while (b->nqueue < CG_PREFETCH_MAX_SEGS &&
	       cg_prefetch_next_fill(&b->pf, b->size, keep, &f.slot, &f.off,
				     &f.len)) {
		b->queue[b->nqueue++] = f;
		pthread_cond_signal(&b->queued);
	}
}

/* A thread of the pool: version, then read, as a fill job does */
static void *filler(void *arg)
{
	struct bench *b = arg;

	pthread_mutex_lock(&b->lock);
	for (;;) {
		struct cg_pf_version ver = {0};
		struct fill f;
		ssize_t got = -1;

		while (b->nqueue == 0 && !b->stop) {
			pthread_cond_wait(&b->queued, &b->lock);
		}
		if (b->nqueue == 0) {
			break;
		}
		f = b->queue[0];
		memmove(b->queue, b->queue + 1,
			--b->nqueue * sizeof(b->queue[0]));
		pthread_mutex_unlock(&b->lock);
		if (cg_pf_version_now(b->dfd, &ver) == 0) {
			got = read_full(b->dfd, b->mem + f.slot * b->pf.seg_size,
					f.len, f.off);
		}
		pthread_mutex_lock(&b->lock);
		if (got >= 0) {
			cg_prefetch_validate(&b->pf, &ver);
		}
		cg_prefetch_filled(&b->pf, f.slot, got, &ver);
		pthread_cond_broadcast(&b->filled);
		refill(b);
	}
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

/* A MISS: the request's own aligned read, outside the lock */
static ssize_t direct_miss(struct bench *b, char *out, char *bounce,
			   uint64_t off)
{
	struct cg_dio_plan plan;
	ssize_t n;

	if (!cg_dio_plan(off, b->req, ALIGN, &plan)) {
		errno = EINVAL;
		return -1;
	}
	n = read_full(b->dfd, (uint8_t *)bounce, plan.len, plan.off);
	if (n < 0) {
		return n;
	}
	n = (ssize_t)cg_dio_trim(&plan, b->req, (size_t)n);
	memcpy(out, bounce + plan.skip, (size_t)n);
	return n;
}

/*
 * A direct request, as the module serves it: the lookup under the lock
 * (smbd's main thread); a HIT's pieces pinned there and checked against
 * the file's version and copied outside it (a job in smbd's pool); a
 * PENDING one waits for fills; a MISS reads on its own outside it
 */
static ssize_t serve_direct(struct bench *b, unsigned w, char *out,
			    char *bounce, uint64_t off)
{
	struct cg_pf_piece pieces[CG_PREFETCH_MAX_SEGS + 1];
	struct cg_pf_version now = {0};
	size_t avail = 0;
	unsigned np;
	bool ok;
	ssize_t n;

	cg_prefetch_note_read(&b->pf, off, b->req);
	if (b->adapt) {
		/* as cg_direct grows it, with no budget to refuse it */
		cg_prefetch_grow(&b->pf, cg_prefetch_wanted(
			&b->pf, cg_flight_count(&b->stream.flight),
			b->cfg.direct_memory / CG_PREFETCH_STREAM_SHARE));
	}
	for (;;) {
		enum cg_pf_lookup l = CG_PF_MISS;

		if (b->pf.nseg > 0) {
			l = cg_prefetch_lookup(&b->pf, off, b->req, &avail);
		}
		if (l == CG_PF_MISS) {
			break;
		}
		if (l == CG_PF_PENDING) {
			b->waits += b->waiting[w] == UINT64_MAX ? 1 : 0;
			b->waiting[w] = off;
			pthread_cond_wait(&b->filled, &b->lock);
			continue;
		}
		b->waiting[w] = UINT64_MAX;
		np = cg_prefetch_pin(&b->pf, off, b->req, pieces,
				     b->req / b->pf.seg_size + 2);
		refill(b);
		pthread_mutex_unlock(&b->lock);
		ok = cg_pf_version_now(b->dfd, &now) == 0 &&
		     cg_prefetch_pieces_current(pieces, np, &now);
		n = ok ? (ssize_t)cg_prefetch_copy_pieces(&cg_sys_linux,
							 b->mem, pieces, np,
							 (uint8_t *)out)
		       : -1;
		pthread_mutex_lock(&b->lock);
		if (now.clock_ns != 0) {
			cg_prefetch_validate(&b->pf, &now);
		}
		cg_prefetch_unpin(&b->pf, pieces, np, ok);
		if (ok) {
			b->hits++;
			return n;
		}
	}
	b->waiting[w] = UINT64_MAX;
	b->misses++;
	refill(b);
	pthread_mutex_unlock(&b->lock);
	ok = cg_pf_version_now(b->dfd, &now) == 0;
	n = ok ? direct_miss(b, out, bounce, off) : -1;
	pthread_mutex_lock(&b->lock);
	if (ok) {
		cg_prefetch_validate(&b->pf, &now);
	}
	return n;
}

/* One request, served the way the mode serves it; outside the lock */
static ssize_t serve(struct bench *b, char *out, uint64_t off)
{
	struct iovec iov = {.iov_base = out, .iov_len = b->req};

	switch (b->mode) {
	case DONTCACHE:
		return preadv2(b->fd, &iov, 1, (off_t)off, RWF_DONTCACHE);
	default:
		return pread(b->fd, out, b->req, (off_t)off);
	}
}

struct worker {
	struct bench *b;
	unsigned idx;
};

static void *worker(void *arg)
{
	struct worker *wk = arg;
	struct bench *b = wk->b;
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
		if (off >= b->size) {
			pthread_mutex_unlock(&b->lock);
			break;
		}
		if (b->mode == DIRECT) {
			/* the module's direct path; nothing cached to drop */
			n = serve_direct(b, wk->idx, out, bounce, off);
			io.uncached = true;
		} else {
			pthread_mutex_unlock(&b->lock);
			n = serve(b, out, off);
			pthread_mutex_lock(&b->lock);
		}
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

/* direct: the table, its buffer, a thread per possible segment (the pool) */
static int direct_start(struct bench *b, pthread_t *fillers)
{
	unsigned i;

	size_t page = b->small_pages ? ALIGN : HUGE_PAGE;

	cg_stream_set_via(&b->stream, b->fd, CG_VIA_DIRECT);
	/*
	 * as the module: segments of a huge page, in huge pages (-H: not),
	 * as large as the device's requests (-S) where the prefetch holds two
	 */
	cg_prefetch_init(&b->pf, b->cfg.direct_prefetch,
			 cg_prefetch_align(b->cfg.direct_prefetch, page,
					   b->max_request));
	b->mem = NULL;
	/* room for the largest table; untouched pages cost nothing */
	if (b->pf.nseg > 0 &&
	    posix_memalign((void **)&b->mem, page,
			   b->pf.seg_size * CG_PREFETCH_MAX_SEGS) != 0) {
		return -1;
	}
	if (b->mem != NULL && !b->small_pages) {
		(void)madvise(b->mem, b->pf.seg_size * CG_PREFETCH_MAX_SEGS,
			      MADV_HUGEPAGE);
	}
	b->nqueue = 0;
	b->stop = false;
	b->hits = b->waits = b->misses = 0;
	for (i = 0; i < 64; i++) {
		b->waiting[i] = UINT64_MAX;
	}
	b->nfillers = b->pf.nseg > 0 ? CG_PREFETCH_MAX_SEGS : 0;
	for (i = 0; i < b->nfillers; i++) {
		pthread_create(&fillers[i], NULL, filler, b);
	}
	return 0;
}

static void direct_stop(struct bench *b, pthread_t *fillers)
{
	unsigned i;

	pthread_mutex_lock(&b->lock);
	b->stop = true;
	pthread_cond_broadcast(&b->queued);
	pthread_mutex_unlock(&b->lock);
	for (i = 0; i < b->nfillers; i++) {
		pthread_join(fillers[i], NULL);
	}
	free(b->mem);
	b->mem = NULL;
}

static int run(struct bench *b, unsigned depth)
{
	pthread_t th[64], smp, fillers[CG_PREFETCH_MAX_SEGS];
	struct worker wk[64];
	double t0, t1;
	unsigned i;

	fdatasync(b->fd);
	posix_fadvise(b->fd, 0, 0, POSIX_FADV_DONTNEED);
	b->next = 0;
	b->done = 0;
	b->peak = 0;
	b->failed = false;
	cg_stream_init(&b->stream, &b->cfg, &cg_sys_linux, b->size);
	if (b->mode == DIRECT && direct_start(b, fillers) != 0) {
		return 1;
	}
	b->running = true;
	pthread_create(&smp, NULL, sampler, b);
	t0 = now();
	for (i = 0; i < depth; i++) {
		wk[i] = (struct worker){.b = b, .idx = i};
		pthread_create(&th[i], NULL, worker, &wk[i]);
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
	if (b->mode == DIRECT) {
		direct_stop(b, fillers);
	}
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
	if (b->mode == DIRECT) {
		printf("#   direct: prefetch %u x %zu KiB; %" PRIu64 " hits, "
		       "%" PRIu64 " waits, %" PRIu64 " misses\n",
		       b->pf.nseg, b->pf.seg_size >> 10, b->hits, b->waits,
		       b->misses);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct bench b = {.req = 1 << 20, .dfd = -1};
	const char *modes = "buffered,dontneed,dontcache,direct";
	unsigned depth = 4;
	struct stat st;
	uint64_t size;
	int opt, ret = 0, m;

	pthread_mutex_init(&b.lock, NULL);
	pthread_cond_init(&b.filled, NULL);
	pthread_cond_init(&b.queued, NULL);
	cg_config_init(&b.cfg);
	b.adapt = true;
	while ((opt = getopt(argc, argv, "q:b:p:FHr:m:S:")) != -1) {
		switch (opt) {
		case 'F': b.adapt = false; break;
		case 'H': b.small_pages = true; break;
		case 'q': depth = (unsigned)atoi(optarg); break;
		case 'b':
			if (cg_parse_size(optarg, &size) != 0) {
				goto usage;
			}
			b.req = (size_t)size;
			break;
		case 'p':
			if (cg_parse_size(optarg, &b.cfg.direct_prefetch) != 0) {
				goto usage;
			}
			break;
		case 'r':
			if (cg_parse_size(optarg, &b.cfg.readahead) != 0) {
				goto usage;
			}
			break;
		case 'm': modes = optarg; break;
		case 'S':
			if (cg_parse_size(optarg, &size) != 0) {
				goto usage;
			}
			b.max_request = size;
			break;
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
	fprintf(stderr, "usage: cgbench [-q DEPTH] [-b REQUEST] [-p PREFETCH] "
			"[-F] [-H] [-r READAHEAD] [-m MODES] "
			"[-S DEVICE-REQUEST] FILE\n");
	return 2;
}
