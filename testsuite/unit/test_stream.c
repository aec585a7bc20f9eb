/*
 * vfs_cacheguard unit tests: stream detection, drop-behind and who reads
 * ahead (cg_stream.c)
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

/*
 * The harness
 * -----------
 *
 * The engine talks to the kernel only through struct cg_sys. Here that
 * table is a fake which records every fadvise() call (fd, offset, length,
 * advice, and the stream front at that moment) and answers resident()
 * with a share of the asked range that each test sets.
 *
 * Every read goes through rd_begin() / rd_end(), which keep the test's
 * own list of reads in flight (begun, not yet ended), untracked ones
 * included. The fake checks every POSIX_FADV_DONTNEED against that list
 * the moment the engine makes it: dropping pages a read in flight still
 * needs is the one thing the engine must never do, so every test here
 * checks it, not only the property test at the end.
 *
 * Files below "min file size" are the caller's business: the glue
 * (modules/vfs_cacheguard.c) creates no cg_stream for them, and the
 * engine never looks at cfg->min_file_size. So no test here is about
 * small files.
 */

#include <stdint.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_stream.h"
#include "cg_sys.h"
#include "cg_test.h"

#define PAGE 4096ULL

#define TEST_FD 7
/* Reads the harness can hold in flight: CG_FLIGHT_SLOTS and then some */
#define MAX_READS 256
/* The engine's CG_STRAY_LIMIT: this many far reads in a row end a stream */
#define STRAY_LIMIT 8
/* CG_REDROP_WINDOWS */
#define REDROP 4

/* The engine's readahead window when the device's is unknown (cg_stream.c) */
#define RA_SLACK (4 * MiB)

struct call {
	int fd;
	uint64_t off;
	uint64_t len;
	int advice;
	uint64_t front;		/* the stream front when the call was made */
	bool closing;		/* made from cg_stream_close() */
};

struct read {
	bool busy;
	bool tracked;		/* the engine gave it a slot */
	bool overflow;		/* begun with CG_FLIGHT_SLOTS tracked */
	uint64_t off;
	size_t n;
	struct cg_io io;
};

struct harness {
	struct cg_config cfg;
	struct cg_stream s;
	uint64_t file_size;

	struct call *calls;
	size_t ncalls;
	size_t cap;

	/* What the fake resident() answers */
	unsigned resident_pct;
	int resident_ret;
	unsigned nresident;
	uint64_t resident_off;
	uint64_t resident_len;
	uint64_t resident_asked;	/* bytes, all calls */
	uint64_t resident_lo;		/* the lowest offset asked about */
	uint64_t resident_hi;		/* the highest end asked about */

	struct read reads[MAX_READS];
	unsigned nbusy;
	unsigned ntracked;
	unsigned noverflow;
	unsigned high;		/* reads[] at and above this are idle */

	bool closing;
	bool ra_off;		/* FADV_RANDOM given, no NORMAL since */
	char ctx[96];		/* printed with every failure: the seed */
	char violation[256];	/* the first broken rule, "" if none */
};

static struct harness *cur = NULL;

/* splitmix64: small, fast, and the same sequence on every machine */
struct rng {
	uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rng_below(struct rng *r, uint64_t n)
{
	return rng_next(r) % n;
}

static void shuffle(struct rng *r, unsigned *a, unsigned n)
{
	unsigned i, j, t;

	for (i = n; i > 1; i--) {
		j = (unsigned)rng_below(r, i);
		t = a[i - 1];
		a[i - 1] = a[j];
		a[j] = t;
	}
}

static void violate(struct harness *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void violate(struct harness *h, const char *fmt, ...)
{
	va_list ap;

	if (h->violation[0] != '\0') {
		return;		/* keep the first */
	}
	va_start(ap, fmt);
	vsnprintf(h->violation, sizeof(h->violation), fmt, ap);
	va_end(ap);
}

static void check_dontneed(struct harness *h, uint64_t off, uint64_t len)
{
	uint64_t end = len == 0 ? UINT64_MAX : off + len;
	unsigned i;

	for (i = 0; i < h->high; i++) {
		const struct read *r = &h->reads[i];

		if (!r->busy) {
			continue;
		}
		if (r->off < end && off < r->off + r->n) {
			violate(h,
				"DONTNEED [%" PRIu64 ", %" PRIu64 ") overlaps "
				"the read [%" PRIu64 ", %" PRIu64 ") in flight",
				off,
				end,
				r->off,
				r->off + r->n);
		}
	}
}

static int fake_fadvise(int fd, uint64_t off, uint64_t len, int advice)
{
	struct harness *h = cur;
	struct call *c = NULL;

	if (h->ncalls == h->cap) {
		h->cap = h->cap == 0 ? 1024 : h->cap * 2;
		h->calls = realloc(h->calls, h->cap * sizeof(h->calls[0]));
		assert_non_null(h->calls);
	}
	c = &h->calls[h->ncalls++];
	*c = (struct call){
		.fd = fd,
		.off = off,
		.len = len,
		.advice = advice,
		.front = h->s.seq.front,
		.closing = h->closing,
	};
	if (fd != TEST_FD) {
		violate(h, "fadvise on fd %d, not %d", fd, TEST_FD);
	}
	if (advice == POSIX_FADV_DONTNEED) {
		check_dontneed(h, off, len);
	}
	/* The stream's readahead is the module's: never the doubled one */
	if (advice == POSIX_FADV_SEQUENTIAL) {
		violate(h, "FADV_SEQUENTIAL doubles the kernel's readahead");
	}
	/*
	 * FADV_RANDOM and FADV_NORMAL alternate, whole file: the kernel's
	 * readahead goes off once per stream and comes back once.
	 */
	if (advice == POSIX_FADV_RANDOM || advice == POSIX_FADV_NORMAL) {
		bool off_now = advice == POSIX_FADV_RANDOM;

		if (h->ra_off == off_now || off != 0 || len != 0) {
			violate(h, "%s [%" PRIu64 ", +%" PRIu64 ") out of turn",
				off_now ? "RANDOM" : "NORMAL", off, len);
		}
		h->ra_off = off_now;
	}
	return 0;
}

static int fake_resident(int fd, uint64_t off, uint64_t len, uint64_t *bytes)
{
	struct harness *h = cur;

	if (h->nresident == 0 || off < h->resident_lo) {
		h->resident_lo = off;
	}
	if (off + len > h->resident_hi) {
		h->resident_hi = off + len;
	}
	h->nresident++;
	h->resident_off = off;
	h->resident_len = len;
	h->resident_asked += len;
	if (fd != TEST_FD) {
		violate(h, "resident on fd %d, not %d", fd, TEST_FD);
	}
	if (h->resident_ret != 0) {
		return h->resident_ret;
	}
	/* Rounded up, so that pct == threshold is exactly "hot" */
	*bytes = (len * h->resident_pct + 99) / 100;
	return 0;
}

static const struct cg_sys fake_sys = {
	.fadvise = fake_fadvise,
	.resident = fake_resident,
};

static void h_check(struct harness *h)
{
	if (h->violation[0] != '\0') {
		fail_msg("%s%s", h->ctx, h->violation);
	}
}

/* Back to a fresh harness with the default options, mode dontneed */
static void h_reset(struct harness *h)
{
	h->ncalls = 0;
	h->resident_pct = 0;
	h->resident_ret = 0;
	h->nresident = 0;
	h->resident_off = 0;
	h->resident_len = 0;
	h->resident_asked = 0;
	h->resident_lo = 0;
	h->resident_hi = 0;
	memset(h->reads, 0, sizeof(h->reads));
	h->nbusy = 0;
	h->ntracked = 0;
	h->noverflow = 0;
	h->high = 0;
	h->closing = false;
	h->ra_off = false;
	h->ctx[0] = '\0';
	h->violation[0] = '\0';
	cg_config_init(&h->cfg);
	h->cfg.mode = CG_MODE_DONTNEED;
	/*
	 * The drop-behind tests count every fadvise: they run with the
	 * kernel's readahead (no hint at all). The stream's own readahead,
	 * the default, has tests of its own (test_readahead,
	 * test_own_readahead_*) and is in the property test's mix.
	 */
	h->cfg.readahead = 0;
}

static void h_start(struct harness *h, uint64_t file_size)
{
	h->file_size = file_size;
	cg_stream_init(&h->s, &h->cfg, &fake_sys, file_size);
}

static int setup(void **state)
{
	struct harness *h = calloc(1, sizeof(*h));

	if (h == NULL) {
		return -1;
	}
	h_reset(h);
	cur = h;
	*state = h;
	return 0;
}

static int teardown(void **state)
{
	struct harness *h = *state;

	free(h->calls);
	free(h);
	cur = NULL;
	return 0;
}

/* What a read of n bytes at off returns on this file */
static ssize_t file_read_len(const struct harness *h, uint64_t off, size_t n)
{
	if (off >= h->file_size) {
		return 0;
	}
	return (ssize_t)MIN((uint64_t)n, h->file_size - off);
}

static unsigned rd_begin(struct harness *h, uint64_t off, size_t n)
{
	struct read *r = NULL;
	unsigned tracked_before = h->ntracked;
	unsigned i;

	for (i = 0; i < MAX_READS && h->reads[i].busy; i++) {
		/* first idle entry */
	}
	assert_true(i < MAX_READS);
	r = &h->reads[i];
	*r = (struct read){.busy = true, .off = off, .n = n};
	h->nbusy++;
	h->high = MAX(h->high, i + 1);

	r->io = cg_read_begin(&h->s, TEST_FD, off, n);

	r->tracked = r->io.flight.track == CG_TRACK_SLOT;
	if (r->tracked) {
		h->ntracked++;
	} else if (n > 0 && h->s.state != CG_HOT) {
		/* Only a full table may leave a read untracked */
		if (tracked_before != CG_FLIGHT_SLOTS) {
			violate(h,
				"read at %" PRIu64 " untracked with only %u "
				"in flight",
				off,
				tracked_before);
		}
		r->overflow = true;
		h->noverflow++;
	}
	h_check(h);
	return i;
}

static void rd_end(struct harness *h, unsigned i, ssize_t nread)
{
	struct read *r = &h->reads[i];

	assert_true(r->busy);
	/* The I/O is over: from here on the read needs no pages */
	r->busy = false;
	h->nbusy--;
	if (r->tracked) {
		h->ntracked--;
	}
	if (r->overflow) {
		h->noverflow--;
	}
	while (h->high > 0 && !h->reads[h->high - 1].busy) {
		h->high--;
	}
	cg_read_end(&h->s, TEST_FD, &r->io, nread);
	h_check(h);
}

/* One read, begun and ended before the next: a client at queue depth 1 */
static void rd_one(struct harness *h, uint64_t off, size_t n)
{
	unsigned i = rd_begin(h, off, n);
	ssize_t got = file_read_len(h, off, n);

	rd_end(h, i, got);
}

/* rd_one for a read served outside the page cache (dontcache, direct) */
static void rd_one_uncached(struct harness *h, uint64_t off, size_t n)
{
	unsigned i = rd_begin(h, off, n);
	ssize_t got = file_read_len(h, off, n);

	h->reads[i].io.uncached = true;
	rd_end(h, i, got);
}

static void h_close(struct harness *h)
{
	assert_int_equal(h->nbusy, 0);
	h->closing = true;
	cg_stream_close(&h->s, TEST_FD);
	h->closing = false;
	if (h->ra_off) {
		violate(h, "closed with the kernel's readahead still off");
	}
	h_check(h);
}

static unsigned count_advice(const struct harness *h, int advice)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i < h->ncalls; i++) {
		if (h->calls[i].advice == advice) {
			n++;
		}
	}
	return n;
}

/* DONTNEEDs made by cg_stream_close() */
static unsigned count_closing(const struct harness *h)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i < h->ncalls; i++) {
		if (h->calls[i].closing &&
		    h->calls[i].advice == POSIX_FADV_DONTNEED) {
			n++;
		}
	}
	return n;
}

/*
 * The drop-behind calls (DONTNEED outside cg_stream_close()) of a stream
 * starting at start: whole windows, aligned to the window counted from
 * the stream's first page, each starting where the last one ended or, in
 * a stream that drops all it reads, up to REDROP windows before
 * (test_redrop pins where). Returns the bytes they dropped.
 */
