/*
 * vfs_cacheguard engine: write streams and write-behind
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
 * An upload is seen as a download is (cg_stream.c): a write belongs to
 * the stream when it starts within one window of the front; the stream
 * is active after both stream trigger and min file size bytes.
 *
 * Write-behind (dontneed, direct): dirty pages cannot be dropped, so once
 * [start, contig) covers a new window a job in smbd's pool starts its
 * writeback (SYNC_FILE_RANGE_WRITE) and drops the windows started before
 * it as their writeback ends; one job per file at a time. When the device
 * falls CG_W_MAX_BEHIND windows behind, the glue holds answers to
 * completed writes until the job ends (cg_write_lagging): the client gets
 * the device's pace, as with dirty throttling, never an earlier answer.
 *
 * No error is the module's: every wait for writeback (sync_file_range's
 * WAIT flags, fsync) marks a writeback error seen, hiding it from smbd's
 * own fsync. So the job never waits so: it drops what is clean and polls
 * the residency until nothing is cached or its patience runs out.
 *
 * dontcache: stream writes are pwritev2(RWF_DONTCACHE), which drops pages
 * as their writeback ends, except folios then busy; the same jobs follow
 * and bound the lag. A filesystem without it (EOPNOTSUPP, EINVAL) is
 * remembered and the write redone buffered, with write-behind alone.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>

#include "cg_util.h"
#include "cg_write.h"
#include "cg_sys.h"

#ifndef SYNC_FILE_RANGE_WRITE
#define SYNC_FILE_RANGE_WRITE 2
#endif

enum cg_mode cg_write_mode(enum cg_mode want, unsigned fs_lacks)
{
	if (fs_lacks & CG_BELOW_WRITES) {
		return CG_MODE_DONTNEED;	/* through the module below */
	}
	if (want == CG_MODE_AUTO && (fs_lacks & CG_FS_REMOTE)) {
		return CG_MODE_DONTNEED;	/* network, FUSE: man page */
	}
	if ((want == CG_MODE_AUTO || want == CG_MODE_DONTCACHE) &&
	    (fs_lacks & (CG_FS_NO_DONTCACHE | CG_FS_NO_DONTCACHE_WRITE)) ==
		    0) {
		return CG_MODE_DONTCACHE;
	}
	/* direct too: buffered writes, then write-behind (the man page) */
	return CG_MODE_DONTNEED;
}

void cg_writer_init(struct cg_writer *w,
		    const struct cg_config *cfg,
		    unsigned fs_lacks)
{
	*w = (struct cg_writer){
		.cfg = cfg,
		.mode = cg_write_mode(cfg->mode, fs_lacks),
		.span = {.off = UINT64_MAX, .end = 0},
	};
}

struct cg_wio cg_write_begin(struct cg_writer *w, uint64_t off, size_t n)
{
	struct cg_wio wio = {.off = off, .path = CG_PATH_NEXT};
	uint64_t trigger = CG_MAX(w->cfg->stream_trigger,
				  w->cfg->min_file_size);

	if (n == 0) {
		return wio;
	}
	if (!cg_seq_near(&w->seq, off, w->cfg->window)) {
		if (w->state == CG_W_ACTIVE && cg_seq_stray(&w->seq)) {
			return wio;
		}
		w->state = CG_W_DETECTING;
		cg_seq_restart(&w->seq, off);
		cg_done_reset(&w->done, off);
		w->started_to = off & ~(CG_PAGE - 1);
		w->dropping_to = w->started_to;
		w->dropped_to = w->started_to;
	}
	cg_seq_extend(&w->seq, off, n);
	if (w->state == CG_W_DETECTING && w->seq.bytes >= trigger) {
		w->state = CG_W_ACTIVE;
		w->stats.streams++;
	}
	if (w->state == CG_W_ACTIVE) {
		w->span.off = CG_MIN(w->span.off,
				     w->seq.start & ~(CG_PAGE - 1));
		w->span.end = CG_MAX(w->span.end, w->seq.front);
		wio.in_stream = true;
		if (w->mode == CG_MODE_DONTCACHE) {
			wio.path = CG_PATH_UNCACHED;
		}
	}
	return wio;
}

