/*
 * vfs_cacheguard unit tests: the direct stream's scheduler (cg_direct.c)
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
 * The scheduler is driven as the glue drives it, through fake ops that
 * play smbd's thread pool against a model file. Every job the scheduler
 * asks for is recorded and runs when the test says:
 *
 * - a fill "runs" (takes the file's version and reads the model into
 *   its slot, as the thread does, in that order) and later "completes"
 *   (is reported: cg_direct_job_done, as the glue reports it);
 * - a HIT's copy completes by checking its pieces against the file's
 *   version then and copying them out of the buffer;
 * - a MISS reads the model file when it completes.
 *
 * Each byte of the model file is a function of its offset and of the
 * write that last put it there (write 0: the original bytes); every
 * write and truncate is logged. A request may be served, byte by byte,
 * any content the file had at some moment between its arrival and its
 * completion, and a length that one of the file's sizes then gives:
 * bytes older than its arrival are stale. Writes come in two kinds: this
 * smbd's, noted before and after (cg_direct_note_write), which move
 * neither ctime nor, unless they extend the file, the size, so that
 * only the note protects against them; and others', which only change
 * the version (ctime and size), as a local process's do.
 */

#include <stdint.h>
#include <errno.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_direct.h"
#include "cg_model_file.h"
#include "cg_sys.h"
#include "cg_test.h"

#define SEG (64 * KiB)		/* 256 KiB of prefetch: 4 x 64 KiB */
#define AHEAD (4 * SEG)
#define CAP (2 * MiB)		/* the model file never grows past this */
#define MAX_JOBS 256
#define MAX_LOG 8192
#define MAX_REQS 4096

struct req {
	struct cg_direct_req sr;
	uint64_t off;
	size_t n;
	uint8_t *buf;		/* n bytes; freed once checked (drop) */
	unsigned arrival;	/* writes logged when it arrived */
	unsigned done;		/* completions: must end as exactly 1 */
	unsigned defers;
	ssize_t got;
};

struct fill {
	unsigned slot;
	uint64_t off;
	size_t len;
	bool ran;
	ssize_t got;
	struct cg_pf_version ver;
};

struct copy {
	struct req *r;
	struct cg_pf_piece pieces[CG_PREFETCH_MAX_SEGS + 1];
	unsigned np;
};

struct change {
	uint64_t off, len;	/* bytes it put there */
	uint64_t size;		/* the file's size after it */
	bool zero;		/* a truncate: the bytes are zero */
};

struct fake {
	struct cg_direct s;
	uint8_t *mem;		/* the table's buffer */
	uint8_t *file;
	unsigned *wrote;	/* per byte: the change that put it there */
	struct change log[MAX_LOG];	/* change i at log[i], 0: none */
	unsigned nlog;
	struct cg_model_file m;	/* size, ctime, coarse clock */
	struct fill fills[MAX_JOBS];
	unsigned nfills;
	struct copy copies[MAX_JOBS];
	unsigned ncopies;
	struct req *reads[MAX_JOBS];
	unsigned nreads;
	uint64_t room;		/* budget for growth */
	unsigned grow_calls;
	uint64_t grow_below;	/* the last growth's bound */
	bool refuse_submit;
	bool refuse_copy;
	bool version_fails;
	uint64_t served_hits, served_misses;
	bool drop;		/* a request's bytes go once checked */
};

/* ---- the model file ------------------------------------------------ */

static uint8_t byte_of(uint64_t pos, unsigned change, const struct fake *f)
{
	if (change > 0 && f->log[change].zero) {
		return 0;
	}
	return (uint8_t)(pos * 7 + (pos >> 9) + change * 131);
}

/*
 * Change [off, off + len) (zero: a truncate's new zeros) and set the
 * size; ours: this smbd's, noted around it and moving no ctime
 */
static void f_change(struct fake *f, uint64_t off, uint64_t len,
		     uint64_t size, bool zero, bool ours)
{
	unsigned c;
	uint64_t i;

	assert_true(f->nlog + 1 < MAX_LOG);
	assert_true(off + len <= CAP && size <= CAP);
	if (ours) {
		cg_direct_note_write(&f->s, zero ? -1 : (int64_t)off, len);
	}
	c = ++f->nlog;
	f->log[c] = (struct change){.off = off, .len = len, .size = size,
				    .zero = zero};
	for (i = off; i < off + len; i++) {
		f->wrote[i] = c;
		f->file[i] = byte_of(i, c, f);
	}
	f->m.size = size;
	if (!ours) {
		cg_model_stamp(&f->m);
	}
	if (ours) {
		cg_direct_note_write(&f->s, zero ? -1 : (int64_t)off, len);
	}
}