static uint64_t check_window_drops(const struct harness *h, uint64_t start)
{
	uint64_t w = h->cfg.window;
	uint64_t base = start & ~(PAGE - 1);
	uint64_t next = base;
	size_t i;

	for (i = 0; i < h->ncalls; i++) {
		const struct call *c = &h->calls[i];
		uint64_t again = next - MIN(next, REDROP * w);

		if (c->advice != POSIX_FADV_DONTNEED || c->closing) {
			continue;
		}
		/* Whole windows past the last drop, maybe a few again */
		if (c->off > next || c->off < again || c->off % PAGE != 0) {
			fail_msg("%sDONTNEED at %" PRIu64 ": expected %" PRIu64
				 " or down to %" PRIu64 " (window %" PRIu64
				 " from %" PRIu64 ")",
				 h->ctx,
				 c->off,
				 next,
				 again,
				 w,
				 base);
		}
		if (c->off + c->len <= next ||
		    (c->off + c->len - next) % w != 0) {
			fail_msg("%sDONTNEED [%" PRIu64 ", +%" PRIu64 ") is "
				 "not whole windows of %" PRIu64 " past %"
				 PRIu64,
				 h->ctx,
				 c->off,
				 c->len,
				 w,
				 next);
		}
		next = c->off + c->len;
	}
	return next - base;
}

/* The highest offset the drop-behind calls have dropped up to */
static uint64_t dropped_end(const struct harness *h)
{
	uint64_t end = 0;
	size_t i;

	for (i = 0; i < h->ncalls; i++) {
		const struct call *c = &h->calls[i];

		if (c->advice == POSIX_FADV_DONTNEED && !c->closing) {
			end = MAX(end, c->off + c->len);
		}
	}
	return end;
}

/*
 * cg_stream_close() on an active stream: its last DONTNEED starts no
 * later than what the windows dropped and no earlier than the page of
 * the stream's lowest read, covers the stream up to its front, and ends
 * where the stream's readahead could reach (four of the kernel's
 * windows, CG_RA_SLACK here, or the engine's own WILLNEED): the rest of
 * the file is not the stream's to drop.
 */
static void check_close_drop(const struct harness *h,
			     uint64_t start,
			     uint64_t dropped_to)
{
	const struct call *c = NULL;
	uint64_t front = MIN(h->s.seq.front, h->s.file_size);
	uint64_t reach, end;
	size_t i;

	for (i = 0; i < h->ncalls; i++) {
		if (h->calls[i].closing &&
		    h->calls[i].advice == POSIX_FADV_DONTNEED) {
			c = &h->calls[i];
		}
	}
	assert_non_null(c);
	assert_int_equal(c->advice, POSIX_FADV_DONTNEED);
	assert_in_range(c->off, start & ~(PAGE - 1), dropped_to);
	assert_true(c->len > 0);
	end = c->off + c->len;
	reach = MAX(h->s.seq.front + 4 * RA_SLACK, h->s.willneed_to);
	if (end < front || end > MAX(reach, front)) {
		fail_msg("%sthe close drop [%ju, %ju) is not the stream's "
			 "[.., %ju) plus readahead (to %ju)",
			 h->ctx,
			 (uintmax_t)c->off,
			 (uintmax_t)end,
			 (uintmax_t)front,
			 (uintmax_t)reach);
	}
}

/*
 * In-order reads at queue depth 1: detection, then drop-behind in whole
 * windows that never leaves more than one window behind the front.
 */
struct inorder_case {
	uint64_t file_size;
	uint64_t start;
	size_t rsize;
	uint64_t window;
	uint64_t trigger;
};

static const struct inorder_case inorder_cases[] = {
	/* The copy from the brief: 1 MiB reads of a 1 GiB file */
	{GiB, 0, MiB, 8 * MiB, 4 * MiB},
	/* Small reads, small window, trigger above the window */
	{256 * MiB + 12345, 0, 64 * KiB, MiB, 16 * MiB},
	/* A stream starting mid-page, reads not page-sized */
	{512 * MiB, 100 * MiB + 3 * PAGE + 100, MiB + 512, 4 * MiB, 4 * MiB},
	/* Trigger below one read: active at the first read */
	{64 * MiB, 0, MiB, 2 * MiB, 4096},
};

static void test_inorder(void **state)
{
	struct harness *h = *state;
	size_t k;

	for (k = 0; k < N_ELEM(inorder_cases); k++) {
		const struct inorder_case *c = &inorder_cases[k];
		uint64_t act = (c->trigger + c->rsize - 1) / c->rsize - 1;
		uint64_t w = c->window;
		uint64_t off, nr = 0, total;

		h_reset(h);
		snprintf(h->ctx, sizeof(h->ctx), "case %zu: ", k);
		h->cfg.window = w;
		h->cfg.stream_trigger = c->trigger;
		h_start(h, c->file_size);

		for (off = c->start; off < c->file_size; off += c->rsize) {
			unsigned i = rd_begin(h, off, c->rsize);

			if (nr < act) {
				assert_int_equal(h->s.state, CG_DETECTING);
				assert_int_equal(h->ncalls, 0);
			} else if (nr == act) {
				/* Activation: no hint (readahead 0) */
				assert_int_equal(h->s.state, CG_ACTIVE);
				assert_int_equal(h->ncalls, 0);
			}
			rd_end(h, i, file_read_len(h, off, c->rsize));
			nr++;
			if (h->s.state == CG_ACTIVE) {
				/* In order, nothing waits: < 1 window kept */
				uint64_t end = MIN(h->s.seq.front,
						   c->file_size);

				assert_true(end - h->s.dropped_to < w);
			}
		}
		assert_int_equal(count_advice(h, POSIX_FADV_SEQUENTIAL), 0);
		total = check_window_drops(h, c->start);
		assert_int_equal(total,
				 (c->file_size - (c->start & ~(PAGE - 1))) /
					 w * w);
		assert_int_equal(h->s.stats.streams, 1);
		assert_int_equal(h->s.stats.hot, 0);
		assert_int_equal(h->s.stats.bytes_read,
				 c->file_size - c->start);

		h_close(h);
		check_close_drop(h, c->start, (c->start & ~(PAGE - 1)) + total);
		assert_int_equal(count_closing(h), 1);
		assert_int_equal(h->s.stats.drops,
				 count_advice(h, POSIX_FADV_DONTNEED));
	}
}

/*
 * A client with several reads in flight: the reads of each window-sized
 * group are issued in a random order, groups overlap, and completions
 * come back in a random order too.
 */
struct reorder_case {
	uint64_t file_size;
	size_t rsize;
	uint64_t window;
	unsigned depth;		/* groups in flight at once */
	uint64_t seed;
};

static const struct reorder_case reorder_cases[] = {
	{GiB, MiB, 8 * MiB, 1, 1},
	{GiB, MiB, 8 * MiB, 2, 2},
	{256 * MiB, 64 * KiB, MiB, 4, 3},
	/* 72 reads in flight: more than the engine tracks */
	{512 * MiB, 512 * KiB, 4 * MiB, 9, 4},
	{GiB + 4321, MiB, 8 * MiB, 3, 5},
};

static void test_reordered(void **state)
{
	struct harness *h = *state;
	size_t k;

	for (k = 0; k < N_ELEM(reorder_cases); k++) {
		const struct reorder_case *c = &reorder_cases[k];
		struct rng rng = {.s = c->seed};
		unsigned g = (unsigned)(c->window / c->rsize);
		unsigned perm[64];
		unsigned pool[MAX_READS];
		unsigned npool = 0;
		uint64_t nreads = (c->file_size + c->rsize - 1) / c->rsize;
		uint64_t first, total, full, start = UINT64_MAX;
		unsigned j;

		h_reset(h);
		snprintf(h->ctx, sizeof(h->ctx), "case %zu: ", k);
		h->cfg.window = c->window;
		h_start(h, c->file_size);
		assert_true(g <= N_ELEM(perm));

		for (first = 0; first < nreads; first += g) {
			unsigned n = (unsigned)MIN((uint64_t)g, nreads - first);

			for (j = 0; j < n; j++) {
				perm[j] = j;
			}
			shuffle(&rng, perm, n);
			for (j = 0; j < n; j++) {
				uint64_t off = (first + perm[j]) * c->rsize;

				if (start == UINT64_MAX) {
					start = off;
				}
				pool[npool++] = rd_begin(h, off, c->rsize);
			}
			/* Keep depth groups in flight; end at random */
			while (npool > (c->depth - 1) * g) {
				unsigned p = (unsigned)rng_below(&rng, npool);
				unsigned i = pool[p];
				uint64_t off = h->reads[i].off;

				pool[p] = pool[--npool];
				rd_end(h, i, file_read_len(h, off, c->rsize));
			}
		}
		while (npool > 0) {
			unsigned p = (unsigned)rng_below(&rng, npool);
			unsigned i = pool[p];
			uint64_t off = h->reads[i].off;

			pool[p] = pool[--npool];
			rd_end(h, i, file_read_len(h, off, c->rsize));
		}

		assert_int_equal(h->s.state, CG_ACTIVE);
		assert_int_equal(h->s.stats.streams, 1);
		assert_int_equal(count_advice(h, POSIX_FADV_SEQUENTIAL), 0);
		/*
		 * The first read to arrive starts the stream; reads of its
		 * group below it still count, and drops are aligned to it.
		 */
		total = check_window_drops(h, start);
		full = (c->file_size - start) / c->window * c->window;
		if (c->depth * g <= CG_MAX_DONE) {
			/* Every completion remembered: all whole windows */
			assert_int_equal(total, full);
		} else {
			/* The gap rule: at most a window more stays */
			assert_true(total + c->window >= full);
		}
		h_close(h);
		/* The stream's reads start at 0, whichever came first */
		check_close_drop(h, 0, start + total);
	}
}

/*
 * Windows' copy (CopyFileEx: 1 MiB reads, ten outstanding, multi-credit),
 * as smb_win_copy.py -t captured it against smbd: the reads are sent in
 * order, one more after each answer, and answered in the order below (the
 * read's MiB; a file of 64 MiB and 77 bytes), from a direct and a
 * dontneed share. The answers come out of order while the file is cold,
 * and here and there later. The stream forms at the trigger, every whole
 * window is dropped, and the close drops the rest.
 */
static const uint8_t windows_direct[] = {
	0,  4,  5,  6,  7,  8,  2,  1,  3,  9,  10, 11, 12, 13, 14, 15, 16,
	17, 18, 19, 20, 22, 21, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33,
	34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50,
	51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64,
};
static const uint8_t windows_dontneed[] = {
	0,  1,  2,  3,  4,  5,  7,  9,  8,  6,  10, 11, 12, 13, 14, 15, 16,
	17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33,
	34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50,
	51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64,
};

static void replay_windows(struct harness *h,
			   const uint8_t *done,
			   size_t n,
			   const char *what)
{
	const uint64_t size = 64 * MiB + 77;
	const unsigned depth = 10;
	unsigned slot[65];
	unsigned sent = 0;
	uint64_t total;
	size_t k;

	assert_int_equal(n, N_ELEM(slot));
	h_reset(h);
	snprintf(h->ctx, sizeof(h->ctx), "windows, %s: ", what);
	h->cfg.window = 8 * MiB;
	h_start(h, size);
	for (; sent < depth; sent++) {
		slot[sent] = rd_begin(h, sent * MiB, MiB);
	}
	for (k = 0; k < n; k++) {
		uint64_t off = done[k] * MiB;

		/* an answer is to a read that was sent, once */
		assert_true(done[k] < sent);
		rd_end(h, slot[done[k]], file_read_len(h, off, MiB));
		if (sent < n) {
			slot[sent] = rd_begin(h, sent * MiB, MiB);
			sent++;
		}
	}
	assert_int_equal(h->s.state, CG_ACTIVE);
	assert_int_equal(h->s.stats.streams, 1);
	total = check_window_drops(h, 0);
	assert_int_equal(total, size / h->cfg.window * h->cfg.window);
	h_close(h);
	check_close_drop(h, 0, total);
}

