/*
 * vfs_cacheguard unit tests: the prefetch segment table (cg_prefetch.c)
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
 * The prefetch table is driven the way the glue drives it, against a
 * model file whose bytes are a function of (offset, generation). A fill
 * the table asks for is "started" by taking the file's version and bytes
 * at that moment (the earliest a thread could read them, so the stalest
 * outcome) and "completed" later, in whatever order a test chooses.
 * Writes come in two kinds: through this smbd (the glue calls
 * cg_prefetch_invalidate and the version changes) and from elsewhere
 * (only the version changes). Every byte the table hands out is compared
 * with the model file as it is at that moment.
 */

#include <stdint.h>
#include <errno.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cg_model_file.h"
#include "cg_prefetch.h"
#include "cg_sys.h"
#include "cg_test.h"

/*
 * Every byte a HIT hands out is copied through the syscall layer's copy
 * (cg_sys_copy): the module's makes it the kernel's (cg_sys.c)
 */
static size_t sys_copied;

static void count_copy(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
	sys_copied += n;
}

static const struct cg_sys counting_sys = {.copy = count_copy};

struct geom_case {
	uint64_t ahead;
	size_t align;
	size_t seg;
	unsigned nseg;
};

static const struct geom_case geom_cases[] = {
	{8 * MiB, 4096, 1 * MiB, 8},
	{64 * MiB, 512, 1 * MiB, 64},
	{256 * MiB, 512, 4 * MiB, 64},
	{4 * MiB, 512, 1 * MiB, 4},
	{3 * MiB, 512, 512 * KiB, 6},
	{1 * MiB, 512, 256 * KiB, 4},
	{100 * KiB, 512, 64 * KiB, 2},
	{4 * KiB, 4096, 64 * KiB, 1},
	{1 * MiB, 2 * MiB, 2 * MiB, 1},	/* alignment wins */
	{0, 4096, 0, 0},
};

static void test_geometry(void **state)
{
	size_t i;

	for (i = 0; i < N_ELEM(geom_cases); i++) {
		const struct geom_case *c = &geom_cases[i];
		struct cg_prefetch pf;

		cg_prefetch_init(&pf, c->ahead, c->align);
		if (pf.seg_size != c->seg || pf.nseg != c->nseg) {
			fail_msg("case %zu: %zu x %u, want %zu x %u", i,
				 pf.seg_size, pf.nseg, c->seg, c->nseg);
		}
		assert_int_equal(cg_prefetch_memory(&pf), c->seg * c->nseg);
		assert_true(cg_prefetch_memory(&pf) >= c->ahead);
	}
}

struct devseg_case {
	uint64_t ahead;
	size_t align;
	uint64_t max_request;
	size_t want;
};

static const struct devseg_case devseg_cases[] = {
	{8 * MiB, 2 * MiB, 4 * MiB, 4 * MiB},	 /* virtio-blk: 4096 KiB */
	{8 * MiB, 2 * MiB, 1280 * KiB, 2 * MiB}, /* SATA: the page wins */
	{8 * MiB, 2 * MiB, 0, 2 * MiB},		 /* no queue (btrfs, tmpfs) */
	{64 * MiB, 2 * MiB, 32767 * KiB, 8 * MiB}, /* at most the cap */
	{64 * MiB, 2 * MiB, 5 * MiB, 8 * MiB},	 /* a power of two */
	{4 * MiB, 2 * MiB, 4 * MiB, 2 * MiB},	 /* two of them at least */
	{1 * MiB, 2 * MiB, 4 * MiB, 2 * MiB},	 /* never below align */
	{8 * MiB, 4096, 0, 2 * MiB},		 /* a huge page at least */
	{8 * MiB, 4096, 4 * MiB, 4 * MiB},	 /* ... growing from there */
	{64 * MiB, 4 * MiB, 0, 4 * MiB},	 /* align above a huge page */
	{0, 4096, 4 * MiB, 2 * MiB},		 /* no prefetch */
};

static void test_device_segment(void **state)
{
	size_t i;

	for (i = 0; i < N_ELEM(devseg_cases); i++) {
		const struct devseg_case *c = &devseg_cases[i];
		size_t got = cg_prefetch_align(c->ahead, c->align,
					       c->max_request);
		struct cg_prefetch pf;

		if (got != c->want) {
			fail_msg("case %zu: %zu, want %zu", i, got, c->want);
		}
		/* the table is made of segments of that size */
		cg_prefetch_init(&pf, c->ahead, got);
		if (c->ahead > 0) {
			assert_int_equal(pf.seg_size, got);
		}
	}
}

/* ---- the model file and the fill harness -------------------------- */

#define MAX_FILLS CG_PREFETCH_MAX_SEGS

struct fill {
	unsigned slot;
	uint64_t off;
	size_t len;
	ssize_t got;
	struct cg_pf_version ver;
};

/* A HIT pinned for a copy by a thread that has not run yet */
#define MAX_COPIES 8

struct copy {
	uint64_t off;
	size_t n;
	struct cg_pf_piece pieces[CG_PREFETCH_MAX_SEGS + 1];
	unsigned np;
};

struct harness {
	struct cg_prefetch pf;
	uint8_t *mem;
	struct cg_model_file m;		/* size; clock and ctime, coarse */
	uint64_t gen;			/* bumped by every write */
	bool coarse;			/* ctime from a ticking clock */
	uint8_t *file;			/* its bytes */
	struct fill fills[MAX_FILLS];	/* started, not completed */
	unsigned nfills;
	uint64_t keep;			/* lowest waiting request */
	uint64_t hits, pendings, misses;
	struct copy copies[MAX_COPIES];	/* pinned, not yet copied */
	unsigned ncopies;
	uint64_t stale_copies;
};