struct cg_wio cg_write_begin_sync(struct cg_writer *w, uint64_t off, size_t n)
{
	struct cg_wio wio = cg_write_begin(w, off, n);

	wio.unheld = true;
	return wio;
}

struct cg_wio cg_write_begin_socket(struct cg_writer *w, uint64_t off, size_t n)
{
	struct cg_wio wio = cg_write_begin_sync(w, off, n);

	wio.path = CG_PATH_NEXT;
	return wio;
}

unsigned cg_write_failed(struct cg_writer *w, struct cg_wio *wio, int err)
{
	if (wio->path != CG_PATH_UNCACHED) {
		return 0;
	}
	w->stats.fallbacks++;
	wio->path = CG_PATH_NEXT;
	if (err != EOPNOTSUPP && err != EINVAL) {
		return 0;
	}
	w->mode = CG_MODE_DONTNEED;
	return CG_FS_NO_DONTCACHE_WRITE;
}

bool cg_write_end(struct cg_writer *w,
		  const struct cg_wio *wio,
		  ssize_t nwritten,
		  struct cg_wb_plan *plan)
{
	*plan = (struct cg_wb_plan){.start = {0, 0}, .drop = {0, 0}};
	if (nwritten <= 0) {
		return false;
	}
	w->stats.bytes_written += (uint64_t)nwritten;
	if (!wio->in_stream) {
		return false;
	}
	w->stats.bytes_stream += (uint64_t)nwritten;
	if (wio->path == CG_PATH_UNCACHED) {
		w->stats.bytes_uncached += (uint64_t)nwritten;
	} else {
		w->through_cache = true;
	}
	/* a gap more than a window behind the front was skipped */
	cg_done_add(&w->done,
		    wio->off,
		    wio->off + (uint64_t)nwritten,
		    cg_seq_behind(&w->seq, w->cfg->window));
	w->skipped = false;
	return cg_write_replan(w, plan);
}

bool cg_write_replan(struct cg_writer *w, struct cg_wb_plan *plan)
{
	uint64_t window = w->cfg->window;
	uint64_t n;

	*plan = (struct cg_wb_plan){.start = {0, 0}, .drop = {0, 0}};
	if (w->state != CG_W_ACTIVE || w->busy || w->skipped ||
	    w->done.contig < w->started_to + window) {
		return false;
	}
	n = (w->done.contig - w->started_to) / window * window;
	plan->start = (struct cg_range){
		.off = w->started_to,
		.end = w->started_to + n,
	};
	/* every window whose writeback an earlier job started */
	plan->drop = (struct cg_range){
		.off = w->dropped_to,
		.end = w->started_to,
	};
	w->dropping_to = w->started_to;
	w->started_to += n;
	w->busy = true;
	w->stats.jobs++;
	plan->may_skip = true;
	return true;
}

void cg_write_wb_skipped(struct cg_writer *w, const struct cg_wb_plan *plan)
{
	w->busy = false;
	w->skipped = true;
	w->stats.jobs--;
	/* back to before the plan, except what a catch-up dropped meanwhile */
	w->started_to = CG_MAX(plan->start.off, w->dropped_to);
	w->dropping_to = w->dropped_to;
}

/* The first few polls are quick: a window's writeback is often over */
#define CG_WB_POLL_NS (1000 * 1000ULL)
#define CG_WB_POLL_MAX_NS (32 * 1000 * 1000ULL)