static void test_windows_replay(void **state)
{
	struct harness *h = *state;

	replay_windows(h, windows_direct, N_ELEM(windows_direct), "direct");
	replay_windows(h, windows_dontneed, N_ELEM(windows_dontneed),
		       "dontneed");
}

/*
 * Random access, as a web tier or a database does it: never a stream,
 * never a single syscall, not even a residency probe.
 */
struct random_case {
	uint64_t seed;
	unsigned depth;
	unsigned nreads;
};

static const struct random_case random_cases[] = {
	{11, 1, 20000},
	{12, 4, 20000},
	{13, 32, 10000},
	{14, CG_FLIGHT_SLOTS + 8, 5000},
};

static void test_random_never_activates(void **state)
{
	struct harness *h = *state;
	size_t k;

	for (k = 0; k < N_ELEM(random_cases); k++) {
		const struct random_case *c = &random_cases[k];
		struct rng rng = {.s = c->seed};
		unsigned pool[MAX_READS];
		unsigned npool = 0;
		unsigned done = 0, issued = 0;

		h_reset(h);
		snprintf(h->ctx, sizeof(h->ctx), "case %zu: ", k);
		h_start(h, GiB);
		while (done < c->nreads) {
			if (issued < c->nreads && npool < c->depth) {
				size_t n = 4 * KiB +
					   rng_below(&rng, 60 * KiB + 1);
				uint64_t off = rng_below(&rng, GiB - n);

				pool[npool++] = rd_begin(h, off, n);
				issued++;
				continue;
			}
			{
				unsigned p = (unsigned)rng_below(&rng, npool);
				unsigned i = pool[p];
				struct read *r = &h->reads[i];

				pool[p] = pool[--npool];
				rd_end(h, i, file_read_len(h, r->off, r->n));
				done++;
			}
		}
		h_close(h);
		assert_int_equal(h->ncalls, 0);
		assert_int_equal(h->nresident, 0);
		assert_int_equal(h->s.stats.streams, 0);
		assert_int_equal(h->s.stats.hot, 0);
		assert_int_equal(h->s.state, CG_DETECTING);
	}
}

/* Random reads, then a copy of 64 MiB: only the copy is a stream */
static void test_mixed(void **state)
{
	struct harness *h = *state;
	struct rng rng = {.s = 21};
	const uint64_t run = 512 * MiB + 3 * PAGE;
	const uint64_t run_len = 64 * MiB;
	uint64_t act = h->cfg.stream_trigger / MiB - 1;
	uint64_t off;
	unsigned i;

	h_start(h, GiB);
	for (i = 0; i < 3000; i++) {
		size_t n = 4 * KiB + rng_below(&rng, 60 * KiB + 1);

		rd_one(h, rng_below(&rng, GiB - n), n);
	}
	assert_int_equal(h->ncalls, 0);
	assert_int_equal(h->s.stats.streams, 0);
	assert_int_equal(h->s.state, CG_DETECTING);

	for (off = run; off < run + run_len; off += MiB) {
		rd_one(h, off, MiB);
		if (h->s.stats.streams == 1) {
			continue;
		}
		/* Not active yet: only the first reads of the run */
		assert_int_equal(h->ncalls, 0);
		assert_true((off - run) / MiB < act);
	}
	assert_int_equal(h->s.state, CG_ACTIVE);
	assert_int_equal(h->s.stats.streams, 1);
	assert_int_equal(count_advice(h, POSIX_FADV_SEQUENTIAL), 0);
	/* Whole windows from where the run's stream started */
	assert_true(check_window_drops(h, h->s.seq.start) >= run_len - 8 * MiB);
	assert_true(h->s.seq.start >= run - h->cfg.window);
	h_close(h);
}

/*
 * A file already in the page cache when the stream starts is someone's
 * hot data: hands off, for good.
 */
struct hot_case {
	unsigned threshold;
	unsigned pct;		/* share of the probed range resident */
	int ret;		/* what resident() returns */
	bool hot;
	bool probed;
};

static const struct hot_case hot_cases[] = {
	{50, 50, 0, true, true},
	{50, 100, 0, true, true},
	{50, 49, 0, false, true},
	{50, 0, 0, false, true},
	{1, 1, 0, true, true},
	{1, 0, 0, false, true},
	{100, 100, 0, true, true},
	{100, 99, 0, false, true},
	/* 0 turns the check off: not even probed */
	{0, 100, 0, false, false},
	/* A failed probe does not stop drop-behind */
	{50, 100, EIO, false, true},
};

static void test_hot_file(void **state)
{
	struct harness *h = *state;
	size_t k;

	for (k = 0; k < N_ELEM(hot_cases); k++) {
		const struct hot_case *c = &hot_cases[k];
		uint64_t off;

		h_reset(h);
		snprintf(h->ctx, sizeof(h->ctx), "case %zu: ", k);
		h->cfg.hot_threshold = c->threshold;
		h->resident_pct = c->pct;
		h->resident_ret = c->ret;
		h_start(h, GiB);

		for (off = 0; off < GiB; off += MiB) {
			unsigned before = h->nresident;

			rd_one(h, off, MiB);
			if (off + MiB == h->cfg.stream_trigger) {
				/* Probed as the stream turns active */
				assert_int_equal(h->nresident > 0, c->probed);
			} else {
				/* Once, never again */
				assert_int_equal(h->nresident, before);
			}
		}
		if (c->probed) {
			/* What the stream has not reached, to the end */
			assert_true(h->resident_lo >= h->cfg.stream_trigger);
			assert_true(h->resident_hi <= GiB);
		}
		if (c->probed && c->ret == 0) {
			assert_true(h->resident_hi > GiB - 4 * MiB);
		}
		h_close(h);
		if (c->hot) {
			assert_int_equal(h->s.stats.hot, 1);
			assert_int_equal(h->s.stats.streams, 0);
			/* Not a single hint, not even at close */
			assert_int_equal(h->ncalls, 0);
			assert_int_equal(h->s.stats.drops, 0);
		} else {
			assert_int_equal(h->s.stats.hot, 0);
			assert_int_equal(h->s.stats.streams, 1);
			assert_int_equal(check_window_drops(h, 0),
					 GiB / h->cfg.window * h->cfg.window);
		}
	}
}

/*
 * The hot check of a huge file: it runs on smbd's event loop, and
 * mincore (kernels without cachestat) walks every page it is asked
 * about, so it looks at no more than 16 MiB of the file, spread over
 * the rest of it, and scales what it finds.
 */
static void test_hot_bounded(void **state)
{
	struct harness *h = *state;
	static const unsigned pct[] = {60, 50, 40, 0};
	const uint64_t size = 100 * GiB;
	size_t k;

	for (k = 0; k < N_ELEM(pct); k++) {
		uint64_t off;

		h_reset(h);
		snprintf(h->ctx, sizeof(h->ctx), "%u%% resident: ", pct[k]);
		h->cfg.hot_threshold = 50;
		h->resident_pct = pct[k];
		h_start(h, size);
		for (off = 0; off < 64 * MiB; off += MiB) {
			rd_one(h, off, MiB);
		}
		assert_true(h->nresident > 1);
		assert_true(h->resident_asked <= 16 * MiB);
		/* spread over the rest of the file, to its end */
		assert_true(h->resident_lo >= h->cfg.stream_trigger);
		assert_true(h->resident_lo < GiB);
		assert_true(h->resident_hi <= size);
		assert_true(h->resident_hi > size - MiB);
		assert_int_equal(h->s.state,
				 pct[k] >= 50 ? CG_HOT : CG_ACTIVE);
		h_close(h);
	}
}

/* The state stays CG_HOT while the hot file is read */
static void test_hot_state(void **state)
{
	struct harness *h = *state;
	uint64_t off;
	unsigned i, probes;

	h->resident_pct = 100;
	h_start(h, GiB);
	for (off = 0; off < 64 * MiB; off += MiB) {
		rd_one(h, off, MiB);
		if (off + MiB >= h->cfg.stream_trigger) {
			assert_int_equal(h->s.state, CG_HOT);
		}
	}
	/* the probes of the check, once */
	probes = h->nresident;
	assert_true(probes > 0);
	/* Far reads and more streams change nothing */
	for (i = 0; i < 2 * STRAY_LIMIT; i++) {
		rd_one(h, 900 * MiB - i * 10 * MiB, 64 * KiB);
	}
	for (off = 512 * MiB; off < 600 * MiB; off += MiB) {
		rd_one(h, off, MiB);
	}
	assert_int_equal(h->s.state, CG_HOT);
	assert_int_equal(h->s.stats.hot, 1);
	assert_int_equal(h->nresident, probes);
	h_close(h);
	assert_int_equal(h->ncalls, 0);
}

/*
 * cacheguard:readahead: WILLNEED ahead of the front, in batches of at
 * least a quarter of the distance, never past the end of the file.
 */
struct ra_case {
	uint64_t readahead;
	uint64_t file_size;
	size_t rsize;
};

static const struct ra_case ra_cases[] = {
	{32 * MiB, GiB, MiB},
	{8 * MiB, GiB, MiB},
	{16 * MiB, 100 * MiB + 12345, MiB},
	{2 * MiB, 256 * MiB, 64 * KiB},
	{0, GiB, MiB},
};

static void test_readahead(void **state)
{
	struct harness *h = *state;
	size_t k;

	for (k = 0; k < N_ELEM(ra_cases); k++) {
		const struct ra_case *c = &ra_cases[k];
		uint64_t ra = c->readahead;
		uint64_t batch = MAX(ra / 4, PAGE);
		uint64_t off, prev_end = 0, ahead = 0;
		uint64_t batch_front = 0, batch_len = 0;
		unsigned nreads = 0, nwill, nbatch = 0;
		size_t i;

		h_reset(h);
		snprintf(h->ctx, sizeof(h->ctx), "case %zu: ", k);
		h->cfg.readahead = ra;
		h_start(h, c->file_size);

		for (off = 0; off < c->file_size; off += c->rsize) {
			rd_one(h, off, c->rsize);
			nreads++;
			if (ra == 0 || h->s.state != CG_ACTIVE) {
				continue;
			}
			for (i = 0; i < h->ncalls; i++) {
				const struct call *w = &h->calls[i];

				if (w->advice == POSIX_FADV_WILLNEED) {
					ahead = MAX(ahead, w->off + w->len);
				}
			}
			/* Never more than a batch short of front + ra */
			assert_true(ahead + batch >
				    MIN(h->s.seq.front + ra, c->file_size));
		}
		nwill = count_advice(h, POSIX_FADV_WILLNEED);
		if (ra == 0) {
			assert_int_equal(nwill, 0);
			continue;
		}
		/* Activation: the kernel's readahead off, then WILLNEED */
		assert_true(h->ncalls >= 2);
		assert_int_equal(h->calls[0].advice, POSIX_FADV_RANDOM);
		assert_int_equal(h->calls[0].len, 0);
		assert_int_equal(h->calls[1].advice, POSIX_FADV_WILLNEED);
		for (i = 0; i < h->ncalls; i++) {
			const struct call *w = &h->calls[i];

			if (w->advice != POSIX_FADV_WILLNEED) {
				continue;
			}
			/* Ahead of the front, within ra, inside the file */
			assert_true(w->off >= w->front);
			assert_true(w->off + w->len <= w->front + ra);
			assert_true(w->off + w->len <= c->file_size);
			/* No piece larger than the kernel reads of one */
			assert_true(w->len <= 2 * MiB);
			/* A batch: the pieces made at one front */
			if (nbatch == 0 || w->front != batch_front) {
				assert_true(nbatch == 0 || batch_len >= batch);
				nbatch++;
				batch_front = w->front;
				batch_len = 0;
			}
			batch_len += w->len;
			/* Never the same range twice */
			assert_true(w->off >= prev_end);
			prev_end = w->off + w->len;
		}
		assert_true(batch_len >= batch);
		assert_true(nbatch <= nreads * c->rsize / batch + 1);
		assert_true(nbatch < nreads / 2);
		assert_true(nwill >= nbatch);
	}
}