/*
 * By default every write moves ctime (multigrain timestamps), and the
 * clock is long past it. A coarse harness stamps writes with its clock,
 * which only the test moves: two writes in one tick share a ctime.
 */
static struct cg_pf_version h_version(const struct harness *h)
{
	if (h->coarse) {
		return cg_model_version(&h->m);
	}
	return (struct cg_pf_version){.ctime_ns = 1000 + h->gen,
				      .size = h->m.size,
				      .clock_ns = 1000000000000ULL};
}

static void h_init(struct harness *h, uint64_t ahead, uint64_t size,
		   uint64_t cap)
{
	uint64_t i;

	*h = (struct harness){.m.size = size, .keep = UINT64_MAX};
	cg_prefetch_init(&h->pf, ahead, 4096);
	h->mem = calloc(1, cg_prefetch_memory(&h->pf) + 1);
	h->file = malloc(cap);
	assert_non_null(h->mem);
	assert_non_null(h->file);
	for (i = 0; i < cap; i++) {
		h->file[i] = (uint8_t)(i * 7 + (i >> 9));
	}
}

static void h_free(struct harness *h)
{
	free(h->mem);
	free(h->file);
}

/* Start every fill the table asks for: read the model file now */
static void h_start_fills(struct harness *h)
{
	unsigned slot, i;
	uint64_t off;
	size_t len;

	while (cg_prefetch_next_fill(&h->pf, h->m.size, h->keep, &slot, &off,
				     &len)) {
		struct fill *f = &h->fills[h->nfills];

		for (i = 0; i < h->nfills; i++) {
			assert_int_not_equal(h->fills[i].slot, slot);
		}
		for (i = 0; i < h->ncopies; i++) {
			unsigned k;

			for (k = 0; k < h->copies[i].np; k++) {
				assert_int_not_equal(
					h->copies[i].pieces[k].slot, slot);
			}
		}
		assert_true(h->nfills < MAX_FILLS);
		assert_int_equal(off % h->pf.seg_size, 0);
		*f = (struct fill){.slot = slot, .off = off, .len = len,
				   .ver = h_version(h)};
		f->got = (ssize_t)cg_model_pread_len(h->m.size, off, len);
		memcpy(h->mem + (size_t)slot * h->pf.seg_size,
		       h->file + off, (size_t)f->got);
		h->nfills++;
	}
}

static void h_complete(struct harness *h, unsigned i)
{
	struct fill f = h->fills[i];

	h->fills[i] = h->fills[--h->nfills];
	cg_prefetch_filled(&h->pf, f.slot, f.got, &f.ver);
}

static void h_complete_all(struct harness *h)
{
	while (h->nfills > 0) {
		h_complete(h, 0);
	}
}

/* A write of n bytes at off; through smbd also tells the table */
static void h_write(struct harness *h, uint64_t off, uint64_t n, bool smbd)
{
	uint64_t i;

	if (smbd) {
		cg_prefetch_invalidate(&h->pf, off, n);
	}
	for (i = off; i < off + n; i++) {
		h->file[i] ^= 0x5a;
	}
	if (off + n > h->m.size) {
		h->m.size = off + n;
	}
	h->gen++;
	cg_model_stamp(&h->m);
	if (smbd) {
		cg_prefetch_invalidate(&h->pf, off, n);
	}
}

/*
 * One request as the glue serves it: validate, look up; a HIT is pinned,
 * copied out if current, unpinned, and checked against the file now.
 * Returns the lookup's answer.
 */
static enum cg_pf_lookup h_read(struct harness *h, uint64_t off, size_t n)
{
	struct cg_pf_version now = h_version(h);
	struct cg_pf_piece pieces[CG_PREFETCH_MAX_SEGS + 1];
	enum cg_pf_lookup r;
	size_t avail = 0;
	size_t got;
	unsigned np;
	uint8_t *dst = NULL;

	cg_prefetch_note_read(&h->pf, off, n);
	cg_prefetch_validate(&h->pf, &now);
	r = cg_prefetch_lookup(&h->pf, off, n, &avail);
	if (r == CG_PF_HIT) {
		dst = malloc(n);
		assert_non_null(dst);
		sys_copied = 0;
		np = cg_prefetch_pin(&h->pf, off, n, pieces, N_ELEM(pieces));
		/* validated just now: every piece is the file's version */
		assert_true(cg_prefetch_pieces_current(pieces, np, &now));
		got = cg_prefetch_copy_pieces(&counting_sys, h->mem, pieces,
					      np, dst);
		cg_prefetch_unpin(&h->pf, pieces, np, true);
		assert_int_equal(sys_copied, got);
		assert_int_equal(got, avail);
		assert_int_equal(got, cg_model_pread_len(h->m.size, off, n));
		if (memcmp(dst, h->file + off, got) != 0) {
			fail_msg("stale or wrong bytes at %" PRIu64 "+%zu",
				 off, n);
		}
		free(dst);
		h->hits++;
	} else if (r == CG_PF_PENDING) {
		h->pendings++;
	} else {
		h->misses++;
	}
	return r;
}

/*
 * Copy job i runs now: the file's version then, the pieces copied only
 * if they are current, and then they must be exactly the file's bytes
 */
