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

#ifndef CG_DIRECT_H
#define CG_DIRECT_H

#include "cg_prefetch.h"

/*
 * One request of a direct stream, embedded in the glue's request state:
 * the engine queues it while it waits for a fill. owner is the glue's.
 */
struct cg_direct_req {
	void *owner;
	uint64_t off;
	size_t n;
	bool waiting;		/* on the stream's waiters */
	bool deferred;		/* has waited once (counted, defer said) */
	struct cg_direct_req *prev, *next;
};

/* What the scheduler asks the glue to do; priv is the glue's stream */
struct cg_direct_ops {
	/* Start reading [off, off + len) into slot; false: could not */
	bool (*submit_fill)(void *priv, unsigned slot, uint64_t off,
			    size_t len);
	/* extra bytes more buffer, units below the first below bytes */
	bool (*grow)(void *priv, size_t extra, uint64_t below);
	/*
	 * A HIT of avail bytes: pin (cg_direct_pin), copy, report
	 * cg_direct_job_done; false: nothing started or left pinned
	 */
	bool (*start_copy)(void *priv, struct cg_direct_req *r, size_t avail);
	/* A MISS: the request's own read; false: none started, it failed */
	bool (*start_read)(void *priv, struct cg_direct_req *r);
	/* r waits for a fill for the first time: the glue defers it */
	void (*defer)(void *priv, struct cg_direct_req *r);
};

/* Growths of a stream's buffer at most (a budget hold each) */
#define CG_DIRECT_MAX_GROWS 4

/* A direct stream's scheduler: the prefetch table and who waits on it */
struct cg_direct {
	const struct cg_direct_ops *ops;
	void *priv;
	struct cg_prefetch pf;
	uint64_t file_size;	/* as the latest version said */
	uint64_t limit;		/* cacheguard:direct memory */
	uint64_t base;		/* the buffer it starts with, bytes */
	bool prefetch_off;	/* a fill failed: read on demand only */
	unsigned grows;
	unsigned grow_refused;	/* segments there was no room for */
	struct cg_direct_req *waiters;
	uint64_t hits, waits, misses, stale;
};

/* ahead bytes of prefetch at align; file_size as known at open */
void cg_direct_init(struct cg_direct *s,
		    const struct cg_direct_ops *ops,
		    void *priv,
		    uint64_t ahead,
		    size_t align,
		    uint64_t file_size,
		    uint64_t limit);

/* The buffer's bytes, and in *reserve the address space for growths */
size_t cg_direct_buffer(const struct cg_direct *s, size_t *reserve);

/* A request arrived, inflight of the file's in flight with it */
void cg_direct_request(struct cg_direct *s,
		       struct cg_direct_req *r,
		       uint64_t off,
		       size_t n,
		       unsigned inflight);

/*
 * From ops->start_copy: pin r's HIT into at most max pieces; false, with
 * nothing pinned, when they do not add up to avail
 */
bool cg_direct_pin(struct cg_direct *s,
		   const struct cg_direct_req *r,
		   size_t avail,
		   struct cg_pf_piece *pieces,
		   unsigned max,
		   unsigned *np);

/* Pieces a HIT of r pins at most */
unsigned cg_direct_pieces_max(const struct cg_direct *s,
			      const struct cg_direct_req *r);

/*
 * Job w ended (slot: a fill's; r: a copy's request, NULL once gone): the
 * table follows the version it saw; a failed fill turns prefetch off
 * (then true), a stale copy's request is served again. The waiters of a
 * fill are served, or read, then the table refilled.
 */
bool cg_direct_job_done(struct cg_direct *s,
			const struct cg_dio_job *w,
			unsigned slot,
			struct cg_direct_req *r);

void cg_direct_cancel(struct cg_direct *s, struct cg_direct_req *r);

/* This smbd changes [off, off + n) (off -1: anything of the file) */
void cg_direct_note_write(struct cg_direct *s, int64_t off, uint64_t n);

/* Nobody waits, and it read to EOF or left direct mode (still_direct) */
bool cg_direct_finished(const struct cg_direct *s, bool still_direct);

/* The stream ends: the next request still waiting, taken off, or NULL */
struct cg_direct_req *cg_direct_orphan(struct cg_direct *s);

#endif /* CG_DIRECT_H */