/* The calls with advice, in order: their indexes into h->calls */
static unsigned find_advice(const struct harness *h,
			    int advice,
			    size_t *idx,
			    unsigned max)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i < h->ncalls && n < max; i++) {
		if (h->calls[i].advice == advice) {
			idx[n++] = i;
		}
	}
	return n;
}

/*
 * The stream's own readahead over its life (dontneed): the kernel's goes
 * off at activation, comes back when strays end the stream, goes off
 * again with the next stream, comes back while the file is served
 * direct, and at close. The fake checks that RANDOM and NORMAL alternate.
 */
static void test_own_readahead_lifecycle(void **state)
{
	struct harness *h = *state;
	size_t rnd[8], nrm[8];
	uint64_t off;
	unsigned i;

	h->cfg.readahead = 4 * MiB;
	h_start(h, GiB);
	for (off = 0; off < 32 * MiB; off += MiB) {
		rd_one(h, off, MiB);
	}
	assert_int_equal(h->s.state, CG_ACTIVE);
	assert_int_equal(find_advice(h, POSIX_FADV_RANDOM, rnd, 8), 1);
	assert_int_equal(rnd[0], 0);
	assert_true(count_advice(h, POSIX_FADV_WILLNEED) >= 2);
	assert_int_equal(count_advice(h, POSIX_FADV_NORMAL), 0);
	assert_true(h->s.willneed_to + MiB >= h->s.seq.front + 4 * MiB);

	/* Strays end the stream: readahead back to the kernel */
	for (i = 0; i < STRAY_LIMIT; i++) {
		rd_one(h, 600 * MiB + i * 10 * MiB, 64 * KiB);
	}
	assert_int_equal(h->s.state, CG_DETECTING);
	assert_int_equal(find_advice(h, POSIX_FADV_NORMAL, nrm, 8), 1);
	assert_true(nrm[0] > rnd[0]);

	/* A new stream there: off again */
	for (off = 670 * MiB; off < 700 * MiB; off += MiB) {
		rd_one(h, off, MiB);
	}
	assert_int_equal(h->s.state, CG_ACTIVE);
	assert_int_equal(find_advice(h, POSIX_FADV_RANDOM, rnd, 8), 2);
	assert_true(rnd[1] > nrm[0]);

	/* Served direct: this descriptor's readahead is the kernel's */
	cg_stream_set_via(&h->s, TEST_FD, CG_VIA_DIRECT);
	assert_int_equal(count_advice(h, POSIX_FADV_NORMAL), 2);
	cg_stream_set_via(&h->s, TEST_FD, CG_VIA_CACHE);
	assert_int_equal(count_advice(h, POSIX_FADV_RANDOM), 3);

	h_close(h);
	assert_int_equal(find_advice(h, POSIX_FADV_NORMAL, nrm, 8), 3);
	assert_true(h->calls[nrm[2]].closing);
}

/*
 * Which streams get which hints with cacheguard:readahead set: dontneed
 * RANDOM and WILLNEED; dontcache RANDOM only (WILLNEED's pages would
 * outlive its uncached reads); direct, a hot file and readahead = 0
 * none. WILLNEED pieces shrink to a smaller device readahead.
 */
struct own_ra_case {
	enum cg_via via;
	uint64_t readahead;
	uint64_t kernel_ra;
	unsigned resident_pct;
	unsigned nrandom;
	bool willneed;
	uint64_t max_piece;
};

static const struct own_ra_case own_ra_cases[] = {
	{CG_VIA_CACHE, 4 * MiB, 0, 0, 1, true, 2 * MiB},
	{CG_VIA_CACHE, 4 * MiB, 8 * MiB, 0, 1, true, 2 * MiB},
	{CG_VIA_CACHE, 4 * MiB, 512 * KiB, 0, 1, true, 512 * KiB},
	{CG_VIA_CACHE, 0, 8 * MiB, 0, 0, false, 0},
	{CG_VIA_CACHE, 4 * MiB, 8 * MiB, 100, 0, false, 0},
	{CG_VIA_DONTCACHE, 4 * MiB, 8 * MiB, 0, 1, false, 0},
	{CG_VIA_DIRECT, 4 * MiB, 8 * MiB, 0, 0, false, 0},
};

static void test_own_readahead_paths(void **state)
{
	struct harness *h = *state;
	uint64_t off;
	size_t k, i;

	for (k = 0; k < N_ELEM(own_ra_cases); k++) {
		const struct own_ra_case *c = &own_ra_cases[k];

		h_reset(h);
		snprintf(h->ctx, sizeof(h->ctx), "case %zu: ", k);
		h->cfg.readahead = c->readahead;
		h->resident_pct = c->resident_pct;
		h_start(h, GiB);
		h->s.kernel_ra = c->kernel_ra;
		cg_stream_set_via(&h->s, TEST_FD, c->via);
		for (off = 0; off < 64 * MiB; off += MiB) {
			if (c->via == CG_VIA_CACHE || off < 4 * MiB) {
				rd_one(h, off, MiB);
			} else {
				rd_one_uncached(h, off, MiB);
			}
		}
		h_check(h);
		assert_int_equal(count_advice(h, POSIX_FADV_RANDOM),
				 c->nrandom);
		assert_int_equal(count_advice(h, POSIX_FADV_WILLNEED) > 0,
				 c->willneed);
		for (i = 0; i < h->ncalls; i++) {
			if (h->calls[i].advice == POSIX_FADV_WILLNEED) {
				assert_true(h->calls[i].len <= c->max_piece);
			}
		}
		h_close(h);
		assert_int_equal(count_advice(h, POSIX_FADV_NORMAL),
				 c->nrandom);
	}
}

/*
 * A client reading more than readahead at a time (smbclient: 8 MiB, two
 * in flight) gets at least one read's worth ahead of the front, so its
 * next read is on its way before it asks; smaller reads get readahead.
 */
static void test_own_readahead_covers_a_read(void **state)
{
	struct harness *h = *state;
	const size_t rsizes[] = {8 * MiB, 64 * KiB};
	uint64_t off, want;
	size_t k, i[2];

	for (k = 0; k < N_ELEM(rsizes); k++) {
		h_reset(h);
		h->cfg.readahead = 4 * MiB;
		h_start(h, GiB);
		for (off = 0; off < 128 * MiB; off += 2 * rsizes[k]) {
			/* two in flight, ended in order */
			i[0] = rd_begin(h, off, rsizes[k]);
			i[1] = rd_begin(h, off + rsizes[k], rsizes[k]);
			rd_end(h, i[0], (ssize_t)rsizes[k]);
			rd_end(h, i[1], (ssize_t)rsizes[k]);
			want = MAX(4 * MiB, (uint64_t)rsizes[k]);
			if (h->s.state != CG_ACTIVE) {
				continue;	/* detecting: the kernel's */
			}
			/* within a quarter step of front + one read */
			assert_true(h->s.willneed_to + want / 4 >=
				    h->s.seq.front + want);
			assert_true(h->s.willneed_to <= h->s.seq.front + want);
		}
		h_close(h);
	}
}

/*
 * Fewer than 8 far reads in a row (Explorer reading a header, a
 * metadata probe) leave the stream alone, and nothing ahead of the
 * stream is dropped because of them.
 */
static void test_strays_keep_stream(void **state)
{
	struct harness *h = *state;
	const uint64_t strays[STRAY_LIMIT - 1] = {
		0, PAGE, 900 * MiB, 512 * MiB + 12345, GiB - 64 * KiB,
		MiB, 700 * MiB,
	};
	uint64_t off;
	unsigned i, round = 0;

	h_start(h, GiB);
	for (off = 0; off < GiB; off += MiB) {
		rd_one(h, off, MiB);
		if (off < 64 * MiB || off % (64 * MiB) != 0) {
			continue;
		}
		/* Every 64 MiB: 7 strays, at depth 1 or all at once */
		if (round++ % 2 == 0) {
			for (i = 0; i < N_ELEM(strays); i++) {
				rd_one(h, strays[i], 64 * KiB);
				assert_int_equal(h->s.state, CG_ACTIVE);
			}
		} else {
			unsigned idx[N_ELEM(strays)];

			for (i = 0; i < N_ELEM(strays); i++) {
				idx[i] = rd_begin(h, strays[i], 64 * KiB);
			}
			for (i = 0; i < N_ELEM(strays); i++) {
				rd_end(h, idx[i], 64 * KiB);
			}
			assert_int_equal(h->s.state, CG_ACTIVE);
		}
		/* Nothing at or beyond the front was dropped */
		assert_true(dropped_end(h) <= off + MiB);
	}
	assert_int_equal(h->s.state, CG_ACTIVE);
	assert_int_equal(h->s.stats.streams, 1);
	assert_int_equal(count_advice(h, POSIX_FADV_SEQUENTIAL), 0);
	assert_int_equal(check_window_drops(h, 0), GiB);
	h_close(h);
	/* No abandoned stream: the close drop only */
	assert_int_equal(count_closing(h), 1);
}

/*
 * 8 far reads in a row end the stream: detection restarts at the 8th,
 * the old range waits for cg_stream_close(), which drops it.
 */
static void test_strays_restart(void **state)
{
	struct harness *h = *state;
	const uint64_t news[] = {0, 32 * MiB};
	size_t k;

	for (k = 0; k < N_ELEM(news); k++) {
		const uint64_t old_len = 100 * MiB + 512 * KiB;
		uint64_t old_front, old_dropped, new_start = 0;
		uint64_t off;
		size_t ncalls, i;
		bool tail = false;

		h_reset(h);
		snprintf(h->ctx, sizeof(h->ctx), "case %zu: ", k);
		h_start(h, GiB);
		for (off = 0; off < old_len; off += 512 * KiB) {
			rd_one(h, off, 512 * KiB);
		}
		assert_int_equal(h->s.state, CG_ACTIVE);
		old_front = h->s.seq.front;
		old_dropped = dropped_end(h);
		assert_true(old_dropped < old_front);

		for (i = 0; i < STRAY_LIMIT; i++) {
			off = 700 * MiB + i * 16 * MiB;
			rd_one(h, off, 64 * KiB);
			if (i < STRAY_LIMIT - 1) {
				assert_int_equal(h->s.state, CG_ACTIVE);
			}
		}
		/* Detection starts over, at the 8th far read */
		assert_int_equal(h->s.state, CG_DETECTING);
		assert_int_equal(h->s.seq.start, off);
		ncalls = h->ncalls;

		new_start = off;
		for (off = new_start + 64 * KiB;
		     off < new_start + news[k];
		     off += MiB) {
			rd_one(h, off, MiB);
		}
		/* The old range is not dropped before close */
		for (i = ncalls; i < h->ncalls; i++) {
			assert_true(h->calls[i].advice != POSIX_FADV_DONTNEED ||
				    h->calls[i].off >= new_start);
		}
		if (news[k] > 0) {
			assert_int_equal(h->s.state, CG_ACTIVE);
			assert_int_equal(h->s.stats.streams, 2);
		} else {
			assert_int_equal(h->s.state, CG_DETECTING);
			assert_int_equal(h->ncalls, ncalls);
		}

		h_close(h);
		for (i = 0; i < h->ncalls; i++) {
			const struct call *c = &h->calls[i];
			uint64_t end = c->len == 0 ? UINT64_MAX
						   : c->off + c->len;

			if (c->closing && c->off <= old_dropped &&
			    end >= old_front) {
				tail = true;
			}
		}
		assert_true(tail);
		assert_int_equal(count_closing(h), news[k] > 0 ? 2 : 1);
	}
}

