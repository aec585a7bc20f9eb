/*
 * vfs_cacheguard engine: write streams (uploads), free of Samba types
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

#ifndef CG_WRITE_H
#define CG_WRITE_H

#include "cg_file.h"
#include "cg_seq.h"

/*
 * One per open file a client writes to. The glue brackets every write
 * with cg_write_begin() and cg_write_end(); the engine answers with the
 * write's path and, for whole windows of a write stream, a writeback job.
 */

/* Answers are held while the front is this many windows past the drops */
#define CG_W_MAX_BEHIND 4

enum cg_wstate {
	CG_W_DETECTING = 0,	/* counting sequential bytes */
	CG_W_ACTIVE,		/* a large sequential write stream */
};

/* One writeback job: all of it runs in a pool thread */
struct cg_wb_plan {
	/* sync_file_range(SYNC_FILE_RANGE_WRITE): start writeback */
	struct cg_range start;
	/* started by an earlier job: DONTNEED as its writeback ends */
	struct cg_range drop;
	/* With no pool thread, skip it (the next job does its work) */
	bool may_skip;
};

struct cg_wstats {
	uint64_t bytes_written;	/* all bytes the client wrote */
	uint64_t bytes_stream;	/* of those, part of an active stream */
	uint64_t bytes_uncached;	/* written with RWF_DONTCACHE */
	uint64_t bytes_dropped;	/* written back and dropped */
	uint64_t streams;	/* times a write stream became active */
	uint64_t jobs;		/* writeback jobs */
	uint64_t fallbacks;	/* uncached writes redone buffered */
};

struct cg_writer {
	const struct cg_config *cfg;
	/* resolved: CG_MODE_DONTCACHE, or CG_MODE_DONTNEED (write-behind) */
	enum cg_mode mode;
	enum cg_wstate state;

	struct cg_seq seq;	/* detection, as for reads */
	struct cg_done done;	/* what has been written */
	/* writeback started below started_to, dropped below dropped_to */
	uint64_t started_to;
	uint64_t dropping_to;	/* the job in flight drops up to here */
	uint64_t dropped_to;
	bool busy;		/* a writeback job is in flight */
	bool skipped;		/* the last was skipped: none until a write */
	/* dontcache: a stream write went through the page cache */
	bool through_cache;
	/* What every active stream wrote, dropped at close */
	struct cg_range span;

	struct cg_wstats stats;
};

/* What cg_write_begin() tells the caller to carry into cg_write_end() */
struct cg_wio {
	uint64_t off;
	bool in_stream;
	enum cg_path path;	/* CG_PATH_NEXT or CG_PATH_UNCACHED */
	/* synchronous or recvfile's: answered as the hook returns */
	bool unheld;
};

/* The write mode for a share mode, what the filesystem lacks, its stack */
enum cg_mode cg_write_mode(enum cg_mode want, unsigned fs_lacks);

void cg_writer_init(struct cg_writer *w,
		    const struct cg_config *cfg,
		    unsigned fs_lacks);

struct cg_wio cg_write_begin(struct cg_writer *w, uint64_t off, size_t n);

/* ... for a synchronous write, or recvfile's (never uncached) */
struct cg_wio cg_write_begin_sync(struct cg_writer *w, uint64_t off, size_t n);
struct cg_wio cg_write_begin_socket(struct cg_writer *w,
				    uint64_t off,
				    size_t n);

/* An uncached write failed; returns the CG_FS_* flag now lacked, or 0 */
unsigned cg_write_failed(struct cg_writer *w, struct cg_wio *wio, int err);

/* The write ended (nwritten, or -1); true: run job *plan in the pool */
bool cg_write_end(struct cg_writer *w,
		  const struct cg_wio *wio,
		  ssize_t nwritten,
		  struct cg_wb_plan *plan);

/* Plan the next job without a new write; true: run it now */
bool cg_write_replan(struct cg_writer *w, struct cg_wb_plan *plan);

/* The writeback lags: hold the answer to a write until the job ends */
bool cg_write_lagging(const struct cg_writer *w);

/*
 * After every write that ended: true when it wrote, its answer cannot be
 * held and the stream lags; the caller then runs *plan itself, now, as
 * dirty throttling would make it wait, and reports cg_write_caught_up().
 */
bool cg_write_catch_up(struct cg_writer *w,
		       const struct cg_wio *wio,
		       ssize_t nwritten,
		       struct cg_wb_plan *plan);
/* The catch-up's job left left bytes of its drop cached */
void cg_write_caught_up(struct cg_writer *w,
			const struct cg_wb_plan *plan,
			uint64_t left);

/*
 * The job, in a pool thread: touches only sys, fd and res_fd (for the
 * residency; mincore needs a readable one; -1: none). Starts writeback
 * of plan->start, drops plan->drop until none is cached, for at most
 * CG_WB_PATIENCE_NS; returns the bytes still cached. Never waits on
 * writeback.
 */
uint64_t cg_write_writeback(const struct cg_sys *sys,
			    int fd,
			    int res_fd,
			    const struct cg_wb_plan *plan);

/* How long a job waits for a lagging device: a second */
#define CG_WB_PATIENCE_NS (1000 * 1000 * 1000ULL)

/* The job of *plan ended, left bytes of its drop still cached */
void cg_write_wb_done(struct cg_writer *w,
		      const struct cg_wb_plan *plan,
		      uint64_t left);

/* The job never ran (skipped): the next write's job covers its ranges */
void cg_write_wb_skipped(struct cg_writer *w, const struct cg_wb_plan *plan);

/* The file is closed: the range to DONTNEED now, maybe empty */
struct cg_range cg_write_close(struct cg_writer *w);

/* The close's log line, for a file with a write stream: else false */
bool cg_write_summary(const struct cg_writer *w, char *buf, size_t len);

#endif /* CG_WRITE_H */