static void f_write(struct fake *f, uint64_t off, uint64_t len, bool ours)
{
	f_change(f, off, len, f->m.size > off + len ? f->m.size : off + len,
		 false, ours);
}

static void f_truncate(struct fake *f, uint64_t size, bool ours)
{
	/* the bytes past the new end read as zeros if it grows again */
	f_change(f, size, CAP - size, size, true, ours);
}

/* The content of byte pos as change c left it, and the one before */
static unsigned f_wrote_before(const struct fake *f, uint64_t pos,
			       unsigned upto)
{
	unsigned c;

	for (c = upto; c > 0; c--) {
		if (pos >= f->log[c].off && pos - f->log[c].off <
		    f->log[c].len) {
			return c;
		}
	}
	return 0;
}

/*
 * r was served got bytes: each must be what the file held at some
 * moment since r arrived, and got what one of its sizes gives
 */
static void f_check_served(const struct fake *f, const struct req *r,
			   ssize_t got)
{
	uint64_t i;
	unsigned c;
	bool ok;

	ok = (size_t)got == cg_model_pread_len(f->m.size, r->off, r->n) ||
	     (size_t)got == cg_model_pread_len(f->log[r->arrival].size,
					       r->off, r->n);
	for (c = r->arrival + 1; c <= f->nlog && !ok; c++) {
		ok = (size_t)got ==
		     cg_model_pread_len(f->log[c].size, r->off, r->n);
	}
	if (!ok) {
		fail_msg("%" PRIu64 "+%zu served %zd bytes, file size %" PRIu64,
			 r->off, r->n, got, f->m.size);
	}
	if (got == 0 || memcmp(r->buf, f->file + r->off, (size_t)got) == 0) {
		return;
	}
	for (i = 0; i < (uint64_t)got; i++) {
		uint64_t pos = r->off + i;

		if (r->buf[i] == f->file[pos]) {
			continue;
		}
		c = f_wrote_before(f, pos, r->arrival);
		ok = r->buf[i] == byte_of(pos, c, f);
		for (c = r->arrival + 1; c <= f->nlog && !ok; c++) {
			ok = pos >= f->log[c].off &&
			     pos - f->log[c].off < f->log[c].len &&
			     r->buf[i] == byte_of(pos, c, f);
		}
		if (!ok) {
			fail_msg("%" PRIu64 "+%zu: stale byte at %" PRIu64
				 " (arrived after change %u of %u)",
				 r->off, r->n, pos, r->arrival, f->nlog);
		}
	}
}

static void f_served(struct fake *f, struct req *r, ssize_t got)
{
	assert_int_equal(r->done, 0);
	r->done++;
	r->got = got;
	f_check_served(f, r, got);
	if (f->drop) {
		free(r->buf);
		r->buf = NULL;
	}
}

static void req_free(struct req *r)
{
	free(r->buf);
	free(r);
}

/* ---- the fake ops -------------------------------------------------- */

static bool fo_submit_fill(void *priv, unsigned slot, uint64_t off,
			   size_t len)
{
	struct fake *f = priv;
	unsigned i, k;

	if (f->refuse_submit) {
		return false;
	}
	/* a slot a thread writes or copies out of is never handed out */
	for (i = 0; i < f->nfills; i++) {
		assert_int_not_equal(f->fills[i].slot, slot);
	}
	for (i = 0; i < f->ncopies; i++) {
		for (k = 0; k < f->copies[i].np; k++) {
			assert_int_not_equal(f->copies[i].pieces[k].slot, slot);
		}
	}
	assert_true(f->nfills < MAX_JOBS);
	assert_int_equal(off % f->s.pf.seg_size, 0);
	f->fills[f->nfills++] = (struct fill){.slot = slot, .off = off,
					      .len = len};
	return true;
}

static bool fo_grow(void *priv, size_t extra, uint64_t below)
{
	struct fake *f = priv;

	f->grow_calls++;
	f->grow_below = below;
	if (extra > f->room) {
		return false;
	}
	f->room -= extra;
	return true;
}

