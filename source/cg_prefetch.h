/*
 * vfs_cacheguard engine: direct-read planning, the prefetch table and
 * direct mode's buffers on huge pages
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

#ifndef CG_PREFETCH_H
#define CG_PREFETCH_H

#include "cg_dio.h"
#include "cg_sys.h"

/*
 * A direct stream's prefetch table (driven by cg_direct.c): segments of
 * one buffer filled up to "ahead" past the highest request. Each segment
 * keeps the file's version from just before its read; the caller
 * validates against the version now and reports writes.
 */

#define CG_PREFETCH_SEG (1024 * 1024)
#define CG_PREFETCH_MIN_SEG (64 * 1024)
/* The largest segment cg_prefetch_align chooses for a device */
#define CG_PREFETCH_DEV_SEG (8 * 1024 * 1024)
#define CG_PREFETCH_MAX_SEGS 64

/* Prefetch segments are huge pages at least: one device request a fill */
#define CG_HUGE_PAGE (2 * 1024 * 1024)

/*
 * An O_DIRECT buffer from mmap, never inherited (MADV_DONTFORK: a fork
 * during a read must not leave its pages copy-on-write); NULL without
 * memory. Not malloc: freed large buffers raise glibc's mmap threshold
 * and later ones stay on the heap.
 */
void *cg_buf_map(size_t len);
void cg_buf_unmap(void *p, size_t len);

/*
 * The prefetch buffer: reserve bytes of address space on a huge page
 * boundary, huge pages asked for, never inherited, [0, used) usable;
 * cg_buf_commit makes more usable (false: refused, strict overcommit)
 */
void *cg_buf_reserve(size_t reserve, size_t used);
bool cg_buf_commit(void *p, size_t off, size_t len);

/*
 * ctime and size from fstat(), and CLOCK_REALTIME_COARSE read just
 * before. Two changes within one tick of the coarse clock may share a
 * ctime (before Linux 6.13), so a version is trusted ("settled") only
 * when the clock had passed the ctime's tick before the fstat.
 */
struct cg_pf_version {
	uint64_t ctime_ns;
	uint64_t size;
	uint64_t clock_ns;
};

/* The coarse clock ticks at least this often (HZ >= 100) */
#define CG_PF_TICK_NS 10000000ULL
/* Whole-second timestamps (ext4 with 128-byte inodes; FAT's are 2 s) */
#define CG_PF_COARSE_TS_NS 2000000000ULL

/* fd's version now: the clock, then fstat(); -1 with errno on failure */
int cg_pf_version_now(int fd, struct cg_pf_version *v);

enum cg_pf_state {
	CG_PF_FREE = 0,
	CG_PF_LOADING,	/* a read into the slot is in flight */
	CG_PF_READY,
};

struct cg_pf_seg {
	enum cg_pf_state state;
	/* invalidated: LOADING, free at the end; pinned, free at unpin */
	bool stale;
	uint64_t off;	/* file offset, a multiple of seg_size */
	size_t len;	/* READY: bytes read; short means end of file */
	size_t used;	/* READY: bytes copied out so far */
	struct cg_pf_version ver;
	unsigned pins;	/* READY: copies out of it in flight */
};

enum cg_pf_lookup {
	CG_PF_MISS = 0,	/* some byte is in no segment: read directly */
	CG_PF_PENDING,	/* all covered, some segment still loading */
	CG_PF_HIT,	/* all covered by loaded segments (or end of file) */
};

struct cg_prefetch {
	size_t seg_size;
	unsigned nseg;		/* 0: no prefetch */
	uint64_t ahead;		/* keep this much loaded past the front */
	uint64_t front;		/* end of the highest request seen */
	size_t max_read;	/* the largest request seen */
	uint64_t discarded;	/* segments thrown away as possibly stale */
	uint64_t unsettled;	/* fills thrown away: the file just changed */
	uint64_t fills;		/* segment reads started */
	uint64_t clock_ns;	/* the latest clock of a version seen */
	uint64_t hold_ns;	/* no fills before this clock: file changing */
	struct cg_pf_seg seg[CG_PREFETCH_MAX_SEGS];
};

/* Geometry for "ahead" bytes of prefetch at this alignment */
void cg_prefetch_init(struct cg_prefetch *pf, uint64_t ahead, size_t align);

/*
 * The alignment for cg_prefetch_init on a device with requests up to
 * max_request (0: not known): align or a huge page, doubled while below
 * max_request, up to CG_PREFETCH_DEV_SEG, while "ahead" holds two
 */
size_t cg_prefetch_align(uint64_t ahead, size_t align, uint64_t max_request);

/* Bytes of buffer the table needs: slot i is at i * seg_size */
size_t cg_prefetch_memory(const struct cg_prefetch *pf);

/*
 * Segments wanted for inflight requests of the largest size seen (see
 * cg_prefetch.c); never fewer than it has, 0 when prefetch is off
 */
unsigned cg_prefetch_wanted(const struct cg_prefetch *pf,
			    unsigned inflight,
			    uint64_t most);

/* The most of direct memory one stream's table grows to: 1/this */
#define CG_PREFETCH_STREAM_SHARE 2

/* The buffer now holds nseg segments; only ever grows, never when off */
void cg_prefetch_grow(struct cg_prefetch *pf, unsigned nseg);

