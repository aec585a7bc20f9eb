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

#ifndef CG_DSCHED_H
#define CG_DSCHED_H

#include "cg_prefetch.h"

/*
 * One request of a direct stream, embedded in the glue's request state:
 * the engine queues it while it waits for a fill. owner is the glue's.
 */
struct cg_dsched_req {
	void *owner;
	uint64_t off;
	size_t n;
	bool waiting;		/* on the stream's waiters */
	bool deferred;		/* has waited once (counted, defer said) */
	struct cg_dsched_req *prev, *next;
};

/*
 * What the scheduler asks the glue to do; priv is the glue's stream.
 * Every function may call back into the scheduler only where it says.
 */
struct cg_dsched_ops {
	/* Start reading [off, off + len) into slot; false: could not */
	bool (*submit_fill)(void *priv, unsigned slot, uint64_t off,
			    size_t len);
	/* The file's version now (cg_direct_version); false: unknown */
	bool (*file_version)(void *priv, struct cg_pf_version *v);
	/*
	 * extra bytes more of prefetch buffer: budget units below the
	 * first below bytes of direct memory (cg_dsched_adapt), and memory;
	 * false: no room
	 */
	bool (*grow)(void *priv, size_t extra, uint64_t below);
	/*
	 * A HIT of avail bytes: pin its pieces (cg_dsched_pin) and copy
	 * them out, then report cg_dsched_copy_done; false: no copy was
	 * started (nothing is left pinned) and the request reads on its own
	 */
	bool (*start_copy)(void *priv, struct cg_dsched_req *r, size_t avail);
	/*
	 * A MISS: the request's own aligned read, which completes it on its
	 * own. false: no read was started (the request has failed)
	 */
	bool (*start_read)(void *priv, struct cg_dsched_req *r);
	/* r waits for a fill for the first time: its completion will come
	 * from a fill's, so the glue defers it */
	void (*defer)(void *priv, struct cg_dsched_req *r);
	/*
	 * The sync path: report the fills overlapping [off, off + n) now
	 * (cg_dsched_fill_done), running there those no thread has started
	 * and waiting for those a thread reads until their deadline
	 * (cg_dsched_sync_deadline); false when one is overdue, or none was
	 * found
	 */
	bool (*finish_fills)(void *priv, uint64_t off, size_t n);
};

/* Growths of a stream's buffer at most (the glue keeps one budget
 * hold for each) */
#define CG_DSCHED_MAX_GROWS 4

/* A direct stream's scheduler: the prefetch table and who waits on it */
struct cg_dsched {
	const struct cg_dsched_ops *ops;
	void *priv;
	struct cg_prefetch pf;
	uint64_t file_size;	/* as the latest version said */
	uint64_t limit;		/* cacheguard:direct memory */
	uint64_t base;		/* the buffer it starts with, bytes */
	bool prefetch_off;	/* a fill failed: read on demand only */
	unsigned grows;
	unsigned grow_refused;	/* segments there was no room for */
	struct cg_dsched_req *waiters;
	uint64_t fill_ns;	/* what a fill takes, on average; 0: unknown */
	uint64_t hits, waits, misses, stale;
};

/* ahead bytes of prefetch at align; file_size as known at open */
void cg_dsched_init(struct cg_dsched *s,
		    const struct cg_dsched_ops *ops,
		    void *priv,
		    uint64_t ahead,
		    size_t align,
		    uint64_t file_size,
		    uint64_t limit);

/*
 * The buffer the stream maps: its bytes, and in *reserve the address
 * space to reserve for the growths (cg_dsched_ops.grow)
 */
size_t cg_dsched_buffer(const struct cg_dsched *s, size_t *reserve);

/*
 * A request for [off, off + n) arrived with inflight requests of the
 * file in flight (this one included): served, queued or read
 */
void cg_dsched_request(struct cg_dsched *s,
		       struct cg_dsched_req *r,
		       uint64_t off,
		       size_t n,
		       unsigned inflight);

/*
 * The sync path: HIT copies into dst out of mem (the table's buffer),
 * through sys (cg_sys_copy), and returns the bytes; -1 for a MISS, which
 * the caller reads itself
 */
ssize_t cg_dsched_pread(struct cg_dsched *s,
			const struct cg_sys *sys,
			const uint8_t *mem,
			uint64_t off,
			size_t n,
			unsigned inflight,
			uint8_t *dst);

/* A job saw the file at version v: the table follows it */
void cg_dsched_saw_version(struct cg_dsched *s,
			   const struct cg_pf_version *v);

/*
 * The fill of slot ended: got bytes or -1, read under ver, in ns (0: not
 * timed). True when it failed and turned prefetch off for the stream
 * (the glue logs it).
 */
bool cg_dsched_fill_done(struct cg_dsched *s,
			 unsigned slot,
			 ssize_t got,
			 const struct cg_pf_version *ver,
			 uint64_t ns);

/*
 * From ops->start_copy: pin the HIT of r into at most max pieces, *np
 * of them. False, with nothing pinned, when they do not add up to avail
 * (a short read the lookup did not say): r then reads on its own.
 */
bool cg_dsched_pin(struct cg_dsched *s,
		   const struct cg_dsched_req *r,
		   size_t avail,
		   struct cg_pf_piece *pieces,
		   unsigned max,
		   unsigned *np);

/* Pieces a HIT of r pins at most */
unsigned cg_dsched_pieces_max(const struct cg_dsched *s,
			      const struct cg_dsched_req *r);

/* Undo cg_dsched_pin when no copy could be started */
void cg_dsched_unpin(struct cg_dsched *s,
		     const struct cg_pf_piece *pieces,
		     unsigned np);

/*
 * A HIT's copy ended: copied, or found its pieces stale (version_ok:
 * the version check itself worked). r NULL: the request is gone. True
 * when r got its bytes; false when it was served again.
 */
bool cg_dsched_copy_done(struct cg_dsched *s,
			 struct cg_dsched_req *r,
			 const struct cg_pf_piece *pieces,
			 unsigned np,
			 bool copied,
			 bool version_ok);

/* A fill's read took ns (for cg_dsched_sync_deadline) */
void cg_dsched_fill_took(struct cg_dsched *s, uint64_t ns);

/*
 * Before a fill is known to take anything, the sync path may wait this
 * long for one
 */
#define CG_DSCHED_FIRST_WAIT_NS (250 * 1000 * 1000ULL)

/*
 * The sync path finds a fill of its range in a thread's hands, started
 * at started_ns (a monotonic clock's): until when (the same clock) it
 * may wait for it. Twice what the stream's fills take, 1 ms at least: a
 * fill in flight ends about as soon as a read of the request's own would
 * (as a buffered read waits for its readahead's pages); a fill held up
 * (a stalled device, a descheduled thread) is overdue, and the request
 * reads on its own rather than wait.
 */
uint64_t cg_dsched_sync_deadline(const struct cg_dsched *s,
				 uint64_t started_ns);

/* r goes away: off the waiters */
void cg_dsched_cancel(struct cg_dsched *s, struct cg_dsched_req *r);

/* This smbd changes [off, off + n) (off -1: anything of the file) */
void cg_dsched_note_write(struct cg_dsched *s, int64_t off, uint64_t n);

/*
 * The stream needs its buffer no more: nobody waits, and it has read to
 * end of file or its file left direct mode (still_direct)
 */
bool cg_dsched_finished(const struct cg_dsched *s, bool still_direct);

/* The stream ends: the next request still waiting, taken off, or NULL */
struct cg_dsched_req *cg_dsched_orphan(struct cg_dsched *s);

#endif /* CG_DSCHED_H */