static bool fo_start_copy(void *priv, struct cg_direct_req *sr,
			  size_t avail)
{
	struct fake *f = priv;
	struct copy *c = &f->copies[f->ncopies];
	unsigned max = cg_direct_pieces_max(&f->s, sr);

	if (f->refuse_copy) {
		return false;
	}
	assert_true(f->ncopies < MAX_JOBS);
	assert_true(max <= CG_PREFETCH_MAX_SEGS + 1);
	if (!cg_direct_pin(&f->s, sr, avail, c->pieces, max, &c->np)) {
		return false;
	}
	c->r = sr->owner;
	f->ncopies++;
	return true;
}

static bool fo_start_read(void *priv, struct cg_direct_req *sr)
{
	struct fake *f = priv;

	assert_true(f->nreads < MAX_JOBS);
	f->reads[f->nreads++] = sr->owner;
	return true;
}

static void fo_defer(void *priv, struct cg_direct_req *sr)
{
	struct req *r = sr->owner;

	r->defers++;
	assert_int_equal(r->defers, 1);
}

static void f_run_fill(struct fake *f, unsigned i);
static void f_complete_fill(struct fake *f, unsigned i, bool fail);

static const struct cg_direct_ops fake_ops = {
	.submit_fill = fo_submit_fill,
	.grow = fo_grow,
	.start_copy = fo_start_copy,
	.start_read = fo_start_read,
	.defer = fo_defer,
};

/* ---- the jobs, run when a test says -------------------------------- */

static void f_init(struct fake *f, uint64_t ahead, uint64_t size)
{
	uint64_t i;

	memset(f, 0, sizeof(*f));
	f->mem = calloc(1, SEG * CG_PREFETCH_MAX_SEGS);
	f->file = malloc(CAP);
	f->wrote = calloc(CAP, sizeof(f->wrote[0]));
	assert_non_null(f->mem);
	assert_non_null(f->file);
	assert_non_null(f->wrote);
	for (i = 0; i < CAP; i++) {
		f->file[i] = byte_of(i, 0, f);
	}
	f->m.size = size;
	f->log[0].size = size;
	/* settled: the clock is well past ctime's tick */
	f->m.ctime = 1700000000ULL * 1000000000ULL + 12345;
	f->m.clock = f->m.ctime + 100000000;
	f->room = UINT64_MAX;
	cg_direct_init(&f->s, &fake_ops, f, ahead, 4096, size, 64 * MiB);
}

static void f_free(struct fake *f)
{
	free(f->mem);
	free(f->file);
	free(f->wrote);
}

static struct req *f_req(struct fake *f, uint64_t off, size_t n)
{
	struct req *r = malloc(sizeof(*r));

	assert_non_null(r);
	*r = (struct req){
		.sr = {.owner = r},
		.off = off,
		.n = n,
		.buf = malloc(n + 1),
		.arrival = f->nlog,
		.got = -2,
	};
	assert_non_null(r->buf);
	return r;
}

/* A request through pread_send; inflight as smbd counts them */
static struct req *f_send(struct fake *f, uint64_t off, size_t n,
			  unsigned inflight)
{
	struct req *r = f_req(f, off, n);

	cg_direct_request(&f->s, &r->sr, off, n, inflight);
	return r;
}

/* A fill's thread: the version first, then the bytes */
static void f_run_fill(struct fake *f, unsigned i)
{
	struct fill *fl = &f->fills[i];

	fl->ver = cg_model_version(&f->m);
	fl->got = (ssize_t)cg_model_pread_len(f->m.size, fl->off, fl->len);
	memcpy(f->mem + (size_t)fl->slot * f->s.pf.seg_size,
	       f->file + fl->off, (size_t)fl->got);
	fl->ran = true;
}

static void f_complete_fill(struct fake *f, unsigned i, bool fail)
{
	struct fill fl = f->fills[i];
	struct cg_dio_job w = {
		.kind = CG_JOB_FILL,
		.version_ok = true,
		.ver = fl.ver,
		.ret = fail ? -1 : fl.got,
	};
	bool was_off = f->s.prefetch_off;

	assert_true(fl.ran);
	f->fills[i] = f->fills[--f->nfills];
	/* as the glue reports it: true only when it turns prefetch off */
	assert_int_equal(cg_direct_job_done(&f->s, &w, fl.slot, NULL),
			 fail && !was_off);
}