static void h_copy(struct harness *h, unsigned i)
{
	struct copy c = h->copies[i];
	struct cg_pf_version now = h_version(h);
	bool ok = cg_prefetch_pieces_current(c.pieces, c.np, &now);
	uint8_t *dst = NULL;
	size_t got;

	h->copies[i] = h->copies[--h->ncopies];
	if (ok) {
		dst = malloc(c.n);
		assert_non_null(dst);
		sys_copied = 0;
		got = cg_prefetch_copy_pieces(&counting_sys, h->mem, c.pieces,
					      c.np, dst);
		assert_int_equal(sys_copied, got);
		assert_int_equal(got,
				 cg_model_pread_len(h->m.size, c.off, c.n));
		if (memcmp(dst, h->file + c.off, got) != 0) {
			fail_msg("stale or wrong bytes copied at %" PRIu64
				 "+%zu", c.off, c.n);
		}
		free(dst);
		h->hits++;
	} else {
		h->stale_copies++;
	}
	cg_prefetch_validate(&h->pf, &now);
	cg_prefetch_unpin(&h->pf, c.pieces, c.np, ok);
}

/*
 * A request as the glue serves it asynchronously: look up (no version
 * check on the event loop) and, on a HIT, pin its pieces for a copy job
 * that runs later (h_copy). Returns the lookup's answer.
 */
static enum cg_pf_lookup h_pin(struct harness *h, uint64_t off, size_t n)
{
	struct copy *c = NULL;
	enum cg_pf_lookup r;
	size_t avail = 0;
	size_t sum = 0;
	unsigned i;

	if (h->ncopies == MAX_COPIES) {
		h_copy(h, 0);
	}
	c = &h->copies[h->ncopies];
	cg_prefetch_note_read(&h->pf, off, n);
	r = cg_prefetch_lookup(&h->pf, off, n, &avail);
	if (r != CG_PF_HIT) {
		return r;
	}
	*c = (struct copy){.off = off, .n = n};
	c->np = cg_prefetch_pin(&h->pf, off, n, c->pieces,
				(unsigned)N_ELEM(c->pieces));
	for (i = 0; i < c->np; i++) {
		sum += c->pieces[i].len;
	}
	assert_int_equal(sum, avail);
	h->ncopies++;
	return r;
}

/* Serve a request fully: wait (complete fills) while PENDING */
static enum cg_pf_lookup h_serve(struct harness *h, uint64_t off, size_t n)
{
	enum cg_pf_lookup first = h_read(h, off, n);
	enum cg_pf_lookup r = first;

	while (r == CG_PF_PENDING) {
		assert_true(h->nfills > 0);
		h_complete(h, 0);
		r = h_read(h, off, n);
	}
	h_start_fills(h);
	return first;
}

/* ---- lookup on hand-made tables ------------------------------------ */

struct lookup_case {
	uint64_t off;
	size_t n;
	enum cg_pf_lookup want;
	size_t avail;
};

/*
 * Segments of 1 MiB: [0,1M) READY, [1M,2M) READY, [2M,3M) LOADING,
 * [5M,6M) READY short (end of file at 5M + 1000), [6M,7M) READY empty.
 */
static void lookup_table(struct cg_prefetch *pf)
{
	static const struct cg_pf_version v = {1, 5 * MiB + 1000, 1000000000};

	cg_prefetch_init(pf, 8 * MiB, 4096);
	pf->seg[0] = (struct cg_pf_seg){.state = CG_PF_READY, .off = 0,
					.len = MiB, .ver = v};
	pf->seg[3] = (struct cg_pf_seg){.state = CG_PF_READY, .off = MiB,
					.len = MiB, .ver = v};
	pf->seg[5] = (struct cg_pf_seg){.state = CG_PF_LOADING,
					.off = 2 * MiB};
	pf->seg[6] = (struct cg_pf_seg){.state = CG_PF_READY,
					.off = 5 * MiB, .len = 1000, .ver = v};
	pf->seg[7] = (struct cg_pf_seg){.state = CG_PF_READY,
					.off = 6 * MiB, .len = 0, .ver = v};
}

static const struct lookup_case lookup_cases[] = {
	{0, 1, CG_PF_HIT, 1},
	{0, MiB, CG_PF_HIT, MiB},
	{MiB - 1, 2, CG_PF_HIT, 2},		/* across two segments */
	{4095, 2 * MiB - 4095, CG_PF_HIT, 2 * MiB - 4095},
	{2 * MiB - 1, 2, CG_PF_PENDING, 0},	/* half loading */
	{2 * MiB + 5, 100, CG_PF_PENDING, 0},
	{2 * MiB, 2 * MiB, CG_PF_MISS, 0},	/* loading, then nothing */
	{3 * MiB, 1, CG_PF_MISS, 0},
	{4 * MiB, 2 * MiB, CG_PF_MISS, 0},	/* head not covered */
	{5 * MiB, 1000, CG_PF_HIT, 1000},
	{5 * MiB + 999, 4097, CG_PF_HIT, 1},	/* short at end of file */
	{5 * MiB + 1000, 1, CG_PF_HIT, 0},	/* at end of file */
	{5 * MiB + 4096, 511, CG_PF_HIT, 0},	/* past it */
	{6 * MiB + 7, 8 * MiB, CG_PF_HIT, 0},
	{7 * MiB, 1, CG_PF_MISS, 0},
};