/* cg_stream_close() on each state the stream can be in */
static void test_close(void **state)
{
	struct harness *h = *state;
	const uint64_t start = 3 * MiB + 100;
	uint64_t off, dropped;
	unsigned i;

	/* Active: one DONTNEED of the stream and its readahead */
	h_start(h, GiB);
	for (off = start; off < 50 * MiB + 1234; off += MiB) {
		rd_one(h, off, MiB);
	}
	assert_int_equal(h->s.state, CG_ACTIVE);
	dropped = (start & ~(PAGE - 1)) + check_window_drops(h, start);
	assert_true(dropped < h->s.seq.front);
	h_close(h);
	assert_int_equal(count_closing(h), 1);
	check_close_drop(h, start, dropped);
	/* Not the rest of the file: others may have it cached */
	assert_int_equal(h->calls[h->ncalls - 1].off +
				 h->calls[h->ncalls - 1].len,
			 h->s.seq.front + 4 * RA_SLACK);
	/* Closing again finds nothing left to drop */
	i = (unsigned)h->ncalls;
	h_close(h);
	assert_int_equal(h->ncalls, i);

	/* Still detecting: nothing was ever the stream's, nothing to do */
	h_reset(h);
	h_start(h, GiB);
	rd_one(h, 0, MiB);
	rd_one(h, MiB, MiB);
	h_close(h);
	assert_int_equal(h->ncalls, 0);

	/* Never read at all */
	h_reset(h);
	h_start(h, GiB);
	h_close(h);
	assert_int_equal(h->ncalls, 0);
}

/*
 * What a stream drops at its end is its own: a stream abandoned at one
 * place and another begun far off are dropped as two ranges, never as
 * one span over what lies between (others' cached pages); the kernel's
 * readahead for the device bounds how far past a front a drop reaches.
 */
static void test_close_drops_own_ranges(void **state)
{
	struct harness *h = *state;
	const uint64_t second = 600 * MiB;
	uint64_t off;
	size_t i;

	h_start(h, GiB);
	h->s.kernel_ra = 8 * MiB;
	for (off = 0; off < 48 * MiB; off += MiB) {
		rd_one(h, off, MiB);
	}
	for (i = 0; i < STRAY_LIMIT; i++) {
		rd_one(h, second + i * MiB, MiB);
	}
	for (off = second + STRAY_LIMIT * MiB; off < second + 64 * MiB;
	     off += MiB) {
		rd_one(h, off, MiB);
	}
	assert_int_equal(h->s.stats.streams, 2);
	h_close(h);
	for (i = 0; i < h->ncalls; i++) {
		const struct call *c = &h->calls[i];
		uint64_t end = c->len == 0 ? UINT64_MAX : c->off + c->len;

		if (c->advice != POSIX_FADV_DONTNEED) {
			continue;
		}
		/* Nothing between the first stream's reach and the second */
		if (c->off < second && end > 48 * MiB + 4 * 8 * MiB) {
			fail_msg("DONTNEED [%ju, %ju) spans the gap",
				 (uintmax_t)c->off, (uintmax_t)end);
		}
		/* Nothing past the second stream's reach */
		assert_true(end <= second + 64 * MiB + 4 * 8 * MiB);
	}
	assert_int_equal(count_closing(h), 2);
}

/*
 * Hints follow the path: a direct stream gets no hint and no WILLNEED,
 * even with cacheguard:readahead set;
 * only windows some read went through the cache for are dropped (the
 * detection reads, a fallback read), and its close drops what those
 * reads caused, nothing of the rest. A fallback to the cache turns the
 * stream's own readahead on.
 */
static void test_uncached_hints(void **state)
{
	struct harness *h = *state;
	const uint64_t trigger = h->cfg.stream_trigger;
	const uint64_t w = h->cfg.window;
	uint64_t off;
	size_t i;

	h->cfg.readahead = 32 * MiB;
	h_start(h, GiB);
	cg_stream_set_via(&h->s, TEST_FD, CG_VIA_DIRECT);
	/* Detection: buffered, through the next module */
	for (off = 0; off < trigger; off += MiB) {
		rd_one(h, off, MiB);
	}
	assert_int_equal(h->s.state, CG_ACTIVE);
	/* The stream proper: uncached, except one fallback at 300 MiB */
	for (off = trigger; off < 400 * MiB; off += MiB) {
		if (off == 300 * MiB) {
			rd_one(h, off, MiB);
		} else {
			rd_one_uncached(h, off, MiB);
		}
	}
	assert_int_equal(count_advice(h, POSIX_FADV_SEQUENTIAL), 0);
	assert_int_equal(count_advice(h, POSIX_FADV_WILLNEED), 0);
	for (i = 0; i < h->ncalls; i++) {
		const struct call *c = &h->calls[i];
		bool first = c->off == 0 && c->len <= MAX(w, trigger + w);
		bool fallback = c->off <= 300 * MiB &&
				c->off + c->len >= 301 * MiB &&
				c->len <= 2 * w;

		assert_int_equal(c->advice, POSIX_FADV_DONTNEED);
		if (!first && !fallback) {
			fail_msg("DONTNEED [%ju, +%ju) covers no cached read",
				 (uintmax_t)c->off, (uintmax_t)c->len);
		}
	}
	assert_true(h->ncalls >= 2);
	h_close(h);
	/* The close: the cached reads' footprint, not the stream's 400 MiB */
	assert_int_equal(h->calls[h->ncalls - 1].off, 0);
	assert_int_equal(h->calls[h->ncalls - 1].len,
			 301 * MiB + 2 * RA_SLACK);

	/* A fallback to the cache mid-stream: hints from then on */
	h_reset(h);
	h->cfg.readahead = 32 * MiB;
	h_start(h, GiB);
	cg_stream_set_via(&h->s, TEST_FD, CG_VIA_DIRECT);
	for (off = 0; off < 64 * MiB; off += MiB) {
		rd_one_uncached(h, off, MiB);
	}
	assert_int_equal(count_advice(h, POSIX_FADV_SEQUENTIAL), 0);
	assert_int_equal(count_advice(h, POSIX_FADV_RANDOM), 0);
	cg_stream_set_via(&h->s, TEST_FD, CG_VIA_CACHE);
	assert_int_equal(count_advice(h, POSIX_FADV_SEQUENTIAL), 0);
	assert_int_equal(count_advice(h, POSIX_FADV_RANDOM), 1);
	/* 32 MiB ahead, in pieces of 2 MiB (the kernel caps one WILLNEED) */
	assert_int_equal(count_advice(h, POSIX_FADV_WILLNEED), 16);
	for (; off < 128 * MiB; off += MiB) {
		rd_one(h, off, MiB);
	}
	assert_true(check_window_drops(h, 64 * MiB) >= 32 * MiB);
	h_close(h);
}

/*
 * dontcache: a file cold at stream start has every window dropped behind
 * (RWF_DONTCACHE can leave pages behind, and no one else has any); one
 * that others keep partly cached (under the hot threshold) only where
 * our own reads went through the cache, so their pages stay.
 */
static void test_dontcache_cold_or_shared(void **state)
{
	struct harness *h = *state;
	const unsigned pct[] = {0, 20};
	uint64_t off;
	size_t k;

	for (k = 0; k < N_ELEM(pct); k++) {
		h_reset(h);
		h->cfg.hot_threshold = 0;	/* measured all the same */
		h->resident_pct = pct[k];
		h_start(h, GiB);
		cg_stream_set_via(&h->s, TEST_FD, CG_VIA_DONTCACHE);
		rd_one(h, 0, 4 * MiB);
		for (off = 4 * MiB; off < 256 * MiB; off += MiB) {
			rd_one_uncached(h, off, MiB);
		}
		assert_int_equal(h->s.state, CG_ACTIVE);
		assert_true(h->nresident > 0);
		assert_int_equal(count_advice(h, POSIX_FADV_SEQUENTIAL), 0);
		if (pct[k] == 0) {
			assert_true(check_window_drops(h, 0) >= 200 * MiB);
		} else {
			/* the window of the first, buffered read only */
			assert_int_equal(count_advice(h, POSIX_FADV_DONTNEED),
					 1);
		}
		h_close(h);
	}
}

/*
 * A stream that drops all it reads (through the cache, or dontcache on a
 * cold file) drops the last REDROP windows below its drop point again
 * with every window drop: the kernel's readahead for a lagging smbd
 * thread can bring back a range already dropped, and nothing reads it
 * again (seen on a loop device: 5 MiB strays cached to the end of a copy).
 * A stream that drops only what its cached reads touched (a direct one,
 * a dontcache one on a file others keep cached) never drops twice.
 */
struct redrop_case {
	enum cg_via via;
	unsigned resident_pct;	/* of the file, at the stream's start */
	bool again;		/* windows dropped again */
};

static const struct redrop_case redrop_cases[] = {
	{CG_VIA_CACHE, 0, true},
	{CG_VIA_DONTCACHE, 0, true},
	{CG_VIA_DONTCACHE, 20, false},
	{CG_VIA_DIRECT, 0, false},
};

static void test_redrop(void **state)
{
	struct harness *h = *state;
	const uint64_t w = h->cfg.window;
	size_t k, i;

	for (k = 0; k < N_ELEM(redrop_cases); k++) {
		const struct redrop_case *rc = &redrop_cases[k];
		uint64_t next = 0, off;
		unsigned drops = 0;

		h_reset(h);
		snprintf(h->ctx, sizeof(h->ctx), "case %zu: ", k);
		h->cfg.hot_threshold = 0;	/* measured all the same */
		h->resident_pct = rc->resident_pct;
		h_start(h, GiB);
		cg_stream_set_via(&h->s, TEST_FD, rc->via);
		for (off = 0; off < 128 * MiB; off += MiB) {
			if (rc->via == CG_VIA_CACHE || off < 4 * MiB) {
				rd_one(h, off, MiB);
			} else {
				rd_one_uncached(h, off, MiB);
			}
		}
		for (i = 0; i < h->ncalls; i++) {
			const struct call *c = &h->calls[i];
			uint64_t want = next;

			if (c->advice != POSIX_FADV_DONTNEED) {
				continue;
			}
			if (rc->again) {
				want = next - MIN(next, REDROP * w);
			}
			if (c->off != want) {
				fail_msg("%sDONTNEED %u at %" PRIu64
					 ", expected %" PRIu64,
					 h->ctx, drops, c->off, want);
			}
			next = c->off + c->len;
			drops++;
		}
		if (rc->again) {
			assert_true(drops >= 8);
			assert_true(next >= 96 * MiB);
		}
		h_close(h);
	}
}

/*
 * More than CG_FLIGHT_SLOTS reads in flight: the extra ones spill into a
 * batch that remembers its lowest offset, and no drop passes it.
 */
static void test_inflight_overflow(void **state)
{
	struct harness *h = *state;
	const unsigned extra = 4;
	unsigned idx[CG_FLIGHT_SLOTS + 4];
	uint64_t off, before;
	unsigned i;

	h_start(h, GiB);
	for (off = 0; off < 16 * MiB; off += MiB) {
		rd_one(h, off, MiB);
	}
	assert_int_equal(dropped_end(h), 16 * MiB);

	assert_int_equal(cg_flight_count(&h->s.flight), 0);
	for (i = 0; i < CG_FLIGHT_SLOTS + extra; i++) {
		idx[i] = rd_begin(h, 16 * MiB + i * MiB, MiB);
		assert_int_equal(h->reads[idx[i]].overflow,
				 i >= CG_FLIGHT_SLOTS);
		/* the batches count too (direct prefetch grows with it) */
		assert_int_equal(cg_flight_count(&h->s.flight), i + 1);
	}
	/*
	 * The tracked ones finish: drops reach the lowest read that spilled
	 * into a batch (80 MiB) and never pass it while it is in flight
	 */
	for (i = 0; i < CG_FLIGHT_SLOTS; i++) {
		rd_end(h, idx[i], MiB);
		assert_true(dropped_end(h) <= 80 * MiB);
	}
	assert_int_equal(dropped_end(h), 80 * MiB);
	assert_int_equal(cg_flight_count(&h->s.flight), extra);
	for (i = CG_FLIGHT_SLOTS; i < CG_FLIGHT_SLOTS + extra; i++) {
		rd_end(h, idx[i], MiB);
	}
	assert_int_equal(cg_flight_count(&h->s.flight), 0);
	/* 84 MiB read: the window [80, 88) is not whole yet */
	assert_int_equal(dropped_end(h), 80 * MiB);
	before = h->ncalls;
	assert_true(before > 0);
	check_window_drops(h, 0);
	h_close(h);
}

/*
 * A read that fails (-1) is not data: it does not count, does not stop
 * the stream, and the range it left unread does not block drops forever.
 * The client may retry it or not.
 */