static void f_run_all(struct fake *f)
{
	unsigned i;

	for (i = 0; i < f->nfills; i++) {
		if (!f->fills[i].ran) {
			f_run_fill(f, i);
		}
	}
}

/* Run and report every fill, those their reports start included */
static void f_fill_all(struct fake *f)
{
	while (f->nfills > 0) {
		if (!f->fills[0].ran) {
			f_run_fill(f, 0);
		}
		f_complete_fill(f, 0, false);
	}
}

/* A HIT's copy: version check, then the pieces, as its thread does */
static void f_complete_copy(struct fake *f, unsigned i, bool version_fails)
{
	struct copy c = f->copies[i];
	struct cg_pf_version now = cg_model_version(&f->m);
	struct cg_dio_job w;
	bool copied = false;
	size_t got = 0;
	unsigned k;

	f->copies[i] = f->copies[--f->ncopies];
	if (!version_fails && cg_prefetch_pieces_current(c.pieces, c.np,
							 &now)) {
		copied = true;
		for (k = 0; k < c.np; k++) {
			memcpy(c.r->buf + got, f->mem + c.pieces[k].from,
			       c.pieces[k].len);
			got += c.pieces[k].len;
		}
	}
	w = (struct cg_dio_job){
		.kind = CG_JOB_COPY,
		.pieces = c.pieces,
		.npieces = c.np,
		.version_ok = !version_fails,
		.ver = now,
		.ret = copied ? (ssize_t)got : -1,
	};
	assert_false(cg_direct_job_done(&f->s, &w, 0, &c.r->sr));
	if (copied) {
		f->served_hits++;
		f_served(f, c.r, (ssize_t)got);
	}
}

/* A MISS's own read completes: the file's bytes now */
static void f_complete_read(struct fake *f, unsigned i)
{
	struct req *r = f->reads[i];
	struct cg_pf_version now = cg_model_version(&f->m);
	size_t got = cg_model_pread_len(f->m.size, r->off, r->n);
	struct cg_dio_job w = {
		.kind = CG_JOB_READ,
		.version_ok = true,
		.ver = now,
		.ret = (ssize_t)got,
	};

	f->reads[i] = f->reads[--f->nreads];
	assert_false(cg_direct_job_done(&f->s, &w, 0, NULL));
	memcpy(r->buf, f->file + r->off, got);
	f->served_misses++;
	f_served(f, r, (ssize_t)got);
}

/* Everything in flight ends; nothing may be left waiting */
static void f_drain(struct fake *f)
{
	unsigned rounds = 0;

	while (f->nfills + f->ncopies + f->nreads > 0) {
		assert_true(++rounds < 100000);
		if (f->ncopies > 0) {
			f_complete_copy(f, 0, false);
		} else if (f->nreads > 0) {
			f_complete_read(f, 0);
		} else {
			if (!f->fills[0].ran) {
				f_run_fill(f, 0);
			}
			f_complete_fill(f, 0, false);
		}
	}
	assert_null(f->s.waiters);
}

/* ---- the cases ----------------------------------------------------- */

/* The first request reads on its own and starts the fills; the next
 * ones are copied out of them */
static void test_miss_then_hits(void **state)
{
	struct fake f;
	struct req *r[3];

	f_init(&f, AHEAD, MiB);
	r[0] = f_send(&f, 0, 4096, 1);
	assert_int_equal(f.s.misses, 1);
	assert_int_equal(f.nreads, 1);
	assert_int_equal(f.nfills, 4);	/* the whole window loads */
	f_fill_all(&f);
	r[1] = f_send(&f, 4096, 60 * KiB, 2);
	r[2] = f_send(&f, 64 * KiB, 90 * KiB, 3);
	assert_int_equal(f.s.hits, 2);
	assert_int_equal(f.ncopies, 2);
	f_drain(&f);
	assert_int_equal(r[1]->got, 60 * KiB);
	assert_int_equal(r[2]->got, 90 * KiB);
	assert_int_equal(f.served_hits, 2);
	assert_int_equal(f.served_misses, 1);
	req_free(r[0]);
	req_free(r[1]);
	req_free(r[2]);
	f_free(&f);
}

/* A MiB read in 64 KiB requests: each a MISS, nothing filled or grown */
static void misses_only(struct fake *f)
{
	struct req *r = NULL;
	uint64_t off;

	for (off = 0; off < MiB; off += 64 * KiB) {
		r = f_send(f, off, 64 * KiB, 4);
		f_drain(f);
		assert_int_equal(r->got, 64 * KiB);
		req_free(r);
	}
	assert_int_equal(f->s.misses, 16);
	assert_int_equal(f->s.pf.fills, 0);
	assert_int_equal(f->grow_calls, 0);
}