static void test_lookup_table(void **state)
{
	struct cg_prefetch pf;
	size_t i;

	lookup_table(&pf);
	for (i = 0; i < N_ELEM(lookup_cases); i++) {
		const struct lookup_case *c = &lookup_cases[i];
		size_t avail = 0;
		enum cg_pf_lookup r;

		r = cg_prefetch_lookup(&pf, c->off, c->n, &avail);
		if (r != c->want || (r == CG_PF_HIT && avail != c->avail)) {
			fail_msg("case %zu: %d avail %zu, want %d avail %zu",
				 i, r, avail, c->want, c->avail);
		}
	}
}

/* ---- streams -------------------------------------------------------- */

/* In order, request sizes from tiny to larger than the table */
static void test_in_order(void **state)
{
	static const size_t req[] = {64 * KiB, 100 * KiB + 3, MiB, 4 * MiB,
				     8 * MiB, 12 * MiB};
	size_t r;

	for (r = 0; r < N_ELEM(req); r++) {
		struct harness h;
		uint64_t size = 64 * MiB + 4097;
		uint64_t off = 0;
		unsigned n = 0;

		h_init(&h, 8 * MiB, size, size);
		while (off < size + req[r]) {
			h_serve(&h, off, req[r]);
			off += req[r];
			n++;
		}
		if (req[r] < 8 * MiB && h.misses > 2) {
			fail_msg("%zu-byte requests: %" PRIu64 " misses of %u",
				 req[r], h.misses, n);
		}
		/* larger than the table: no fill could ever serve one */
		if (req[r] > 8 * MiB && h.pf.fills > 0) {
			fail_msg("%zu-byte requests: %" PRIu64 " useless fills",
				 req[r], h.pf.fills);
		}
		h_free(&h);
	}
}

/* Pairs of requests swapped, as an SMB2 client with two in flight */
static void test_reordered(void **state)
{
	struct harness h;
	uint64_t size = 48 * MiB;
	size_t n = 512 * KiB;
	uint64_t off;

	h_init(&h, 8 * MiB, size, size);
	for (off = 0; off < size; off += 2 * n) {
		h_serve(&h, off + n, n);
		h_serve(&h, off, n);
	}
	if (h.misses > 2 || h.hits < 90) {
		fail_msg("%" PRIu64 " misses, %" PRIu64 " hits, %" PRIu64
			 " waits", h.misses, h.hits, h.pendings);
	}
	h_free(&h);
}

/*
 * A stream that reads only part of what was prefetched (it jumps ahead)
 * leaves segments behind; they are reused once they are further behind
 * than a reordered request could be, so prefetch never stalls.
 */
static void test_release_behind(void **state)
{
	struct harness h;
	uint64_t size = 400 * MiB;
	uint64_t off;
	uint64_t fills;

	h_init(&h, 8 * MiB, size, size);
	h_serve(&h, 0, 2 * MiB);
	h_complete_all(&h);
	for (off = 20 * MiB; off < size - 32 * MiB; off += 20 * MiB) {
		fills = h.pf.fills;
		h_serve(&h, off, 2 * MiB);
		assert_int_equal(h.pf.fills - fills, h.pf.nseg);
		h_complete_all(&h);
	}
	h_free(&h);
}

/* A stream that starts over from the beginning gets its prefetch back */
static void test_restart(void **state)
{
	struct harness h;
	uint64_t size = 64 * MiB;
	uint64_t off;
	unsigned pass;

	h_init(&h, 8 * MiB, size, size);
	for (pass = 0; pass < 3; pass++) {
		uint64_t misses = h.misses;

		for (off = 4 * MiB; off < size; off += MiB) {
			h_serve(&h, off, MiB);
		}
		h_complete_all(&h);
		assert_true(h.misses - misses <= 1);
	}
	h_free(&h);
}

/*
 * smbclient's pattern: 8 MiB reads, two in flight, as large as the
 * prefetch. Request k+1 waits for its fills while k+2 arrives and moves
 * the front past it; the fills k+1 waits for must not be handed to the
 * window beyond k+2 as they complete.
 */
static void test_keep_waiting(void **state)
{
	struct harness h;
	uint64_t size = 256 * MiB;
	size_t n = 8 * MiB;
	uint64_t k;

	h_init(&h, 8 * MiB, size, size);
	assert_int_equal(h_read(&h, 0, n), CG_PF_MISS);
	h_start_fills(&h);
	for (k = 1; (k + 2) * n <= size; k += 2) {
		assert_int_equal(h_read(&h, k * n, n), CG_PF_PENDING);
		assert_int_equal(h_read(&h, (k + 1) * n, n), CG_PF_MISS);
		h.keep = k * n;
		/* the fills end one by one; the glue refills after each */
		while (h.nfills > 0) {
			h_complete(&h, 0);
			h_start_fills(&h);
		}
		h.keep = UINT64_MAX;
		assert_int_equal(h_read(&h, k * n, n), CG_PF_HIT);
		h_start_fills(&h);
	}
	/*
	 * Half the stream came from the prefetch, and nothing was loaded
	 * in vain but the last window, past the last request
	 */
	assert_int_equal(h.hits, (size / n - 1) / 2);
	assert_int_equal(h.pf.fills * h.pf.seg_size, h.hits * n + 8 * MiB);
	h_free(&h);
}