uint64_t cg_write_writeback(const struct cg_sys *sys,
			    int fd,
			    int res_fd,
			    const struct cg_wb_plan *plan)
{
	const struct cg_range *s = &plan->start;
	const struct cg_range *d = &plan->drop;
	uint64_t poll = CG_WB_POLL_NS;
	uint64_t waited = 0;
	uint64_t left = 0;

	/*
	 * Only starts writeback (WB_SYNC_NONE), which may fail and leave
	 * pages dirty: each DONTNEED below starts its range's writeback too.
	 * Nothing here reports a writeback error or marks one seen.
	 */
	if (s->end > s->off) {
		(void)sys->sync_file_range(fd, s->off, s->end - s->off,
					   SYNC_FILE_RANGE_WRITE);
	}
	if (d->end <= d->off) {
		return 0;
	}
	for (;;) {
		sys->fadvise(fd, d->off, d->end - d->off, POSIX_FADV_DONTNEED);
		if (res_fd < 0 || sys->resident(res_fd, d->off,
						d->end - d->off, &left) != 0) {
			return 0;	/* no way to tell: dropped, once */
		}
		if (left == 0 || waited >= CG_WB_PATIENCE_NS) {
			return left;
		}
		cg_sys_sleep(sys, poll);
		waited += poll;
		poll = CG_MIN(2 * poll, CG_WB_POLL_MAX_NS);
	}
}

void cg_write_wb_done(struct cg_writer *w,
		      const struct cg_wb_plan *plan,
		      uint64_t left)
{
	w->busy = false;
	w->dropping_to = w->dropped_to;
	/* accounted as a catch-up's drop; left cached, the next job drops it */
	if (plan->drop.end > plan->drop.off) {
		cg_write_caught_up(w, plan, left);
	}
}

bool cg_write_lagging(const struct cg_writer *w)
{
	/*
	 * Write-behind counts from what is dropped (the job's range stays
	 * cached until it ends). dontcache, where the kernel drops pages as
	 * written, from the job's drop end, to keep more writeback queued;
	 * not after a write through the cache (recvfile).
	 */
	uint64_t from = w->mode == CG_MODE_DONTCACHE && !w->through_cache
				? w->dropping_to
				: w->dropped_to;

	return w->busy &&
	       w->seq.front > from + CG_W_MAX_BEHIND * w->cfg->window;
}

bool cg_write_catch_up(struct cg_writer *w,
		       const struct cg_wio *wio,
		       ssize_t nwritten,
		       struct cg_wb_plan *plan)
{
	uint64_t window = w->cfg->window;
	uint64_t end = w->started_to;

	*plan = (struct cg_wb_plan){.start = {0, 0}, .drop = {0, 0}};
	if (nwritten <= 0 || !wio->unheld || !cg_write_lagging(w)) {
		return false;
	}
	/* everything written in whole windows, as a job would start it */
	if (w->done.contig > w->started_to) {
		end += (w->done.contig - w->started_to) / window * window;
	}
	if (end <= w->dropped_to) {
		return false;
	}
	plan->start = (struct cg_range){.off = w->started_to, .end = end};
	plan->drop = (struct cg_range){.off = w->dropped_to, .end = end};
	w->started_to = CG_MAX(w->started_to, end);
	return true;
}

void cg_write_caught_up(struct cg_writer *w,
			const struct cg_wb_plan *plan,
			uint64_t left)
{
	if (left != 0) {
		return;
	}
	w->stats.bytes_dropped += plan->drop.end - plan->drop.off;
	w->dropped_to = CG_MAX(w->dropped_to, plan->drop.end);
	w->dropping_to = CG_MAX(w->dropping_to, w->dropped_to);
}

struct cg_range cg_write_close(struct cg_writer *w)
{
	/* dontcache too: writes before the stream was seen were cached */
	return w->span.end > w->span.off ? w->span : (struct cg_range){0, 0};
}

bool cg_write_summary(const struct cg_writer *w, char *buf, size_t len)
{
	const struct cg_wstats *st = &w->stats;

	if (st->streams == 0) {
		return false;
	}
	snprintf(buf, len,
		 "written %" PRIu64 " mode %s; stream %" PRIu64 " uncached "
		 "%" PRIu64 " written back and dropped %" PRIu64 " in %" PRIu64
		 " jobs; streams %" PRIu64 "; fallbacks %" PRIu64,
		 st->bytes_written, cg_mode_name(w->mode), st->bytes_stream,
		 st->bytes_uncached, st->bytes_dropped, st->jobs, st->streams,
		 st->fallbacks);
	return true;
}
