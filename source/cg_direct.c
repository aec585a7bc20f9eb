/*
 * vfs_cacheguard engine: the scheduler of a direct stream's prefetch
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
 * What a direct stream does next is decided here; the glue
 * (modules/cacheguard_direct.c) runs the jobs and reports their end, and
 * this file acts only through its ops.
 *
 * O_DIRECT has no readahead, so the table (cg_prefetch.c) keeps the next
 * cacheguard:direct prefetch bytes loading in one buffer, counted against
 * direct memory; it grows to the client's reads in flight plus two, up
 * to half the budget, while the budget has room (cg_direct_adapt).
 *
 *   request --> look up --+-- HIT -----> pin, copy out (ops->start_copy)
 *                         +-- PENDING -> wait for the fill (waiters)
 *                         +-- MISS ----> own read (ops->start_read)
 *           --> refill: a fill per segment to load (ops->submit_fill)
 *   fill done --> table, wake waiters (served again), refill
 *   copy done --> unpin; the version check failed: serve it again
 *
 * Writes this smbd makes drop what they overlap (cg_direct_note_write);
 * the file's version, taken by every job, catches the rest. A failed
 * fill turns prefetch off: requests then read on their own.
 */

#include "lib/util/dlinklist.h"

#include "cg_direct.h"
#include "cg_util.h"

void cg_direct_init(struct cg_direct *s,
		    const struct cg_direct_ops *ops,
		    void *priv,
		    uint64_t ahead,
		    size_t align,
		    uint64_t file_size,
		    uint64_t limit)
{
	*s = (struct cg_direct){
		.ops = ops,
		.priv = priv,
		.file_size = file_size,
		.limit = limit,
	};
	cg_prefetch_init(&s->pf, ahead, align);
	s->base = cg_prefetch_memory(&s->pf);
}

size_t cg_direct_buffer(const struct cg_direct *s, size_t *reserve)
{
	*reserve = s->pf.seg_size * CG_PREFETCH_MAX_SEGS;
	return cg_prefetch_memory(&s->pf);
}

/* Load what the table asks for; a fill that cannot start ends prefetch */
static void cg_direct_refill(struct cg_direct *s)
{
	const struct cg_pf_version none = {0};
	const struct cg_direct_req *w = NULL;
	uint64_t keep = UINT64_MAX;
	unsigned slot;
	uint64_t off;
	size_t len;

	/* what waiting requests are about to copy must stay */
	for (w = s->waiters; w != NULL; w = w->next) {
		keep = CG_MIN(keep, w->off);
	}
	while (!s->prefetch_off &&
	       cg_prefetch_next_fill(&s->pf, s->file_size, keep, &slot, &off,
				     &len)) {
		if (!s->ops->submit_fill(s->priv, slot, off, len)) {
			cg_prefetch_filled(&s->pf, slot, -1, &none);
			s->prefetch_off = true;
			break;
		}
	}
}

/*
 * The client's reads outgrew the table: grow it if the budget has room,
 * else ask again only for more than was refused. Growths stay below
 * direct memory less one starting buffer (base): the next copy to start
 * always finds room.
 */
static void cg_direct_adapt(struct cg_direct *s, unsigned inflight)
{
	unsigned want = cg_prefetch_wanted(&s->pf, inflight,
					   s->limit / CG_PREFETCH_STREAM_SHARE);
	size_t extra;

	if (want <= s->pf.nseg || want <= s->grow_refused ||
	    s->prefetch_off || s->grows == CG_DIRECT_MAX_GROWS ||
	    s->limit <= s->base) {
		return;
	}
	extra = (size_t)(want - s->pf.nseg) * s->pf.seg_size;
	if (!s->ops->grow(s->priv, extra, s->limit - s->base)) {
		s->grow_refused = want;
		return;
	}
	s->grows++;
	cg_prefetch_grow(&s->pf, want);
}

/* Serve a request from the table, queue it behind a fill, or read it */
static void cg_direct_serve(struct cg_direct *s, struct cg_direct_req *r)
{
	enum cg_pf_lookup look = CG_PF_MISS;
	size_t avail = 0;

	if (s->pf.nseg > 0) {
		look = cg_prefetch_lookup(&s->pf, r->off, r->n, &avail);
	}
	switch (look) {
	case CG_PF_HIT:
		s->hits++;
		if (s->ops->start_copy(s->priv, r, avail)) {
			return;
		}
		break;
	case CG_PF_PENDING:
		if (!r->deferred) {
			s->waits++;
			/* woken from a read's completion: do not nest */
			s->ops->defer(s->priv, r);
			r->deferred = true;
		}
		r->waiting = true;
		DLIST_ADD_END(s->waiters, r);
		return;
	case CG_PF_MISS:
		break;
	}
	s->misses++;
	(void)s->ops->start_read(s->priv, r);
}