/* Writes through smbd while fills are in flight are never served */
static void test_invalidate_in_flight(void **state)
{
	struct harness h;
	uint64_t size = 32 * MiB;
	struct cg_pf_version now;
	size_t avail;

	h_init(&h, 8 * MiB, size, size);
	h_serve(&h, 0, MiB);		/* miss; fills [1M, 9M) start */
	assert_int_equal(h.nfills, 8);
	/*
	 * A write into [3M, 3M+10) while that segment is loading, told to
	 * the table but (as with coarse timestamps) not seen in the version
	 */
	cg_prefetch_invalidate(&h.pf, 3 * MiB, 10);
	h.file[3 * MiB + 5] ^= 0xff;
	h_complete_all(&h);
	/* same version: only the invalidation protects [3M, 4M) */
	now = h_version(&h);
	cg_prefetch_validate(&h.pf, &now);
	assert_int_equal(cg_prefetch_lookup(&h.pf, 3 * MiB, 4096, &avail),
			 CG_PF_MISS);
	assert_int_equal(cg_prefetch_lookup(&h.pf, 2 * MiB, MiB, &avail),
			 CG_PF_HIT);
	assert_int_equal(cg_prefetch_lookup(&h.pf, 4 * MiB, MiB, &avail),
			 CG_PF_HIT);
	assert_int_equal(h.pf.discarded, 1);

	/* a READY segment is dropped at once */
	cg_prefetch_invalidate(&h.pf, 4 * MiB + 100, 1);
	assert_int_equal(cg_prefetch_lookup(&h.pf, 4 * MiB, 1, &avail),
			 CG_PF_MISS);
	/* a zero-length write touches nothing */
	cg_prefetch_invalidate(&h.pf, 5 * MiB, 0);
	assert_int_equal(cg_prefetch_lookup(&h.pf, 5 * MiB, 1, &avail),
			 CG_PF_HIT);
	h_free(&h);
}

/* Writes from elsewhere: only the version tells, and it is enough */
/*
 * A descriptor's version: its size and ctime as fstat() has them, and
 * the coarse clock taken before; a bad descriptor is an error
 */