static void test_failed_read(void **state)
{
	struct harness *h = *state;
	const uint64_t bad = 20 * MiB;
	const bool retry[] = {false, true};
	size_t k;

	for (k = 0; k < N_ELEM(retry); k++) {
		unsigned pool[4];
		unsigned npool = 0;
		uint64_t off;

		h_reset(h);
		snprintf(h->ctx, sizeof(h->ctx), "case %zu: ", k);
		h_start(h, GiB);
		/* 4 reads in flight, ended oldest first */
		for (off = 0; off < GiB; off += MiB) {
			pool[npool++] = rd_begin(h, off, MiB);
			if (npool < N_ELEM(pool)) {
				continue;
			}
			if (h->reads[pool[0]].off == bad) {
				rd_end(h, pool[0], -1);
				if (retry[k]) {
					rd_one(h, bad, MiB);
				}
			} else {
				rd_end(h, pool[0], MiB);
			}
			memmove(pool, pool + 1, --npool * sizeof(pool[0]));
		}
		while (npool > 0) {
			rd_end(h, pool[0], MiB);
			memmove(pool, pool + 1, --npool * sizeof(pool[0]));
		}
		assert_int_equal(h->s.state, CG_ACTIVE);
		assert_int_equal(h->s.stats.streams, 1);
		assert_int_equal(h->s.stats.bytes_read,
				 retry[k] ? GiB : GiB - MiB);
		/* Drops went on past the hole */
		assert_true(check_window_drops(h, 0) + h->cfg.window >= GiB);
		h_close(h);
	}
}

/* The last read of a file comes back short, and a read at EOF with 0 */
static void test_short_read_at_eof(void **state)
{
	struct harness *h = *state;
	const uint64_t size = 100 * MiB + 12345;
	uint64_t off;
	size_t i;

	h->cfg.readahead = 16 * MiB;
	h_start(h, size);
	for (off = 0; off < size; off += MiB) {
		rd_one(h, off, MiB);
	}
	/* A client probing past the end */
	rd_one(h, size, MiB);
	rd_one(h, size + MiB, MiB);

	assert_int_equal(h->s.state, CG_ACTIVE);
	assert_int_equal(h->s.stats.bytes_read, size);
	assert_int_equal(check_window_drops(h, 0),
			 size / h->cfg.window * h->cfg.window);
	for (i = 0; i < h->ncalls; i++) {
		const struct call *c = &h->calls[i];

		if (c->len != 0) {
			assert_true(c->off + c->len <= size);
		}
	}
	h_close(h);
	check_close_drop(h, 0, size / h->cfg.window * h->cfg.window);
}

/* Reads of 0 bytes are no reads: not tracked, not counted, not strays */
static void test_zero_length_reads(void **state)
{
	struct harness *h = *state;
	uint64_t off;
	unsigned i, idx;

	h_start(h, GiB);
	for (i = 0; i < 1000; i++) {
		idx = rd_begin(h, (uint64_t)i * MiB % GiB, 0);
		assert_true(h->reads[idx].io.flight.track != CG_TRACK_SLOT);
		rd_end(h, idx, 0);
	}
	assert_int_equal(h->s.state, CG_DETECTING);
	assert_int_equal(h->ncalls, 0);

	for (off = 0; off < 32 * MiB; off += MiB) {
		rd_one(h, off, MiB);
	}
	assert_int_equal(h->s.state, CG_ACTIVE);
	for (i = 0; i < 2 * STRAY_LIMIT; i++) {
		rd_one(h, 900 * MiB, 0);
	}
	assert_int_equal(h->s.state, CG_ACTIVE);
	assert_int_equal(h->s.seq.strays, 0);
	assert_int_equal(h->s.stats.bytes_read, 32 * MiB);
	h_close(h);
}

/*
 * A read the client issues late, but within a window of the front, is
 * still the stream's: its range is not given up (dropped) before it is
 * read, and it is dropped once it has been. A range the client skipped
 * for good, more than a window behind, does not change that.
 */
struct late_case {
	uint64_t late;		/* read last, when the front is a window on */
	uint64_t skip;		/* never read; UINT64_MAX: none */
};

static const struct late_case late_cases[] = {
	/* In the upper half of a window, so that dropping it shows */
	{36 * MiB, UINT64_MAX},
	/* Just above a hole the gap rule moves past */
	{22 * MiB, 20 * MiB},
};

static void test_late_read_within_window(void **state)
{
	struct harness *h = *state;
	size_t k;

	for (k = 0; k < N_ELEM(late_cases); k++) {
		const struct late_case *c = &late_cases[k];
		uint64_t w = 0;
		uint64_t off;
		unsigned idx;

		h_reset(h);
		snprintf(h->ctx, sizeof(h->ctx), "case %zu: ", k);
		w = h->cfg.window;
		h_start(h, GiB);
		for (off = 0; off + MiB <= c->late + w; off += MiB) {
			if (off != c->late && off != c->skip) {
				rd_one(h, off, MiB);
			}
		}
		/* The late read is exactly one window behind the front */
		assert_int_equal(h->s.seq.front, c->late + w);
		assert_true(dropped_end(h) <= c->late);
		idx = rd_begin(h, c->late, MiB);
		assert_true(h->reads[idx].io.in_stream);
		rd_end(h, idx, MiB);
		assert_true(dropped_end(h) >= c->late + MiB);
		for (off = c->late + w; off < 128 * MiB; off += MiB) {
			rd_one(h, off, MiB);
		}
		assert_int_equal(check_window_drops(h, 0), 128 * MiB);
		h_close(h);
	}
}

/* Union of the DONTNEED calls: does it cover [from, to)? */
static bool dropped_all_of(const struct harness *h, uint64_t from, uint64_t to)
{
	uint64_t pos = from;
	bool moved = true;
	size_t i;

	while (pos < to && moved) {
		moved = false;
		for (i = 0; i < h->ncalls; i++) {
			const struct call *c = &h->calls[i];
			uint64_t end = c->len == 0 ? UINT64_MAX
						   : c->off + c->len;

			if (c->advice == POSIX_FADV_DONTNEED &&
			    c->off <= pos && end > pos) {
				pos = end;
				moved = true;
			}
		}
	}
	return pos >= to;
}

/*
 * The first read to arrive starts the stream; reads of the same batch
 * that arrive after it but land below it are the stream's too, and the
 * close drop starts at the lowest of them.
 */
static void test_reads_below_start_dropped(void **state)
{
	struct harness *h = *state;
	/* A client's first four reads, arriving out of order */
	const uint64_t first[] = {3 * MiB, MiB, 2 * MiB, 0};
	unsigned idx[N_ELEM(first)];
	uint64_t off;
	size_t i;

	h_start(h, GiB);
	for (i = 0; i < N_ELEM(first); i++) {
		idx[i] = rd_begin(h, first[i], MiB);
		assert_true(h->reads[idx[i]].io.in_stream);
	}
	for (i = 0; i < N_ELEM(first); i++) {
		rd_end(h, idx[i], MiB);
	}
	for (off = 4 * MiB; off < 64 * MiB; off += MiB) {
		rd_one(h, off, MiB);
	}
	assert_int_equal(h->s.state, CG_ACTIVE);
	h_close(h);
	/* Everything the stream read is gone after close */
	assert_true(dropped_all_of(h, 0, 64 * MiB));
}

/*
 * A client that keeps more than CG_FLIGHT_SLOTS reads in flight all the
 * time always has some of them spilled into the two overflow batches. A
 * batch remembers only its lowest offset and stays open until the other
 * one has drained, so its lowest offset can be up to two queue depths
 * behind the front: retention is bounded by 2 x queue + 2 windows, and
 * drop-behind keeps moving for the whole copy.
 */
static void test_deep_queue_keeps_dropping(void **state)
{
	struct harness *h = *state;
	const unsigned depth = CG_FLIGHT_SLOTS + 8;
	unsigned ring[CG_FLIGHT_SLOTS + 8];
	uint64_t w = h->cfg.window;
	uint64_t off, next = 0;
	unsigned head = 0, i;
	bool bounded = true;

	h_start(h, GiB);
	for (i = 0; i < depth; i++) {
		ring[i] = rd_begin(h, next, MiB);
		next += MiB;
	}
	/* FIFO: the oldest read completes, the next one is issued */
	while (next < GiB) {
		off = h->reads[ring[head]].off;
		rd_end(h, ring[head], MiB);
		ring[head] = rd_begin(h, next, MiB);
		next += MiB;
		head = (head + 1) % depth;
		/* Two batches: 2 x depth MiB, then 2 windows */
		if (off > 64 * MiB &&
		    dropped_end(h) + 2 * depth * MiB + 2 * w < h->s.seq.front) {
			bounded = false;
		}
	}
	for (i = 0; i < depth; i++) {
		rd_end(h, ring[(head + i) % depth], MiB);
	}
	assert_int_equal(check_window_drops(h, 0), GiB);
	h_close(h);
	assert_true(bounded);
}

/*
 * An abandoned stream's tail reaches as far as the engine's own WILLNEED
 * went (cacheguard:readahead), not just front + CG_RA_SLACK: nothing
 * later would drop those pages otherwise.
 */
static void test_restart_tail_covers_readahead(void **state)
{
	struct harness *h = *state;
	uint64_t off, ahead = 0, dropped;
	size_t i;
	bool covered = false;

	h->cfg.readahead = 32 * MiB;
	h_start(h, GiB);
	for (off = 0; off < 64 * MiB; off += MiB) {
		rd_one(h, off, MiB);
	}
	for (i = 0; i < h->ncalls; i++) {
		if (h->calls[i].advice == POSIX_FADV_WILLNEED) {
			ahead = MAX(ahead, h->calls[i].off + h->calls[i].len);
		}
	}
	assert_true(ahead > h->s.seq.front + 4 * MiB);
	dropped = dropped_end(h);

	/* Given up: 8 far reads, then nothing more of this file */
	for (i = 0; i < STRAY_LIMIT; i++) {
		rd_one(h, 700 * MiB + i * 16 * MiB, 64 * KiB);
	}
	assert_int_equal(h->s.state, CG_DETECTING);
	h_close(h);
	for (i = 0; i < h->ncalls; i++) {
		const struct call *c = &h->calls[i];

		if (c->closing && c->advice == POSIX_FADV_DONTNEED &&
		    c->off <= dropped &&
		    (c->len == 0 || c->off + c->len >= ahead)) {
			covered = true;
		}
	}
	assert_true(covered);
}

/*
 * A stray read in flight below the stream holds back every drop (it is
 * the lowest read in flight). Its own completion releases them; they do
 * not wait for the next stream read, which may never come.
 */
static void test_stray_completion_releases_drops(void **state)
{
	struct harness *h = *state;
	uint64_t off;
	unsigned idx;

	h_start(h, GiB);
	for (off = 0; off < 64 * MiB; off += MiB) {
		rd_one(h, off, MiB);
	}
	assert_int_equal(dropped_end(h), 64 * MiB);
	idx = rd_begin(h, 0, 64 * KiB);
	for (off = 64 * MiB; off < 96 * MiB; off += MiB) {
		rd_one(h, off, MiB);
	}
	/* Held back while the stray was in flight, as it must be */
	assert_int_equal(dropped_end(h), 64 * MiB);
	rd_end(h, idx, 64 * KiB);
	/* Nothing in flight now: at most a window behind the front */
	assert_true(dropped_end(h) + h->cfg.window > h->s.seq.front);
	h_close(h);
}

/*
 * The property test
 * -----------------
 *
 * A simulated SMB2 client: up to K reads in flight (K from 1 to
 * CG_FLIGHT_SLOTS + 8), reads issued in order of windows but shuffled
 * inside each window, completed in random order, with strays, bursts of
 * strays long enough to end the stream, failed reads, and a short read
 * at the end of the file.
 *
 * Checked after every step:
 *
 * 1. No DONTNEED overlaps a read in flight, tracked or not (the fake
 *    checks it at the moment of the call).
 *
 * 2. The retained range [dropped_to, front) is bounded. Work it out
 *    from the code: a drop opportunity is the completion of a stream
 *    read that extends contig while the stream is active and no read is
 *    untracked. There the gap rule gives contig >= front - window, the
 *    drop limit is min(contig, lowest read in flight), and whole windows
 *    are dropped up to it, so
 *
 *	front - dropped_to < window + max(window, front - low)	(exact)
 *
 *    where low is the lowest offset in flight. This is within the
 *    brief's "window + span in flight + window". Between opportunities
 *    nothing is dropped while the front still moves: a read may start
 *    up to one window beyond the front, and reads that completed since
 *    (strays, failed reads) no longer count as in flight. So at every
 *    other point
 *
 *	front - dropped_to < 3 * window + max(0, front - low(S))
 *
 *    with S the reads in flight or completed since the last
 *    opportunity.
 */