/* No prefetch: every request is a MISS and nothing is filled */
static void test_no_prefetch(void **state)
{
	struct fake f;

	f_init(&f, 0, MiB);
	misses_only(&f);
	f_free(&f);
}

/* The buffer a stream maps: the prefetch's, with address space for its
 * growths */
static void test_buffer(void **state)
{
	struct fake f;
	size_t reserve = 1;

	f_init(&f, AHEAD, MiB);
	assert_int_equal(cg_direct_buffer(&f.s, &reserve),
			 (size_t)f.s.pf.nseg * f.s.pf.seg_size);
	assert_true(f.s.pf.nseg > 0);
	assert_int_equal(reserve, f.s.pf.seg_size * CG_PREFETCH_MAX_SEGS);
	f_free(&f);
}

/* A request on a loading segment waits, deferred once; the fill's
 * report serves it as a HIT */
static void test_waiter_woken(void **state)
{
	struct fake f;
	struct req *a = NULL;
	struct req *b = NULL;

	f_init(&f, AHEAD, MiB);
	a = f_send(&f, 0, 4096, 1);
	b = f_send(&f, 70 * KiB, 4096, 2);
	assert_int_equal(f.s.waits, 1);
	assert_int_equal(b->defers, 1);
	assert_ptr_equal(f.s.waiters, &b->sr);
	assert_true(b->sr.waiting);
	assert_false(cg_direct_finished(&f.s, false));
	f_run_all(&f);
	/* the fill of segment 0 does not concern it */
	f_complete_fill(&f, 0, false);
	assert_ptr_equal(f.s.waiters, &b->sr);
	assert_int_equal(f.ncopies, 0);
	/* segment 1's does */
	while (f.s.waiters != NULL) {
		f_complete_fill(&f, 0, false);
	}
	assert_int_equal(f.s.hits, 1);
	assert_int_equal(f.ncopies, 1);
	assert_int_equal(b->defers, 1);
	f_drain(&f);
	assert_int_equal(b->got, 4096);
	assert_int_equal(b->done, 1);
	assert_int_equal(f.s.waits, 1);
	req_free(a);
	req_free(b);
	f_free(&f);
}

/*
 * A change while the fill of a waiting request runs: the waiter must
 * not get the fill's bytes. ours: this smbd's write; how 0: a write,
 * 1: a truncate (noted as "anything"), 2: another process's write.
 */
static void invalidated_while_filling(int how)
{
	struct fake f;
	struct req *a = NULL;
	struct req *b = NULL;
	unsigned i;

	f_init(&f, AHEAD, MiB);
	a = f_send(&f, 0, 4096, 1);
	b = f_send(&f, 64 * KiB, 64 * KiB, 2);
	assert_true(b->sr.waiting);
	f_run_all(&f);	/* every fill has read the old bytes */
	f.m.clock += 50000000;
	switch (how) {
	case 0:
		f_write(&f, 100 * KiB, 10, true);
		break;
	case 1:
		f_truncate(&f, 100 * KiB, true);
		break;
	default:
		f_write(&f, 100 * KiB, 10, false);
		f.m.clock += 50000000;
		break;
	}
	for (i = 0; i < f.nfills; i++) {
		if (f.fills[i].off == 64 * KiB) {
			break;
		}
	}
	assert_true(i < f.nfills);
	f_complete_fill(&f, i, false);
	f_drain(&f);
	assert_int_equal(b->done, 1);
	assert_int_equal(b->got, how == 1 ? 36 * KiB : 64 * KiB);
	assert_memory_equal(b->buf, f.file + 64 * KiB, (size_t)b->got);
	req_free(a);
	req_free(b);
	f_free(&f);
}

static void test_write_while_filling(void **state)
{
	invalidated_while_filling(0);
}

static void test_truncate_while_filling(void **state)
{
	invalidated_while_filling(1);
}

static void test_foreign_write_while_filling(void **state)
{
	invalidated_while_filling(2);
}