static void test_version_now(void **state)
{
	struct cg_pf_version v;
	struct stat st;
	int fd;

	(void)state;
	fd = cg_test_unlinked("0123456789", 10);
	assert_int_equal(cg_pf_version_now(fd, &v), 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(v.size, 10);
	assert_true(v.ctime_ns == (uint64_t)st.st_ctim.tv_sec * 1000000000 +
				  (uint64_t)st.st_ctim.tv_nsec);
	assert_true(v.clock_ns > 0);
	close(fd);
	errno = 0;
	assert_int_equal(cg_pf_version_now(fd, &v), -1);
	assert_int_equal(errno, EBADF);
}

static void test_version_change(void **state)
{
	struct harness h;
	uint64_t size = 32 * MiB;

	h_init(&h, 8 * MiB, size, size);
	h_serve(&h, 0, MiB);
	/* a write while the fills run, and one after they ended */
	h_write(&h, 2 * MiB + 10, 100, false);
	h_complete_all(&h);
	assert_int_equal(h_read(&h, MiB, MiB), CG_PF_MISS);
	assert_int_equal(h.pf.discarded, 8);
	h_start_fills(&h);
	h_complete_all(&h);
	assert_int_equal(h_read(&h, 2 * MiB, MiB), CG_PF_HIT);
	h_write(&h, 20 * MiB, 1, false);	/* far away: still stale */
	assert_int_equal(h_read(&h, 3 * MiB, MiB), CG_PF_MISS);
	h_free(&h);
}

/*
 * Timestamps of a kernel before 6.13: a write stamps ctime with the
 * coarse clock, so two writes within a tick share one. A fill whose
 * fstat came before the clock left the ctime's tick is not served; the
 * stream reads on demand until the file has been quiet for a tick.
 */
static void test_coarse_timestamps(void **state)
{
	struct harness h;
	uint64_t size = 32 * MiB;
	uint64_t t0 = 1700000000ULL * 1000000000ULL + 4000000;
	size_t avail;

	h_init(&h, 8 * MiB, size, size);
	h.coarse = true;
	h.m.clock = t0;
	/* a quiet file; a local write lands just before the fills' fstat */
	assert_int_equal(h_read(&h, 0, MiB), CG_PF_MISS);
	h_write(&h, 0, 1, false);
	h_start_fills(&h);
	assert_int_equal(h.nfills, 8);
	/* the same tick: another write, ctime stays, size stays */
	h_write(&h, 2 * MiB + 10, 100, false);
	h_complete_all(&h);
	/* no stale HIT (h_read checks the bytes), and no fills meanwhile */
	assert_int_equal(h_serve(&h, 2 * MiB, MiB), CG_PF_MISS);
	assert_int_equal(h_serve(&h, MiB, MiB), CG_PF_MISS);
	assert_int_equal(h.pf.unsettled, 8);
	assert_int_equal(h.nfills, 0);

	/* a tick of 4 ms is not enough: the margin is 10 ms, any HZ */
	h.m.clock = t0 + 4000000;
	assert_int_equal(h_serve(&h, 3 * MiB, MiB), CG_PF_MISS);
	assert_int_equal(h.nfills, 0);
	/* once the clock has left the tick, fills count */
	h.m.clock = t0 + CG_PF_TICK_NS;
	assert_int_equal(h_serve(&h, 4 * MiB, MiB), CG_PF_MISS);
	assert_true(h.nfills > 0);
	h_complete_all(&h);
	assert_int_equal(h_serve(&h, 5 * MiB, MiB), CG_PF_HIT);
	/* and a write now moves ctime: the segments go */
	h_write(&h, 6 * MiB, 1, false);
	assert_int_equal(h_read(&h, 6 * MiB, MiB), CG_PF_MISS);
	assert_int_equal(cg_prefetch_lookup(&h.pf, 7 * MiB, MiB, &avail),
			 CG_PF_MISS);
	h_free(&h);

	/* whole-second timestamps: quiet for 2 s before anything counts */
	h_init(&h, 8 * MiB, size, size);
	h.coarse = true;
	h.m.clock = 1700000000ULL * 1000000000ULL;
	h_write(&h, 0, 1, false);
	h.m.clock += 1500000000;
	h_serve(&h, 0, MiB);
	assert_int_equal(h.nfills, 0);
	h.m.clock += 500000000;
	h_serve(&h, MiB, MiB);
	assert_true(h.nfills > 0);
	h_complete_all(&h);
	assert_int_equal(h_serve(&h, 2 * MiB, MiB), CG_PF_HIT);
	h_free(&h);
}

/* Segments at end of file; a write past it moves the end */
static void test_end_of_file(void **state)
{
	struct harness h;
	uint64_t size = 10 * MiB + 1234;
	size_t avail = 0;

	h_init(&h, 8 * MiB, size, 16 * MiB);
	h_serve(&h, 0, 4 * MiB);
	h_complete_all(&h);
	/* fills stop at end of file: [4M, 11M) is 7 segments */
	assert_int_equal(h.pf.fills, 7);
	assert_int_equal(h_serve(&h, 4 * MiB, 6 * MiB), CG_PF_HIT);
	assert_int_equal(h_read(&h, 10 * MiB, 1 * MiB), CG_PF_HIT);
	h_free(&h);

	/* through smbd: a write beyond the short segment drops it */
	h_init(&h, 8 * MiB, size, 16 * MiB);
	h_serve(&h, 0, 4 * MiB);
	h_complete_all(&h);
	assert_int_equal(cg_prefetch_lookup(&h.pf, 10 * MiB + 1000, 4096,
					    &avail), CG_PF_HIT);
	assert_int_equal(avail, 234);
	cg_prefetch_invalidate(&h.pf, 12 * MiB, 10);
	assert_int_equal(cg_prefetch_lookup(&h.pf, 10 * MiB + 1000, 4096,
					    &avail), CG_PF_MISS);
	assert_int_equal(cg_prefetch_lookup(&h.pf, 9 * MiB, MiB, &avail),
			 CG_PF_HIT);
	h_free(&h);
}

/* A failed fill frees its slot and serves nothing */
static void test_failed_fill(void **state)
{
	struct harness h;
	uint64_t size = 32 * MiB;

	h_init(&h, 4 * MiB, size, size);
	h_serve(&h, 0, MiB);
	h.fills[0].got = -1;
	h_complete_all(&h);
	assert_int_equal(h_read(&h, h.pf.front - h.pf.front % MiB, MiB),
			 CG_PF_MISS);
	cg_prefetch_reset(&h.pf);
	assert_int_equal(h_read(&h, 2 * MiB, MiB), CG_PF_MISS);
	h_free(&h);
}

/*
 * Property: a random mix of requests near the front (reordered, some
 * behind, some far ahead), fills ending in random order, writes through
 * smbd and from elsewhere, truncations; half the HITs are pinned and
 * copied later, as the glue's copy jobs do, writes and fills happening
 * in between. Every byte served must be the file's current byte (h_read
 * and h_copy check), and no slot is handed out while a fill into it runs
 * or a copy out of it waits (h_start_fills checks).
 */
static void random_mix_pass(unsigned seed, bool coarse)
{
	struct harness h;
	uint64_t cap = 80 * MiB;
	uint64_t cursor = 0;	/* where the stream is */
	unsigned step;

	srandom(seed);
	h_init(&h, 8 * MiB, 64 * MiB + 555, cap);
	h.coarse = coarse;
	h.m.clock = 1700000000ULL * 1000000000ULL;
	for (step = 0; step < 8000; step++) {
		long r = random() % 100;
		/* around the cursor: reordered, some behind, some ahead */
		uint64_t off = cursor + (uint64_t)(random() % (3 * MiB));
		size_t n = 1 + (size_t)(random() % MiB);

		off = off > MiB ? off - MiB : 0;
		if (r < 50) {
			if (random() % 2 == 0) {
				h_read(&h, off, n);
			} else {
				h_pin(&h, off, n);
			}
			h_start_fills(&h);
			cursor += n / 2;
		} else if (r < 85 && h.ncopies > 0 && random() % 3 == 0) {
			h_copy(&h, (unsigned)(random() % h.ncopies));
		} else if (r < 85 && h.nfills > 0) {
			h_complete(&h, (unsigned)(random() % h.nfills));
		} else if (r < 93) {
			n = 1 + (size_t)(random() % 8192);
			/*
			 * coarse: a quieter file (or fills never count),
			 * written where the prefetch is
			 */
			if (coarse) {
				off += (uint64_t)(random() % (8 * MiB));
			}
			if (off + n < cap && (!coarse || random() % 3 == 0)) {
				h_write(&h, off, n, r < 89);
			}
		} else if (r < 94) {
			h.m.size = cursor + (uint64_t)(random() % (16 * MiB));
			h.m.size = MIN(h.m.size, cap);
			h.gen++;	/* a truncate: a version change */
			cg_model_stamp(&h.m);
		} else if (r < 95 || cursor > h.m.size) {
			/* the client starts over near the beginning */
			cursor = (uint64_t)(random() % MiB);
		}
		if (coarse && random() % 2 == 0) {
			h.m.clock += 4000000;	/* a tick of HZ=250 */
		}
	}
	while (h.ncopies > 0) {
		h_copy(&h, 0);
	}
	h_complete_all(&h);
	/* every pin was ended: no slot is held by a copy any more */
	for (step = 0; step < h.pf.nseg; step++) {
		assert_int_equal(h.pf.seg[step].pins, 0);
	}
	/* copies found stale by their version check count: they were HITs */
	if (h.hits + h.stale_copies < (coarse ? 100 : 200) ||
	    h.hits < (coarse ? 100 : 150)) {
		fail_msg("seed %u: only %" PRIu64 " hits (%" PRIu64 " copies "
			 "stale), %" PRIu64 " misses",
			 seed, h.hits, h.stale_copies, h.misses);
	}
	h_free(&h);
}

static void test_random_mix(void **state)
{
	unsigned seed;

	for (seed = 1; seed <= cg_test_seeds(); seed++) {
		random_mix_pass(seed, false);
		random_mix_pass(seed, true);
	}
}

/*
 * A pinned segment that a write through smbd drops serves no one from
 * then on: its range is read again (a fill into another slot), and the
 * slot is freed only when the copy reports; a copy whose version check
 * fails (a local write) counts no bytes as used
 */
static void test_pinned_dropped(void **state)
{
	struct harness h;
	struct cg_pf_piece p[4];
	struct cg_pf_version now;
	size_t avail = 0;
	unsigned np, slot;

	h_init(&h, 4 * MiB, 32 * MiB, 32 * MiB);
	h_serve(&h, 0, 4096);
	h_complete_all(&h);
	assert_int_equal(cg_prefetch_lookup(&h.pf, 4096, MiB, &avail),
			 CG_PF_HIT);
	np = cg_prefetch_pin(&h.pf, 4096, MiB, p, 4);
	assert_int_equal(np, 2);
	assert_int_equal(p[0].len + p[1].len, MiB);
	slot = p[0].slot;
	assert_int_equal(h.pf.seg[slot].pins, 1);

	h_write(&h, 100, 10, true);
	assert_true(h.pf.seg[slot].stale);
	assert_int_equal(h.pf.seg[slot].state, CG_PF_READY);
	assert_int_equal(cg_prefetch_lookup(&h.pf, 0, 4096, &avail),
			 CG_PF_MISS);
	h_start_fills(&h);	/* asserts the pinned slot is not reused */
	now = h_version(&h);
	assert_false(cg_prefetch_pieces_current(p, np, &now));
	cg_prefetch_validate(&h.pf, &now);
	cg_prefetch_unpin(&h.pf, p, np, false);
	assert_int_equal(h.pf.seg[slot].state, CG_PF_FREE);
	/* the second piece's segment was dropped by the version check */
	assert_int_equal(h.pf.seg[p[1].slot].state, CG_PF_FREE);
	h_complete_all(&h);
	assert_int_equal(h_serve(&h, 4096, MiB), CG_PF_MISS);
	h_free(&h);
}

/* A HIT at end of file pins the segment holding the end: a file grown
 * meanwhile fails the copy's version check */
static void test_pinned_end_of_file(void **state)
{
	struct harness h;
	struct cg_pf_piece p[4];
	struct cg_pf_version now;
	size_t avail = 1;
	unsigned np;

	h_init(&h, 4 * MiB, 2 * MiB + 100, 4 * MiB);
	h_serve(&h, 0, 4096);
	h_complete_all(&h);
	assert_int_equal(cg_prefetch_lookup(&h.pf, 2 * MiB + 100, 4096,
					    &avail),
			 CG_PF_HIT);
	assert_int_equal(avail, 0);
	np = cg_prefetch_pin(&h.pf, 2 * MiB + 100, 4096, p, 4);
	assert_int_equal(np, 1);
	assert_int_equal(p[0].len, 0);
	h_write(&h, 2 * MiB + 100, 5000, false);	/* a local append */
	now = h_version(&h);
	assert_false(cg_prefetch_pieces_current(p, np, &now));
	cg_prefetch_unpin(&h.pf, p, np, false);
	h_free(&h);
}

/* ---- adapting to the client ------------------------------------- */

struct wanted_case {
	uint64_t ahead;
	size_t max_read;
	unsigned inflight;
	uint64_t most;
	unsigned want;
};

#define NO_MOST UINT64_MAX

static const struct wanted_case wanted_cases[] = {
	{8 * MiB, MiB, 4, NO_MOST, 8},		/* 5 MiB fit in the table */
	{8 * MiB, MiB, 1, NO_MOST, 8},
	{8 * MiB, 64 * KiB, 60, NO_MOST, 8},
	{8 * MiB, 8 * MiB, 1, NO_MOST, 24},	/* one 8 MiB read in flight */
	{8 * MiB, 8 * MiB, 4, NO_MOST, 48},	/* ... four */
	{8 * MiB, 8 * MiB, 0, NO_MOST, 16},	/* none: two reads */
	{8 * MiB, 8 * MiB, 12, NO_MOST, 64},	/* at most the largest table */
	{8 * MiB, 3 * MiB + 1, 2, NO_MOST, 13},	/* rounded up to a segment */
	{2 * MiB, MiB, 4, NO_MOST, 12},		/* 512 KiB segments */
	{0, 8 * MiB, 4, NO_MOST, 0},		/* prefetch off stays off */
	{8 * MiB, 8 * MiB, 4, 16 * MiB, 16},	/* direct memory 64M */
	{8 * MiB, 8 * MiB, 4, 16 * MiB + 1, 17},	/* rounded up */
	{8 * MiB, 8 * MiB, 4, 4 * MiB, 8},	/* never below its size */
};

static void test_wanted(void **state)
{
	size_t i;

	for (i = 0; i < N_ELEM(wanted_cases); i++) {
		const struct wanted_case *c = &wanted_cases[i];
		struct cg_prefetch pf;
		unsigned want;

		cg_prefetch_init(&pf, c->ahead, 4096);
		cg_prefetch_note_read(&pf, 0, c->max_read);
		want = cg_prefetch_wanted(&pf, c->inflight, c->most);
		if (want != c->want) {
			fail_msg("case %zu: %u segments, want %u", i, want,
				 c->want);
		}
	}
}

/* The harness's buffer grows with the table, its contents kept */
static void h_grow(struct harness *h, unsigned nseg)
{
	cg_prefetch_grow(&h->pf, nseg);
	h->mem = realloc(h->mem, cg_prefetch_memory(&h->pf) + 1);
	assert_non_null(h->mem);
}

/*
 * 8 MiB reads against the 8 MiB default, the client's next read always
 * in flight already: without growing, most reads find their segments
 * partly loaded, partly not, and are a MISS (8 of 13 here). Grown to
 * what two reads in flight want, the reads after the first two are all
 * served from the table, and their bytes are right (h_read checks them).
 */
static void test_grow_serves_large_reads(void **state)
{
	struct harness h;
	uint64_t size = 96 * MiB + 12345;
	uint64_t off;

	h_init(&h, 8 * MiB, size, size);
	cg_prefetch_note_read(&h.pf, 0, 8 * MiB);
	h_grow(&h, cg_prefetch_wanted(&h.pf, 2, NO_MOST));
	assert_int_equal(h.pf.nseg, 32);
	for (off = 0; off < size; off += 8 * MiB) {
		cg_prefetch_note_read(&h.pf, off + 8 * MiB, 8 * MiB);
		h_serve(&h, off, 8 * MiB);
	}
	if (h.misses > 2 || h.hits < 11) {
		fail_msg("%" PRIu64 " misses, %" PRIu64 " hits", h.misses,
			 h.hits);
	}
	h_free(&h);
}

/*
 * Growing while segments load and others are loaded keeps them all: the
 * old slots stay where they are, the new ones start free, and fills
 * started before the growth complete into their slots.
 */
static void test_grow_in_flight(void **state)
{
	struct harness h;
	uint64_t size = 64 * MiB;
	uint64_t fills;
	unsigned i;

	h_init(&h, 4 * MiB, size, size);
	h_serve(&h, 0, MiB);
	h_complete(&h, 0);
	assert_int_equal(h.nfills, 3);
	fills = h.pf.fills;
	h_grow(&h, 12);
	assert_int_equal(h.pf.nseg, 12);
	for (i = 4; i < 12; i++) {
		assert_int_equal(h.pf.seg[i].state, CG_PF_FREE);
	}
	h_start_fills(&h);
	assert_true(h.pf.fills > fills);
	h_complete_all(&h);
	for (i = 1; i < 12; i++) {
		assert_int_equal(h_serve(&h, (uint64_t)i * MiB, MiB),
				 CG_PF_HIT);
	}
	/* never shrinks, and never past the largest table */
	h_grow(&h, 6);
	assert_int_equal(h.pf.nseg, 12);
	h_grow(&h, CG_PREFETCH_MAX_SEGS + 1);
	assert_int_equal(h.pf.nseg, 12);
	h_free(&h);
}

/* No prefetch (direct prefetch = 0) never grows one */
static void test_grow_off(void **state)
{
	struct cg_prefetch pf;

	cg_prefetch_init(&pf, 0, 4096);
	cg_prefetch_note_read(&pf, 0, 8 * MiB);
	assert_int_equal(cg_prefetch_wanted(&pf, 8, NO_MOST), 0);
	cg_prefetch_grow(&pf, 8);
	assert_int_equal(pf.nseg, 0);
	assert_int_equal(cg_prefetch_memory(&pf), 0);
}

CG_TEST_MAIN(NULL, NULL,
	     cmocka_unit_test(test_geometry),
	     cmocka_unit_test(test_device_segment),
	     cmocka_unit_test(test_lookup_table),
	     cmocka_unit_test(test_in_order),
	     cmocka_unit_test(test_reordered),
	     cmocka_unit_test(test_release_behind),
	     cmocka_unit_test(test_restart),
	     cmocka_unit_test(test_keep_waiting),
	     cmocka_unit_test(test_invalidate_in_flight),
	     cmocka_unit_test(test_version_change),
	     cmocka_unit_test(test_version_now),
	     cmocka_unit_test(test_coarse_timestamps),
	     cmocka_unit_test(test_end_of_file),
	     cmocka_unit_test(test_failed_fill),
	     cmocka_unit_test(test_pinned_dropped),
	     cmocka_unit_test(test_pinned_end_of_file),
	     cmocka_unit_test(test_wanted),
	     cmocka_unit_test(test_grow_serves_large_reads),
	     cmocka_unit_test(test_grow_in_flight),
	     cmocka_unit_test(test_grow_off),
	     cmocka_unit_test(test_random_mix))