struct sim_params {
	uint64_t seed;
	uint64_t file_size;
	uint64_t window;
	uint64_t trigger;
	uint64_t readahead;
	size_t rsize;
	unsigned depth;
	unsigned issue_pm;	/* per mille of steps that issue, if they can */
	unsigned stray_pm;	/* per mille of issues: one stray */
	unsigned burst_pm;	/* per mille: a burst of >= 8 strays */
	unsigned fail_pm;	/* per mille of completions: -1 */
};

struct sim_totals {
	uint64_t runs;
	uint64_t drops;
	uint64_t opportunities;
	uint64_t restarts;
	uint64_t overflows;
	uint64_t failures;
	uint64_t bound_checks;
	uint64_t max_retained;	/* in windows */
};

struct sim {
	struct harness *h;
	const struct sim_params *p;
	struct rng rng;
	bool have_p;		/* a drop opportunity since activation */
	uint64_t p_start;
	uint64_t p_streams;
	uint64_t s_low;		/* lowest read completed since then */
	uint64_t op;
};

static uint64_t lowest_in_flight(const struct harness *h)
{
	uint64_t low = UINT64_MAX;
	unsigned i;

	for (i = 0; i < h->high; i++) {
		if (h->reads[i].busy) {
			low = MIN(low, h->reads[i].off);
		}
	}
	return low;
}

static void sim_fail(const struct sim *sm, const char *what)
{
	const struct harness *h = sm->h;

	fail_msg("seed 0x%016" PRIx64 " op %" PRIu64 ": %s (front %" PRIu64
		 " dropped_to %" PRIu64 " window %" PRIu64 " low %" PRIu64
		 " in flight %u); rerun with CG_TEST_SEED=0x%" PRIx64,
		 sm->p->seed,
		 sm->op,
		 what,
		 h->s.seq.front,
		 h->s.dropped_to,
		 h->cfg.window,
		 lowest_in_flight(h),
		 h->nbusy,
		 sm->p->seed);
}

/* front - dropped_to, or 0 when old completions pushed drops past it */
static uint64_t retained(const struct harness *h)
{
	if (h->s.dropped_to >= h->s.seq.front) {
		return 0;
	}
	return h->s.seq.front - h->s.dropped_to;
}

static void sim_check_bound(struct sim *sm, struct sim_totals *t)
{
	const struct harness *h = sm->h;
	uint64_t w = h->cfg.window;
	uint64_t low = MIN(lowest_in_flight(h), sm->s_low);
	uint64_t span = 0;

	if (h->s.state != CG_ACTIVE || h->s.seq.start != sm->p_start ||
	    h->s.stats.streams != sm->p_streams) {
		sm->have_p = false;
	}
	if (!sm->have_p) {
		return;
	}
	if (low < h->s.seq.front) {
		span = h->s.seq.front - low;
	}
	if (retained(h) >= 3 * w + span) {
		sim_fail(sm, "retained range beyond 3 windows + span");
	}
	t->bound_checks++;
	t->max_retained = MAX(t->max_retained, retained(h) / w);
}

static void sim_end(struct sim *sm, struct sim_totals *t, unsigned i)
{
	struct harness *h = sm->h;
	struct read *r = &h->reads[i];
	/* The engine's own field: did this completion run the gap rule? */
	uint64_t contig = h->s.done.contig;
	uint64_t off = r->off;
	bool in_stream = r->io.in_stream;
	ssize_t got = file_read_len(h, r->off, r->n);
	uint64_t w = h->cfg.window;
	uint64_t low, span = 0;

	if (rng_below(&sm->rng, 1000) < sm->p->fail_pm) {
		got = -1;
		t->failures++;
	}
	rd_end(h, i, got);
	if (h->violation[0] != '\0') {
		sim_fail(sm, h->violation);
	}
	if (!in_stream || got <= 0 || h->s.state != CG_ACTIVE ||
	    h->noverflow > 0 || off + (uint64_t)got <= contig) {
		sm->s_low = MIN(sm->s_low, off);
		return;
	}
	/* A drop opportunity: the exact bound */
	t->opportunities++;
	low = lowest_in_flight(h);
	if (low < h->s.seq.front) {
		span = h->s.seq.front - low;
	}
	if (retained(h) >= w + MAX(w, span)) {
		sim_fail(sm, "retained range beyond window + max(window, "
			     "span) at a drop opportunity");
	}
	sm->have_p = true;
	sm->p_start = h->s.seq.start;
	sm->p_streams = h->s.stats.streams;
	sm->s_low = UINT64_MAX;
}

static unsigned sim_stray(struct sim *sm)
{
	struct harness *h = sm->h;
	size_t n = 4 * KiB + rng_below(&sm->rng, 60 * KiB + 1);
	uint64_t off = rng_below(&sm->rng, h->file_size);

	return rd_begin(h, off, n);
}

static void sim_run(struct harness *h,
		    const struct sim_params *p,
		    struct sim_totals *t)
{
	struct sim sm = {.h = h, .p = p, .rng = {.s = p->seed}};
	uint64_t nplan = (p->file_size + p->rsize - 1) / p->rsize;
	unsigned g = (unsigned)MAX(1, p->window / p->rsize);
	unsigned *plan = NULL;
	unsigned pool[MAX_READS];
	unsigned npool = 0, burst = 0;
	uint64_t next = 0, first, j;

	h_reset(h);
	snprintf(h->ctx,
		 sizeof(h->ctx),
		 "seed 0x%016" PRIx64 ": ",
		 p->seed);
	h->cfg.window = p->window;
	h->cfg.stream_trigger = p->trigger;
	h->cfg.readahead = p->readahead;
	h_start(h, p->file_size);

	/* Issue order: windows in order, reads shuffled inside each */
	plan = calloc(nplan, sizeof(plan[0]));
	assert_non_null(plan);
	for (j = 0; j < nplan; j++) {
		plan[j] = (unsigned)j;
	}
	for (first = 0; first < nplan; first += g) {
		shuffle(&sm.rng, plan + first, (unsigned)MIN(g, nplan - first));
	}

	while (next < nplan || npool > 0) {
		bool issue = next < nplan && npool < p->depth &&
			     (npool == 0 ||
			      rng_below(&sm.rng, 1000) < p->issue_pm);

		sm.op++;
		if (issue) {
			unsigned i;

			if (burst == 0 &&
			    rng_below(&sm.rng, 1000) < p->burst_pm) {
				burst = STRAY_LIMIT +
					(unsigned)rng_below(&sm.rng, 5);
			}
			if (burst > 0) {
				burst--;
				i = sim_stray(&sm);
			} else if (rng_below(&sm.rng, 1000) < p->stray_pm) {
				i = sim_stray(&sm);
			} else {
				i = rd_begin(h,
					     plan[next++] * (uint64_t)p->rsize,
					     p->rsize);
			}
			if (h->reads[i].overflow) {
				t->overflows++;
			}
			pool[npool++] = i;
		} else {
			unsigned k = (unsigned)rng_below(&sm.rng, npool);
			unsigned i = pool[k];

			pool[k] = pool[--npool];
			sim_end(&sm, t, i);
		}
		if (h->violation[0] != '\0') {
			sim_fail(&sm, h->violation);
		}
		sim_check_bound(&sm, t);
	}
	free(plan);

	h_close(h);
	if (h->violation[0] != '\0') {
		sim_fail(&sm, h->violation);
	}
	t->drops += count_advice(h, POSIX_FADV_DONTNEED);
	if (h->s.stats.streams > 1) {
		t->restarts += h->s.stats.streams - 1;
	}
	t->runs++;
}

static void sim_random_params(uint64_t seed, struct sim_params *p)
{
	const uint64_t windows[] = {256 * KiB, MiB, 4 * MiB, 8 * MiB};
	const size_t rsizes[] = {60 * KiB, 64 * KiB, 128 * KiB, MiB};
	const uint64_t ras[] = {0, 0, 4 * MiB, 16 * MiB};
	struct rng rng = {.s = seed ^ 0x6a09e667f3bcc909ULL};
	uint64_t nplan;

	*p = (struct sim_params){.seed = seed};
	p->window = windows[rng_below(&rng, N_ELEM(windows))];
	p->rsize = rsizes[rng_below(&rng, N_ELEM(rsizes))];
	p->rsize = (size_t)MIN((uint64_t)p->rsize, p->window);
	nplan = 64 + rng_below(&rng, 577);
	/* The last read comes back short */
	p->file_size = nplan * p->rsize - rng_below(&rng, p->rsize);
	switch (rng_below(&rng, 3)) {
	case 0:
		p->trigger = p->rsize;
		break;
	case 1:
		p->trigger = 4 * MiB;
		break;
	default:
		p->trigger = 2 * p->window;
		break;
	}
	p->readahead = ras[rng_below(&rng, N_ELEM(ras))];
	p->depth = 1 + (unsigned)rng_below(&rng, CG_FLIGHT_SLOTS + 8);
	p->issue_pm = 300 + (unsigned)rng_below(&rng, 601);
	p->stray_pm = (unsigned)rng_below(&rng, 31);
	p->burst_pm = (unsigned)rng_below(&rng, 6);
	p->fail_pm = (unsigned)rng_below(&rng, 11);
}

/* One long run with a fixed seed: a 4 GiB copy at the deepest queue */
static void test_property_fixed_seed(void **state)
{
	struct harness *h = *state;
	struct sim_totals t = {0};
	const struct sim_params p = {
		.seed = 0xcac4e6ad0001ULL,
		.file_size = 4 * GiB - 12345,
		.window = 8 * MiB,
		.trigger = 4 * MiB,
		.readahead = 16 * MiB,
		.rsize = MiB,
		.depth = CG_FLIGHT_SLOTS + 8,
		.issue_pm = 500,
		.stray_pm = 10,
		.burst_pm = 1,
		.fail_pm = 5,
	};

	sim_run(h, &p, &t);
	/* The run did what it is meant to: drops under pressure */
	assert_true(t.drops > 50);
	assert_true(t.opportunities > 500);
	assert_true(t.bound_checks > t.opportunities);
	assert_true(t.overflows > 0);
	assert_true(t.failures > 0);
}

/*
 * Several thousand clients, each from its own seed (derived from one
 * fixed master seed). CG_TEST_SEED=0x... replays a single one.
 */
static void test_property_many(void **state)
{
	struct harness *h = *state;
	struct sim_totals t = {0};
	struct sim_params p;
	struct rng master = {.s = 0x5eedcac4e6a2dULL};
	const char *env = getenv("CG_TEST_SEED");
	unsigned runs = 4000;
	unsigned i;

	if (env != NULL) {
		sim_random_params(strtoull(env, NULL, 0), &p);
		sim_run(h, &p, &t);
		return;
	}
	for (i = 0; i < runs; i++) {
		sim_random_params(rng_next(&master), &p);
		sim_run(h, &p, &t);
	}
	print_message("%" PRIu64 " runs, %" PRIu64 " drops, %" PRIu64
		      " drop opportunities, %" PRIu64 " bound checks, %" PRIu64
		      " restarts, %" PRIu64 " untracked reads, %" PRIu64
		      " failed reads, retained at most %" PRIu64 " windows\n",
		      t.runs,
		      t.drops,
		      t.opportunities,
		      t.bound_checks,
		      t.restarts,
		      t.overflows,
		      t.failures,
		      t.max_retained);
	/* Not vacuous: every situation the property covers happened */
	assert_true(t.drops > runs);
	assert_true(t.bound_checks > t.opportunities);
	assert_true(t.restarts > 0);
	assert_true(t.overflows > 0);
	assert_true(t.failures > 0);
}