/* A HIT whose copy finds the file changed is served again */
static void test_stale_copy_served_again(void **state)
{
	struct fake f;
	struct req *a = NULL;
	struct req *b = NULL;

	f_init(&f, AHEAD, MiB);
	a = f_send(&f, 0, 4096, 1);
	f_fill_all(&f);
	b = f_send(&f, 8192, 8192, 2);
	assert_int_equal(f.ncopies, 1);
	f.m.clock += 50000000;
	f_write(&f, 9000, 1, false);
	f.m.clock += 50000000;
	f_complete_copy(&f, 0, false);
	assert_int_equal(f.s.stale, 1);
	assert_int_equal(b->done, 0);
	f_drain(&f);
	assert_int_equal(b->done, 1);
	assert_int_equal(f.file[9000], b->buf[9000 - 8192]);
	req_free(a);
	req_free(b);
	f_free(&f);
}

/* A failed fill turns prefetch off: its waiter and every later request
 * read on their own, and nothing more is filled */
static void test_failed_fill(void **state)
{
	struct fake f;
	struct req *r[4];
	uint64_t fills;
	unsigned i;

	f_init(&f, AHEAD, MiB);
	r[0] = f_send(&f, 0, 4096, 1);
	r[1] = f_send(&f, 4096, 4096, 2);
	assert_true(r[1]->sr.waiting);
	f_run_all(&f);
	for (i = 0; i < f.nfills && f.fills[i].off != 0; i++) {
	}
	assert_true(i < f.nfills);
	f_complete_fill(&f, i, true);
	assert_true(f.s.prefetch_off);
	assert_null(f.s.waiters);
	fills = f.s.pf.fills;
	r[2] = f_send(&f, 8192, 4096, 2);
	r[3] = f_send(&f, 12288, 4096, 2);
	f_drain(&f);
	assert_int_equal(f.s.pf.fills, fills);
	for (i = 0; i < 4; i++) {
		assert_int_equal(r[i]->done, 1);
		assert_int_equal(r[i]->got, 4096);
		req_free(r[i]);
	}
	f_free(&f);
}

/* A fill the pool will not take turns prefetch off as well */
static void test_submit_refused(void **state)
{
	struct fake f;
	struct req *r = NULL;

	f_init(&f, AHEAD, MiB);
	f.refuse_submit = true;
	r = f_send(&f, 0, 4096, 1);
	assert_true(f.s.prefetch_off);
	assert_int_equal(f.nfills, 0);
	f_drain(&f);
	assert_int_equal(r->done, 1);
	req_free(r);
	f_free(&f);
}

/* A copy that cannot start reads on its own: a hit, then a miss */
static void test_copy_refused(void **state)
{
	struct fake f;
	struct req *a = NULL;
	struct req *r = NULL;

	f_init(&f, AHEAD, MiB);
	a = f_send(&f, 0, 4096, 1);
	f_drain(&f);
	f.refuse_copy = true;
	r = f_send(&f, 4096, 4096, 1);
	assert_int_equal(f.s.hits, 1);
	assert_int_equal(f.s.misses, 2);
	assert_int_equal(f.nreads, 1);
	f_drain(&f);
	assert_int_equal(r->done, 1);
	req_free(a);
	req_free(r);
	f_free(&f);
}

/* The stream has read to its end: finished once nobody waits */
static void test_finished(void **state)
{
	struct fake f;
	struct req *a = NULL;
	struct req *b = NULL;

	f_init(&f, AHEAD, 200 * KiB);
	a = f_send(&f, 0, 4096, 1);
	assert_false(cg_direct_finished(&f.s, true));
	assert_true(cg_direct_finished(&f.s, false));
	b = f_send(&f, 150 * KiB, 50 * KiB, 2);
	assert_true(b->sr.waiting);
	/* at end of file, but b waits */
	assert_false(cg_direct_finished(&f.s, true));
	assert_false(cg_direct_finished(&f.s, false));
	f_drain(&f);
	assert_true(cg_direct_finished(&f.s, true));
	assert_int_equal(b->got, 50 * KiB);
	req_free(a);
	req_free(b);
	f_free(&f);
}