/* A request for [off, off + n) arrived: moves the front */
void cg_prefetch_note_read(struct cg_prefetch *pf, uint64_t off, size_t n);

/* Discard segments of another version; an unsettled one holds fills */
void cg_prefetch_validate(struct cg_prefetch *pf,
			  const struct cg_pf_version *now);

/* How [off, off + n) can be served; HIT sets *avail (short at EOF) */
enum cg_pf_lookup cg_prefetch_lookup(const struct cg_prefetch *pf,
				     uint64_t off,
				     size_t n,
				     size_t *avail);

/* A piece of a HIT: one segment's bytes, and their version */
struct cg_pf_piece {
	unsigned slot;
	size_t from;	/* offset in the table's buffer */
	size_t len;
	struct cg_pf_version ver;
};

/*
 * Pin the segments of a HIT for [off, off + n) into at most max pieces,
 * whose lengths add up to avail. A HIT short at EOF ends with the piece
 * (maybe of no bytes) of the segment holding the end, whose version says
 * whether the file still ends there. Every pin ends with an unpin.
 */
unsigned cg_prefetch_pin(struct cg_prefetch *pf,
			 uint64_t off,
			 size_t n,
			 struct cg_pf_piece *pieces,
			 unsigned max);

/* Every piece was read under the file's version now */
bool cg_prefetch_pieces_current(const struct cg_pf_piece *pieces,
				unsigned np,
				const struct cg_pf_version *now);

/* Copy the pieces out of mem into dst through sys: no table access */
size_t cg_prefetch_copy_pieces(const struct cg_sys *sys,
			       const uint8_t *mem,
			       const struct cg_pf_piece *pieces,
			       unsigned np,
			       uint8_t *dst);

/* The copy ended; copied: the bytes count as used (all used: freed) */
void cg_prefetch_unpin(struct cg_prefetch *pf,
		       const struct cg_pf_piece *pieces,
		       unsigned np,
		       bool copied);

/*
 * The next segment to read, if any, marked LOADING; call until false.
 * READY segments from keep on (where waiting requests start) stay.
 */
bool cg_prefetch_next_fill(struct cg_prefetch *pf,
			   uint64_t file_size,
			   uint64_t keep,
			   unsigned *slot,
			   uint64_t *off,
			   size_t *len);

/*
 * The read into slot ended: got bytes or -1. Bytes read under an
 * unsettled version ver are discarded and fills held back.
 */
void cg_prefetch_filled(struct cg_prefetch *pf,
			unsigned slot,
			ssize_t got,
			const struct cg_pf_version *ver);

/* [off, off + n) is being written: nothing overlapping may be served */
void cg_prefetch_invalidate(struct cg_prefetch *pf, uint64_t off, uint64_t n);

/* Everything is suspect (the file changed, prefetch failed) */
void cg_prefetch_reset(struct cg_prefetch *pf);

/*
 * A direct stream's job in smbd's pool (cg_dio.c): a fill, a request's
 * own read, or a HIT's copy. Each takes the file's version first, so the
 * event loop never calls fstat().
 */
enum cg_dio_job_kind {
	CG_JOB_FILL = 0,
	CG_JOB_READ,
	CG_JOB_COPY,
};

struct cg_dio_job {
	/* what to do */
	enum cg_dio_job_kind kind;
	const struct cg_sys *sys;
	int fd; /* O_DIRECT */
	uint8_t *buf;
	size_t count;
	uint64_t offset;
	size_t align;
	const uint8_t *mem;		  /* COPY: the table's buffer */
	const struct cg_pf_piece *pieces; /* COPY: what to copy */
	unsigned npieces;
	bool inplace;		    /* READ: into the request's own */
	struct cg_dio_inplace plan; /* READ, in place */
	uint8_t *bounce;	    /* READ: in place its tail's, or all */
	unsigned ioprio;	    /* the thread's, while it reads */

	/* what it did */
	bool version_ok;
	struct cg_pf_version ver; /* the file just before the read */
	bool stale;		  /* COPY: pieces not current */
	ssize_t ret;
	int err;
	uint64_t duration; /* ns, on the monotonic clock */
};

/*
 * Plan a request's own read j (buf, offset, count, align: the request's):
 * *p widened, and in place into buf (j->inplace, j->plan) where the
 * kernel pins pages (pins) and cg_dio_inplace allows. *bounce: the bytes
 * of bounce it needs, and *charge whether direct memory pays for them:
 * in place, its tail's few blocks, free, so a MISS stays direct under a
 * full budget; else the widened read. false when p cannot be had.
 */
bool cg_dio_read_plan(struct cg_dio_job *j,
		      bool pins,
		      struct cg_dio_plan *p,
		      size_t *bounce,
		      bool *charge);

/* Run j, in a thread of smbd's pool: fills its results */
void cg_dio_job_run(struct cg_dio_job *j);

/*
 * The bytes a copy or read j gave its request of n bytes (j->ret >= 0):
 * a read through a bounce, as plan p widened it, copied out into dst
 */
size_t cg_dio_job_result(const struct cg_dio_job *j,
			 const struct cg_dio_plan *p,
			 size_t n,
			 uint8_t *dst);

#endif /* CG_PREFETCH_H */