/*
 * Who reads ahead (cg_stream.c, "Who reads ahead"): the kernel for the
 * streams the server's readahead budget holds, each stream on its own
 * beyond it. The harness above has one stream on one descriptor; these
 * tests have several, with a fixture of their own.
 *
 * The budget is a real lock file (OFD locks, as in the server), so
 * streams here exclude each other as those of two smbd processes do.
 * Each stream reads on a descriptor number of its own, and the fake
 * fadvise counts the hints per descriptor: a stream with the kernel's
 * readahead gets FADV_SEQUENTIAL, no FADV_RANDOM and no WILLNEED; one
 * beyond the budget gets RANDOM and WILLNEED. Through the cache both
 * read in pieces dropped as read. Every
 * hint is undone (FADV_NORMAL) when the stream ends.
 */

#define NSTREAMS 4
/* Stream i reads on descriptor FD0 + i */
#define FD0 100

struct ra_hints {
	unsigned random, sequential, normal, willneed;
};

static struct {
	struct cg_test_lock lock;	/* the budget file */
	struct ra_hints h[NSTREAMS];
} rb;

static int rb_fadvise(int fd, uint64_t off, uint64_t len, int advice)
{
	struct ra_hints *h = NULL;

	assert_true(fd >= FD0 && fd < FD0 + NSTREAMS);
	h = &rb.h[fd - FD0];
	if (advice == POSIX_FADV_RANDOM) {
		h->random++;
	} else if (advice == POSIX_FADV_SEQUENTIAL) {
		h->sequential++;
	} else if (advice == POSIX_FADV_NORMAL) {
		h->normal++;
	} else if (advice == POSIX_FADV_WILLNEED) {
		h->willneed++;
	}
	return 0;
}

static int rb_open(void)
{
	return cg_test_lock_open(&rb.lock);
}

static const struct cg_sys rb_sys = {
	.fadvise = rb_fadvise,
	.resident = cg_test_cold,
	.ra_open = rb_open,
};

static struct cg_config rb_cfg;
static struct cg_stream rb_s[NSTREAMS];

static int rb_setup(void **state)
{
	if (cg_test_lock_new(&rb.lock, "test-ra") == -1) {
		return -1;
	}
	memset(rb.h, 0, sizeof(rb.h));
	cg_config_init(&rb_cfg);
	rb_cfg.mode = CG_MODE_DONTNEED;
	return 0;
}

static int rb_teardown(void **state)
{
	unlink(rb.lock.path);
	return 0;
}

static void rb_start(unsigned i, enum cg_via via, uint64_t kernel_ra)
{
	cg_stream_init(&rb_s[i], &rb_cfg, &rb_sys, GiB);
	rb_s[i].kernel_ra = kernel_ra;
	cg_stream_set_via(&rb_s[i], FD0 + i, via);
}

/* Reads of 1 MiB from off to end, one at a time; the last read's io */
static struct cg_io rb_read_to(unsigned i, uint64_t off, uint64_t end)
{
	struct cg_io io = {0};

	for (; off < end; off += MiB) {
		io = cg_read_begin(&rb_s[i], FD0 + i, off, MiB);
		io.uncached = rb_s[i].via != CG_VIA_CACHE;
		cg_read_end(&rb_s[i], FD0 + i, &io, MiB);
	}
	return io;
}

static void rb_close(unsigned i)
{
	cg_stream_close(&rb_s[i], FD0 + i);
}

static bool rb_kernel_ra(unsigned i)
{
	return rb_s[i].ra_fd != -1;
}

/*
 * Stream i, read to 32M through the cache, is active and drops its pieces:
 * granted, with the kernel's readahead doubled (FADV_SEQUENTIAL, once);
 * not granted, on its own (FADV_RANDOM once, then WILLNEED)
 */
static void rb_check_granted(unsigned i, bool granted)
{
	struct cg_io io = rb_read_to(i, 0, 32 * MiB);

	assert_int_equal(rb_s[i].state, CG_ACTIVE);
	assert_int_equal(rb_kernel_ra(i), granted);
	assert_true(io.drop_pieces);
	assert_int_equal(rb.h[i].random, !granted);
	assert_int_equal(rb.h[i].sequential, granted);
	assert_int_equal(rb.h[i].willneed > 0, !granted);
	assert_int_equal(rb_s[i].stats.ra_granted, granted);
}

/*
 * The default 32M holds one stream at read_ahead_kb 8192 (two windows
 * of 16 MiB with FADV_SEQUENTIAL): the first keeps the kernel's
 * readahead, the second reads ahead on its own; when the first ends, a
 * new stream gets its room.
 */
static void test_budget_holds_one(void **state)
{
	struct cg_io io;

	assert_int_equal(rb_cfg.readahead_memory, 32 * MiB);
	rb_start(0, CG_VIA_CACHE, 8 * MiB);
	rb_start(1, CG_VIA_CACHE, 8 * MiB);

	rb_check_granted(0, true);
	rb_check_granted(1, false);

	rb_close(0);
	assert_false(rb_kernel_ra(0));
	assert_int_equal(rb.h[0].normal, 1);
	rb_start(2, CG_VIA_CACHE, 8 * MiB);
	io = rb_read_to(2, 0, 32 * MiB);
	assert_true(rb_kernel_ra(2));
	assert_true(io.drop_pieces);

	rb_close(1);
	rb_close(2);
	/* each gets the kernel's usual readahead back */
	assert_int_equal(rb.h[1].normal, 1);
	assert_int_equal(rb.h[2].normal, 1);
	assert_int_equal(rb.h[2].random, 0);
}

/* What a stream costs follows the device: 128 KiB readahead, 512 KiB */
static void test_budget_follows_device(void **state)
{
	unsigned i;

	rb_cfg.readahead_memory = 2 * MiB;
	for (i = 0; i < NSTREAMS; i++) {
		rb_start(i, CG_VIA_CACHE, 128 * KiB);
		rb_read_to(i, 0, 16 * MiB);
		assert_true(rb_kernel_ra(i));
	}
	/* unknown (0): the engine's 4 MiB guess, 16 MiB each: two fit */
	rb_cfg.readahead_memory = 32 * MiB;
	for (i = 0; i < NSTREAMS; i++) {
		rb_close(i);
	}
	for (i = 0; i < NSTREAMS; i++) {
		rb_start(i, CG_VIA_CACHE, 0);
		rb_read_to(i, 0, 16 * MiB);
		assert_int_equal(rb_kernel_ra(i), i < 2);
	}
	for (i = 0; i < NSTREAMS; i++) {
		rb_close(i);
	}
}

/*
 * No budget (readahead memory = 0), no budget file, or readahead = 0
 * (the kernel's for every stream, nothing asked): nothing is granted
 */
static void test_budget_none(void **state)
{
	struct cg_io io;

	rb_cfg.readahead_memory = 0;
	rb_start(0, CG_VIA_CACHE, 8 * MiB);
	rb_read_to(0, 0, 32 * MiB);
	assert_false(rb_kernel_ra(0));
	assert_int_equal(rb.h[0].random, 1);
	rb_close(0);

	rb_cfg.readahead_memory = 32 * MiB;
	rb.lock.fail = EMFILE;
	rb_start(1, CG_VIA_CACHE, 8 * MiB);
	io = rb_read_to(1, 0, 32 * MiB);
	assert_false(rb_kernel_ra(1));
	assert_true(io.drop_pieces);
	rb_close(1);
	rb.lock.fail = 0;

	rb_cfg.readahead = 0;
	rb_start(2, CG_VIA_CACHE, 8 * MiB);
	io = rb_read_to(2, 0, 32 * MiB);
	assert_false(rb_kernel_ra(2));
	assert_int_equal(rb.h[2].random, 0);
	assert_int_equal(rb.h[2].willneed, 0);
	rb_close(2);
}

/*
 * Paths: dontcache keeps the kernel's readahead too (its readahead is
 * uncached, Linux 6.16+); a direct stream takes no
 * room, and one that moves to the direct path gives its room back.
 */
static void test_budget_paths(void **state)
{
	struct cg_io io;

	rb_start(0, CG_VIA_DONTCACHE, 8 * MiB);
	io = rb_read_to(0, 0, 32 * MiB);
	assert_true(rb_kernel_ra(0));
	assert_false(io.drop_pieces);	/* the kernel drops them */
	assert_int_equal(rb.h[0].sequential, 1);
	assert_int_equal(rb.h[0].random, 0);

	rb_start(1, CG_VIA_DIRECT, 8 * MiB);
	rb_read_to(1, 0, 32 * MiB);
	assert_false(rb_kernel_ra(1));

	cg_stream_set_via(&rb_s[0], FD0, CG_VIA_DIRECT);
	assert_false(rb_kernel_ra(0));
	rb_start(2, CG_VIA_CACHE, 8 * MiB);
	rb_read_to(2, 0, 32 * MiB);
	assert_true(rb_kernel_ra(2));

	rb_close(0);
	rb_close(1);
	rb_close(2);
}

/* A stream read to its end gives its room back before the close */
static void test_budget_eof(void **state)
{
	rb_cfg.readahead_memory = 32 * MiB;
	rb_start(0, CG_VIA_CACHE, 8 * MiB);
	rb_start(1, CG_VIA_CACHE, 8 * MiB);
	rb_read_to(0, 0, 32 * MiB);
	assert_true(rb_kernel_ra(0));
	rb_read_to(0, 32 * MiB, GiB);
	assert_false(rb_kernel_ra(0));
	rb_read_to(1, 0, 32 * MiB);
	assert_true(rb_kernel_ra(1));
	rb_close(0);
	rb_close(1);
}

/* A stream that restarts far away gives its room back, then asks again */
static void test_budget_restart(void **state)
{
	unsigned k;

	rb_start(0, CG_VIA_CACHE, 8 * MiB);
	rb_start(1, CG_VIA_CACHE, 8 * MiB);
	rb_read_to(0, 0, 32 * MiB);
	assert_true(rb_kernel_ra(0));
	/* eight far reads end stream 0: its room is free for stream 1 */
	for (k = 0; k < 8; k++) {
		struct cg_io io = cg_read_begin(&rb_s[0], FD0,
						600 * MiB + k * 32 * MiB,
						64 * KiB);

		cg_read_end(&rb_s[0], FD0, &io, 64 * KiB);
	}
	assert_int_equal(rb_s[0].state, CG_DETECTING);
	assert_false(rb_kernel_ra(0));
	rb_read_to(1, 0, 32 * MiB);
	assert_true(rb_kernel_ra(1));
	rb_close(0);
	rb_close(1);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
#define RB(f) cmocka_unit_test_setup_teardown(f, rb_setup, rb_teardown)

CG_TEST_MAIN(NULL, NULL,
	     T(test_inorder),
	     T(test_reordered),
	     T(test_windows_replay),
	     T(test_random_never_activates),
	     T(test_mixed),
	     T(test_hot_file),
	     T(test_hot_bounded),
	     T(test_hot_state),
	     T(test_readahead),
	     T(test_own_readahead_lifecycle),
	     T(test_own_readahead_paths),
	     T(test_own_readahead_covers_a_read),
	     T(test_strays_keep_stream),
	     T(test_strays_restart),
	     T(test_close),
	     T(test_close_drops_own_ranges),
	     T(test_uncached_hints),
	     T(test_dontcache_cold_or_shared),
	     T(test_redrop),
	     T(test_inflight_overflow),
	     T(test_failed_read),
	     T(test_short_read_at_eof),
	     T(test_zero_length_reads),
	     T(test_late_read_within_window),
	     T(test_reads_below_start_dropped),
	     T(test_deep_queue_keeps_dropping),
	     T(test_restart_tail_covers_readahead),
	     T(test_stray_completion_releases_drops),
	     T(test_property_fixed_seed),
	     T(test_property_many),
	     RB(test_budget_holds_one),
	     RB(test_budget_follows_device),
	     RB(test_budget_none),
	     RB(test_budget_paths),
	     RB(test_budget_restart),
	     RB(test_budget_eof))