/* The stream ends with requests waiting: each is handed back once */
static void test_orphans(void **state)
{
	struct fake f;
	struct req *r[3];
	unsigned i;

	f_init(&f, AHEAD, MiB);
	r[0] = f_send(&f, 0, 4096, 1);
	r[1] = f_send(&f, 64 * KiB, 4096, 2);
	r[2] = f_send(&f, 128 * KiB, 4096, 3);
	assert_true(r[1]->sr.waiting && r[2]->sr.waiting);
	cg_direct_cancel(&f.s, &r[0]->sr);	/* not waiting: no-op */
	assert_ptr_equal(cg_direct_orphan(&f.s), &r[1]->sr);
	assert_false(r[1]->sr.waiting);
	assert_ptr_equal(cg_direct_orphan(&f.s), &r[2]->sr);
	assert_null(cg_direct_orphan(&f.s));
	assert_true(cg_direct_finished(&f.s, false));
	for (i = 0; i < 3; i++) {
		req_free(r[i]);
	}
	f_free(&f);
}

/* A request dropped while it waits is forgotten */
static void test_cancel(void **state)
{
	struct fake f;
	struct req *r[4];
	unsigned i;

	f_init(&f, AHEAD, MiB);
	r[0] = f_send(&f, 0, 4096, 1);
	for (i = 1; i < 4; i++) {
		r[i] = f_send(&f, i * 64 * KiB, 4096, i + 1);
		assert_true(r[i]->sr.waiting);
	}
	cg_direct_cancel(&f.s, &r[2]->sr);
	assert_false(r[2]->sr.waiting);
	cg_direct_cancel(&f.s, &r[1]->sr);
	cg_direct_cancel(&f.s, &r[3]->sr);
	assert_null(f.s.waiters);
	f_drain(&f);
	assert_int_equal(r[1]->done + r[2]->done + r[3]->done, 0);
	for (i = 0; i < 4; i++) {
		req_free(r[i]);
	}
	f_free(&f);
}

/*
 * More in flight than the table covers: it asks to grow; refused, it
 * asks again only for more than was refused; granted, it grows, at
 * most CG_DIRECT_MAX_GROWS times
 */
static void test_grow_refused(void **state)
{
	struct fake f;
	struct req *r[20];
	unsigned nr = 0;
	unsigned calls;

	f_init(&f, AHEAD, CAP);
	f.room = 0;
	r[nr++] = f_send(&f, 0, 64 * KiB, 8);	/* wants 10 x 64 KiB */
	assert_int_equal(f.grow_calls, 1);
	/* never the last starting buffer's worth of direct memory */
	assert_int_equal(f.grow_below, f.s.limit - f.s.base);
	assert_int_equal(f.s.base, 4 * 64 * KiB);
	assert_int_equal(f.s.grow_refused, 10);
	assert_int_equal(f.s.pf.nseg, 4);
	r[nr++] = f_send(&f, 64 * KiB, 64 * KiB, 8);
	r[nr++] = f_send(&f, 128 * KiB, 64 * KiB, 4);
	assert_int_equal(f.grow_calls, 1);	/* no more than refused */
	f.room = 2 * SEG;
	r[nr++] = f_send(&f, 192 * KiB, 64 * KiB, 9);	/* 11: too much */
	assert_int_equal(f.grow_calls, 2);
	assert_int_equal(f.s.grow_refused, 11);
	f.room = UINT64_MAX;
	r[nr++] = f_send(&f, 256 * KiB, 64 * KiB, 10);
	assert_int_equal(f.grow_calls, 3);
	assert_int_equal(f.s.pf.nseg, 12);
	assert_int_equal(f.s.grows, 1);
	for (calls = 12; calls < 20; calls++) {
		r[nr++] = f_send(&f, calls * 64 * KiB, 64 * KiB, calls);
	}
	assert_int_equal(f.s.grows, CG_DIRECT_MAX_GROWS);
	assert_int_equal(f.grow_calls, 2 + CG_DIRECT_MAX_GROWS);
	f_drain(&f);
	while (nr > 0) {
		assert_int_equal(r[--nr]->done, 1);
		req_free(r[nr]);
	}
	f_free(&f);
}

/* ---- the property ------------------------------------------------- */

/* Requests queued in the scheduler */
static unsigned f_waiting(const struct fake *f)
{
	const struct cg_direct_req *w = NULL;
	unsigned n = 0;

	for (w = f->s.waiters; w != NULL; w = w->next) {
		n++;
	}
	return n;
}

