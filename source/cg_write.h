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

struct cg_sys;

/*
 * One struct cg_writer per open file that a client writes to. The glue
 * brackets every write with cg_write_begin() and cg_write_end(); the
 * engine answers with the path of the write and, once whole windows of
 * a large sequential write stream are on their way, a writeback plan
 * for smbd's thread pool (cg_write_writeback()).
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
	/*
	 * A job the pool has no thread for may be skipped rather than run
	 * on smbd's main thread: the next job does its work. Not a
	 * catch-up's, which runs where it is asked for.
	 */
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

	/* Detection, as for reads (cg_seq.h) */
	struct cg_seq seq;

	/* What has been written (done.contig and above it) */
	struct cg_done done;

	/*
	 * Writeback started below started_to; dropped below dropped_to;
	 * the job in flight drops up to dropping_to
	 */
	uint64_t started_to;
	uint64_t dropping_to;
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
	/*
	 * Its answer cannot be held: a synchronous write or recvfile's,
	 * which smbd answers as the hook returns (cg_write_catch_up)
	 */
	bool unheld;
};

/* The write mode for a share mode, what the filesystem lacks, its stack */
enum cg_mode cg_write_mode(enum cg_mode want, unsigned fs_lacks);

void cg_writer_init(struct cg_writer *w,
		    const struct cg_config *cfg,
		    unsigned fs_lacks);

struct cg_wio cg_write_begin(struct cg_writer *w, uint64_t off, size_t n);

/*
 * cg_write_begin for a write whose answer cannot be held: a synchronous
 * one (SMB_VFS_PWRITE), or one from the socket (recvfile), which goes
 * into the page cache through the next module, never uncached
 */
struct cg_wio cg_write_begin_sync(struct cg_writer *w, uint64_t off, size_t n);
struct cg_wio cg_write_begin_socket(struct cg_writer *w,
				    uint64_t off,
				    size_t n);

/*
 * An uncached write failed with err; the caller writes the range again
 * through the next module. Returns the CG_FS_* flag the filesystem now
 * lacks, or 0.
 */
unsigned cg_write_failed(struct cg_writer *w, struct cg_wio *wio, int err);

/*
 * The write ended (nwritten bytes, or -1). true: run the writeback job
 * *plan now in the pool, and report its end with cg_write_wb_done().
 */
bool cg_write_end(struct cg_writer *w,
		  const struct cg_wio *wio,
		  ssize_t nwritten,
		  struct cg_wb_plan *plan);

/*
 * Plan the next job without a new write (the last one just ended):
 * true when there is one to run now
 */
bool cg_write_replan(struct cg_writer *w, struct cg_wb_plan *plan);

/*
 * The writeback lags behind the writes: the answer to a write that
 * ended is held until the job in flight ends
 */
bool cg_write_lagging(const struct cg_writer *w);

/*
 * After every write that ended (nwritten bytes, or -1): true when it
 * wrote bytes, its answer cannot be held (wio->unheld) and the stream
 * lags. The caller then runs the job *plan itself, now, as the kernel's
 * dirty throttling makes a writer wait, and reports it with
 * cg_write_caught_up().
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
 * The job itself, in a pool thread: touches only sys, fd (the file's)
 * and res_fd (one residency may be asked of: mincore needs one that can
 * read; -1: none). Starts the writeback of plan->start, then drops
 * plan->drop again as more of it is written back, until none is cached
 * or patience_ns have passed; returns the bytes still cached then. Never
 * waits on writeback itself, which would report a writeback error here
 * and mark it seen for every later open.
 */
uint64_t cg_write_writeback(const struct cg_sys *sys,
			    int fd,
			    int res_fd,
			    const struct cg_wb_plan *plan,
			    uint64_t patience_ns);

/* How long a job waits for a lagging device: a second */
#define CG_WB_PATIENCE_NS (1000 * 1000 * 1000ULL)

/* The job of *plan ended, left bytes of its drop still cached */
void cg_write_wb_done(struct cg_writer *w,
		      const struct cg_wb_plan *plan,
		      uint64_t left);

/*
 * The job of *plan never ran (the pool had no thread for it, and it may
 * be skipped): the job the next write plans starts and waits for its
 * ranges; none is planned before (cg_write_replan)
 */
void cg_write_wb_skipped(struct cg_writer *w, const struct cg_wb_plan *plan);

/*
 * The file is closed: the range to DONTNEED now (it also starts the
 * writeback of what is still dirty), empty when there is none.
 */
struct cg_range cg_write_close(struct cg_writer *w);

#endif /* CG_WRITE_H */
