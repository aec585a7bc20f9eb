/*
 * vfs_cacheguard engine: direct-read planning and the prefetch table
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
 * The prefetch table of a direct stream, driven by its scheduler
 * (cg_direct.c): segments of one buffer filled in the background up to
 * "ahead" bytes past the highest request. A request is served from the
 * table (HIT), waits for a segment still loading (PENDING), or is read
 * on its own (MISS). Every segment remembers the file's version from just
 * before its read; the caller validates the table against the version
 * now and reports the writes it knows of, so the table never hands out
 * bytes older than the file.
 */

#define CG_PREFETCH_SEG (1024 * 1024)
#define CG_PREFETCH_MIN_SEG (64 * 1024)
/* The largest segment cg_prefetch_align chooses for a device */
#define CG_PREFETCH_DEV_SEG (8 * 1024 * 1024)
#define CG_PREFETCH_MAX_SEGS 64

/*
 * What the file looked like to a job: ctime and size from fstat(), and
 * CLOCK_REALTIME_COARSE read just before that fstat. The kernel stamps a
 * change with the coarse clock, and before Linux 6.13 two changes within
 * one tick (one second with whole-second timestamps) share a ctime. So a
 * version is trusted ("settled") only when the clock had passed the
 * ctime's tick before the fstat: every later change then has a later
 * ctime.
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

/* The clock from which any later change gets a ctime other than v's */
uint64_t cg_pf_version_settles(const struct cg_pf_version *v);

/* Segments read under v can be served until the version changes */
bool cg_pf_version_settled(const struct cg_pf_version *v);

/*
 * fd's version now: the coarse clock first, then fstat() (the order
 * cg_pf_version_settled() relies on). -1 with errno when fstat fails.
 */
int cg_pf_version_now(int fd, struct cg_pf_version *v);

enum cg_pf_state {
	CG_PF_FREE = 0,
	CG_PF_LOADING,	/* a read into the slot is in flight */
	CG_PF_READY,
};

struct cg_pf_seg {
	enum cg_pf_state state;
	/*
	 * LOADING: invalidated, discard when the read ends; READY and
	 * pinned: invalidated, serves no one, freed when unpinned
	 */
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
 * The alignment to give cg_prefetch_init on a device whose requests go
 * up to max_request bytes (max_sectors_kb; 0: not known): from align (the
 * O_DIRECT alignment) or a huge page, whichever is more, doubled while
 * smaller than max_request, up to CG_PREFETCH_DEV_SEG, as long as "ahead"
 * still holds two of them, so that a fill is one device request
 */
size_t cg_prefetch_align(uint64_t ahead, size_t align, uint64_t max_request);

/* Bytes of buffer the table needs: slot i is at i * seg_size */
size_t cg_prefetch_memory(const struct cg_prefetch *pf);

/*
 * Segments the table wants for the largest request seen with inflight
 * requests outstanding: their window and two requests more, at most most
 * bytes and CG_PREFETCH_MAX_SEGS, never fewer than it has (0: no prefetch)
 */
unsigned cg_prefetch_wanted(const struct cg_prefetch *pf,
			    unsigned inflight,
			    uint64_t most);

/*
 * The most one stream's table grows to: this share of direct memory (a
 * quarter left most of smbclient's 8 MiB reads a MISS)
 */
#define CG_PREFETCH_STREAM_SHARE 2

/*
 * The buffer now holds nseg segments (slot i still at i * seg_size):
 * the table uses them, and keeps that much loaded past the front. Only
 * ever grows; ignored when prefetch is off.
 */
void cg_prefetch_grow(struct cg_prefetch *pf, unsigned nseg);

/* A request for [off, off + n) arrived: moves the front */
void cg_prefetch_note_read(struct cg_prefetch *pf, uint64_t off, size_t n);

/*
 * Discard loaded segments read under another version of the file; a
 * version not yet settled holds fills back until it is
 */
void cg_prefetch_validate(struct cg_prefetch *pf,
			  const struct cg_pf_version *now);

/* How [off, off + n) can be served; HIT sets *avail (short at EOF) */
enum cg_pf_lookup cg_prefetch_lookup(const struct cg_prefetch *pf,
				     uint64_t off,
				     size_t n,
				     size_t *avail);

/*
 * A piece of a HIT, one segment's, copied out by a job: where in the
 * table's buffer, how many bytes, and the version it was read under
 */
struct cg_pf_piece {
	unsigned slot;
	size_t from;	/* offset in the table's buffer */
	size_t len;
	struct cg_pf_version ver;
};

/*
 * Pin the segments of a HIT for [off, off + n) into at most max pieces;
 * returns how many, whose lengths add up to the HIT's avail. A HIT short
 * at end of file ends with the piece of the segment holding the end (of
 * no bytes if need be): its version says whether the file still ends
 * there. A pinned segment is never handed out for a fill; a write or
 * version change marks it stale. Every pin ends with cg_prefetch_unpin.
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

/*
 * Copy the pieces out of mem into dst, in order, through sys
 * (cg_sys_copy): no table access
 */
size_t cg_prefetch_copy_pieces(const struct cg_sys *sys,
			       const uint8_t *mem,
			       const struct cg_pf_piece *pieces,
			       unsigned np,
			       uint8_t *dst);

/*
 * The copy of pinned pieces ended; copied: their bytes went out and count
 * as used (a segment all used is released)
 */
void cg_prefetch_unpin(struct cg_prefetch *pf,
		       const struct cg_pf_piece *pieces,
		       unsigned np,
		       bool copied);

/*
 * The next segment to read, if any: marks *slot LOADING for
 * [*off, *off + *len). Call until it returns false. Loaded segments
 * from keep on are not reused: requests waiting for fills start there
 * (UINT64_MAX: none wait).
 */
bool cg_prefetch_next_fill(struct cg_prefetch *pf,
			   uint64_t file_size,
			   uint64_t keep,
			   unsigned *slot,
			   uint64_t *off,
			   size_t *len);

/*
 * The read into slot ended: got bytes, or -1 on error. ver is the file's
 * version taken before the read; bytes read under a version that has not
 * settled are discarded, and fills held back until it has.
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
 * A direct stream's job in smbd's thread pool (cg_dio.c): a segment's
 * fill, a request's own read (in place, or through a bounce buffer), or
 * a HIT's copy (if its pieces are still the file's). Every job takes the
 * file's version first, so that smbd's event loop never calls fstat().
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

/* Run j, in a thread of smbd's pool: fills its results */
void cg_dio_job_run(struct cg_dio_job *j);

#endif /* CG_PREFETCH_H */