static void random_pass(unsigned seed)
{
	struct fake f;
	struct req **reqs = calloc(MAX_REQS, sizeof(*reqs));
	unsigned nreqs = 0;
	uint64_t cursor = 0;
	unsigned step, i;
	bool fail;

	assert_non_null(reqs);
	srandom(seed);
	f_init(&f, AHEAD, MiB + 555);
	f.drop = true;
	f.room = (uint64_t)(random() % 3) * 4 * SEG;
	for (step = 0; step < 20000 && nreqs < MAX_REQS; step++) {
		long r = random() % 100;
		unsigned busy = f.ncopies + f.nreads + f.nfills +
				f_waiting(&f);
		uint64_t off = cursor + (uint64_t)(random() % (3 * SEG));
		size_t n = 1 + (size_t)(random() % (SEG + SEG / 2));

		off = off > SEG ? off - SEG : 0;
		if (r < 25 && busy < 48) {
			reqs[nreqs++] = f_send(&f, off, n, 1 + random() % 8);
			cursor += n / 2;
		} else if (r < 45 && f.nfills > 0) {
			f_run_fill(&f, (unsigned)(random() % f.nfills));
		} else if (r < 65 && f.nfills > 0) {
			i = (unsigned)(random() % f.nfills);
			/* a failed fill, late in some passes */
			fail = seed % 4 == 0 && step > 12000 &&
			       random() % 100 == 0;
			if (f.fills[i].ran) {
				f_complete_fill(&f, i, fail);
			}
		} else if (r < 78 && f.ncopies > 0) {
			f_complete_copy(&f, (unsigned)(random() % f.ncopies),
					random() % 200 == 0);
		} else if (r < 90 && f.nreads > 0) {
			f_complete_read(&f, (unsigned)(random() % f.nreads));
		} else if (r < 96) {
			/* around the stream, this smbd's or another's */
			off = cursor + (uint64_t)(random() % (8 * SEG));
			n = 1 + (size_t)(random() % 8192);
			if (off + n < CAP) {
				f_write(&f, off, n, random() % 2 == 0);
			}
		} else if (r < 97 && random() % 2 == 0) {
			off = cursor + (uint64_t)(random() % (4 * SEG));
			f_truncate(&f, MIN(off, CAP), random() % 2 == 0);
		} else if (r < 98 || cursor > f.m.size) {
			cursor = (uint64_t)(random() % SEG);
		}
		f.version_fails = random() % 500 == 0;
		/* the coarse clock ticks, sometimes not past a change's */
		f.m.clock += (uint64_t)(random() % 3) * 4000000;
	}
	f.version_fails = false;
	f_drain(&f);
	for (i = 0; i < nreqs; i++) {
		if (reqs[i]->done != 1) {
			fail_msg("seed %u: request %u (%" PRIu64 "+%zu) "
				 "completed %u times",
				 seed, i, reqs[i]->off, reqs[i]->n,
				 reqs[i]->done);
		}
		req_free(reqs[i]);
	}
	free(reqs);
	/* not vacuous: both kinds of serving happened, and waiting */
	if (f.served_hits < 100 || f.served_misses < 100 ||
	    f.s.waits < 20 || f.s.stale == 0 || f.s.pf.discarded == 0) {
		fail_msg("seed %u: %" PRIu64 " hits, %" PRIu64 " misses, "
			 "%" PRIu64 " waits, %" PRIu64 " stale, %" PRIu64
			 " discarded",
			 seed, f.served_hits, f.served_misses, f.s.waits,
			 f.s.stale, f.s.pf.discarded);
	}
	f_free(&f);
}

/* Seed 4 is the first with failed fills */

static void test_random_mix(void **state)
{
	unsigned seed;

	for (seed = 1; seed <= cg_test_seeds(); seed++) {
		random_pass(seed);
	}
}

CG_TEST_MAIN(NULL, NULL,
	     cmocka_unit_test(test_miss_then_hits),
	     cmocka_unit_test(test_no_prefetch),
	     cmocka_unit_test(test_buffer),
	     cmocka_unit_test(test_waiter_woken),
	     cmocka_unit_test(test_write_while_filling),
	     cmocka_unit_test(test_truncate_while_filling),
	     cmocka_unit_test(test_foreign_write_while_filling),
	     cmocka_unit_test(test_stale_copy_served_again),
	     cmocka_unit_test(test_failed_fill),
	     cmocka_unit_test(test_submit_refused),
	     cmocka_unit_test(test_copy_refused),
	     cmocka_unit_test(test_finished),
	     cmocka_unit_test(test_orphans),
	     cmocka_unit_test(test_cancel),
	     cmocka_unit_test(test_grow_refused),
	     cmocka_unit_test(test_random_mix))