/* A fill ended: serve, or read, what waited for it */
static void cg_direct_wake(struct cg_direct *s)
{
	struct cg_direct_req *list = s->waiters;
	struct cg_direct_req *r = NULL;
	struct cg_direct_req *next = NULL;

	/* detach the list: who still has to wait is queued again */
	s->waiters = NULL;
	for (r = list; r != NULL; r = next) {
		next = r->next;
		r->prev = NULL;
		r->next = NULL;
		r->waiting = false;
		cg_direct_serve(s, r);
	}
}

void cg_direct_request(struct cg_direct *s,
		       struct cg_direct_req *r,
		       uint64_t off,
		       size_t n,
		       unsigned inflight)
{
	r->off = off;
	r->n = n;
	cg_prefetch_note_read(&s->pf, off, n);
	cg_direct_adapt(s, inflight);
	cg_direct_serve(s, r);
	cg_direct_refill(s);
}

unsigned cg_direct_pieces_max(const struct cg_direct *s,
			      const struct cg_direct_req *r)
{
	return (unsigned)CG_MIN(r->n / s->pf.seg_size + 2,
				CG_PREFETCH_MAX_SEGS + 1);
}

bool cg_direct_pin(struct cg_direct *s,
		   const struct cg_direct_req *r,
		   size_t avail,
		   struct cg_pf_piece *pieces,
		   unsigned max,
		   unsigned *np)
{
	size_t sum = 0;
	unsigned i;

	*np = cg_prefetch_pin(&s->pf, r->off, r->n, pieces, max);
	for (i = 0; i < *np; i++) {
		sum += pieces[i].len;
	}
	/* never a short read that the lookup did not say: end of file */
	if (sum != avail) {
		cg_prefetch_unpin(&s->pf, pieces, *np, false);
		*np = 0;
		return false;
	}
	return true;
}

bool cg_direct_job_done(struct cg_direct *s,
			const struct cg_dio_job *w,
			unsigned slot,
			struct cg_direct_req *r)
{
	bool turned_off = false;

	if (w->version_ok) {
		/* what the file looks like now: cheaper than an fstat */
		s->file_size = w->ver.size;
		cg_prefetch_validate(&s->pf, &w->ver);
	}
	if (w->kind == CG_JOB_FILL && w->ret == -1 && !s->prefetch_off) {
		/* requests still read on demand, and fall back from there */
		s->prefetch_off = true;
		turned_off = true;
	}
	if (w->kind == CG_JOB_FILL) {
		cg_prefetch_filled(&s->pf, slot, w->ret, &w->ver);
		cg_direct_wake(s);
		cg_direct_refill(s);
	} else if (w->kind == CG_JOB_COPY) {
		cg_prefetch_unpin(&s->pf, w->pieces, w->npieces, w->ret >= 0);
	}
	if (w->kind == CG_JOB_COPY && w->ret < 0 && r != NULL) {
		/* not the file's bytes any more: serve it again, knowing so */
		s->stale++;
		if (!w->version_ok) {
			cg_prefetch_reset(&s->pf);
		}
		cg_direct_serve(s, r);
		cg_direct_refill(s);
	}
	return turned_off;
}

void cg_direct_cancel(struct cg_direct *s, struct cg_direct_req *r)
{
	if (r->waiting) {
		DLIST_REMOVE(s->waiters, r);
		r->waiting = false;
	}
}

void cg_direct_note_write(struct cg_direct *s, int64_t off, uint64_t n)
{
	if (off < 0) {
		cg_prefetch_reset(&s->pf);
	} else {
		cg_prefetch_invalidate(&s->pf, (uint64_t)off, n);
	}
}

bool cg_direct_finished(const struct cg_direct *s, bool still_direct)
{
	return s->waiters == NULL &&
	       (!still_direct || s->pf.front >= s->file_size);
}

struct cg_direct_req *cg_direct_orphan(struct cg_direct *s)
{
	struct cg_direct_req *r = s->waiters;

	if (r != NULL) {
		cg_direct_cancel(s, r);
	}
	return r;
}
