/*
 * vfs_cacheguard engine: stream detection and drop-behind bookkeeping
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
 * SMB2 clients keep several reads in flight and smbd's threads finish
 * them in any order, so a read belongs to the stream when it starts
 * within one window of the stream front (the highest end of any stream
 * read), on either side; after stream trigger bytes the stream is active.
 * A far read restarts detection; while active it is a stray, served
 * untouched, and CG_STRAY_LIMIT strays in a row end the stream, whose
 * range goes to tails[] and is dropped at close. While a sibling handle
 * of the same client streams the file, no read is a stray.
 *
 * [start, contig) has been read completely; completions above it wait in
 * done[]. A window is dropped only wholly below both contig and the lowest
 * read in flight, so no drop races a read. A gap more than a window
 * behind the front was skipped: contig moves past it. An uncached stream
 * drops only windows some read went through the cache for; a dontcache
 * stream of a cold file drops every window, since RWF_DONTCACHE leaves a
 * page behind when its folio is busy.
 *
 * Readahead: as many streams as the readahead budget (cg_budget.c) holds
 * get FADV_SEQUENTIAL, whose large windows give large folios and device
 * requests; they keep their units until they end, since FADV_RANDOM does
 * not stop a readahead already running. The others get FADV_RANDOM, so
 * that several copies do not push a hot set out of a small cgroup, and,
 * through the page cache, WILLNEED up to cacheguard:readahead past the
 * front in quarter steps; an uncached stream none (RWF_DONTCACHE drops
 * only pages its read created). FADV_NORMAL comes back when the stream
 * ends, goes direct or closes. readahead = 0 leaves the kernel alone.
 */

#include <fcntl.h>
#include <unistd.h>

#include "cg_util.h"
#include "cg_stream.h"
#include "cg_share.h"
#include "cg_budget.h"
#include "cg_sys.h"

/* Windows below dropped_to that a stream dropping all it reads drops again */
#define CG_REDROP_WINDOWS 4
/* The kernel's readahead when the device's is not known */
#define CG_RA_SLACK (4ULL << 20)
/* sendfile's pages skip DONTNEED until sent: drop beyond a 4 MiB socket */
#define CG_ZEROCOPY_LAG (8ULL << 20)
/* The largest WILLNEED, the kernel's own step (force_page_cache_ra()) */
#define CG_WILLNEED_CHUNK (2ULL << 20)

static uint64_t cg_page_down(uint64_t v)
{
	return v & ~(CG_PAGE - 1);
}

/* One window of the kernel's readahead for this file, before any hint */
static uint64_t cg_ra_window(const struct cg_stream *s)
{
	return CG_MAX(s->kernel_ra, CG_RA_SLACK);
}

/* Whether every window behind the stream is dropped, or only cached */
static bool cg_drops_all(const struct cg_stream *s)
{
	return s->via == CG_VIA_CACHE ||
	       (s->via == CG_VIA_DONTCACHE && s->cold);
}

/* What a stream may have left in the cache, to drop at its end */
static struct cg_range cg_stream_footprint(const struct cg_stream *s)
{
	uint64_t end;

	if (cg_drops_all(s)) {
		/* its reach: front, two kernel windows, WILLNEED */
		end = CG_MAX(s->seq.front + 4 * cg_ra_window(s),
			     s->willneed_to);
		return (struct cg_range){
			.off = cg_page_down(s->low),
			.end = CG_MIN(end, CG_MAX(s->file_size, s->seq.front)),
		};
	}
	if (s->cached_min == CG_FREE) {
		return (struct cg_range){.off = 0, .end = 0};
	}
	end = s->cached_hi + 2 * cg_ra_window(s);
	return (struct cg_range){
		.off = cg_page_down(s->cached_min),
		.end = CG_MIN(end, CG_MAX(s->file_size, s->cached_hi)),
	};
}

/*
 * An abandoned stream's range, if any, for the close (its reads may be in
 * flight); with every slot taken, the two nearest ranges merge.
 */
static void cg_add_tail(struct cg_stream *s, struct cg_range r)
{
	unsigned i, j, bi = 0, bj = 0;
	uint64_t gap, best_gap = UINT64_MAX;

	if (r.end <= r.off) {
		return;
	}
	for (i = 0; i < s->ntails && s->ntails == CG_MAX_TAILS; i++) {
		for (j = 0; j < s->ntails; j++) {
			if (i == j || s->tails[j].off < s->tails[i].off) {
				continue;
			}
			gap = s->tails[j].off > s->tails[i].end
				      ? s->tails[j].off - s->tails[i].end
				      : 0;
			if (gap < best_gap) {
				best_gap = gap;
				bi = i;
				bj = j;
			}
		}
	}
	if (s->ntails == CG_MAX_TAILS) {
		s->tails[bi].off = CG_MIN(s->tails[bi].off, s->tails[bj].off);
		s->tails[bi].end = CG_MAX(s->tails[bi].end, s->tails[bj].end);
		s->tails[bj] = s->tails[--s->ntails];
	}
	s->tails[s->ntails++] = r;
}

void cg_flight_init(struct cg_flight *f)
{
	unsigned i;

	*f = (struct cg_flight){.cur = 0};
	for (i = 0; i < CG_FLIGHT_SLOTS; i++) {
		f->slot[i] = CG_FREE;
	}
}

void cg_flight_add(struct cg_flight *f, uint64_t off, struct cg_flight_ref *ref)
{
	unsigned i;

	if (f->nslots == CG_FLIGHT_SLOTS) {
		unsigned b = f->cur;

		if (f->batch[b ^ 1].count == 0 && f->batch[b].count > 0) {
			b ^= 1;
			f->cur = b;
		}
		f->batch[b].low = f->batch[b].count == 0
					  ? off
					  : CG_MIN(f->batch[b].low, off);
		f->batch[b].count++;
		*ref = (struct cg_flight_ref){CG_TRACK_BATCH, b};
		return;
	}
	for (i = 0; f->slot[i] != CG_FREE; i++) {
		/* a free slot exists: nslots < CG_FLIGHT_SLOTS */
	}
	f->slot[i] = off;
	f->nslots++;
	*ref = (struct cg_flight_ref){CG_TRACK_SLOT, i};
}

void cg_flight_remove(struct cg_flight *f, struct cg_flight_ref *ref)
{
	if (ref->track == CG_TRACK_SLOT) {
		f->slot[ref->idx] = CG_FREE;
		f->nslots--;
	} else if (ref->track == CG_TRACK_BATCH) {
		f->batch[ref->idx].count--;
	}
	ref->track = CG_TRACK_NONE;
}

unsigned cg_flight_count(const struct cg_flight *f)
{
	return f->nslots + f->batch[0].count + f->batch[1].count;
}

uint64_t cg_flight_lowest(const struct cg_flight *f)
{
	uint64_t low = CG_FREE;
	unsigned i;

	for (i = 0; i < 2; i++) {
		if (f->batch[i].count > 0) {
			low = CG_MIN(low, f->batch[i].low);
		}
	}
	/* a free slot holds CG_FREE, which is no lower */
	for (i = 0; i < CG_FLIGHT_SLOTS; i++) {
		low = CG_MIN(low, f->slot[i]);
	}
	return low;
}

void cg_stream_init(struct cg_stream *s,
		    const struct cg_config *cfg,
		    const struct cg_sys *sys,
		    uint64_t file_size)
{
	*s = (struct cg_stream){
		.cfg = cfg,
		.sys = sys,
		.file_size = file_size,
		.cached_lo = CG_FREE,
		.cached_min = CG_FREE,
		.share.slot = CG_FREE,
		.share.fd = -1,
		.ra_hint = POSIX_FADV_NORMAL,
		.ra_fd = -1,
		.share.kept_lo = CG_FREE,
	};
	cg_flight_init(&s->flight);
}

/* How far ahead: the option, but at least the largest read */
static uint64_t cg_ra_distance(const struct cg_stream *s)
{
	return s->cfg->readahead == 0 ? 0
				      : CG_MAX(s->cfg->readahead, s->max_read);
}

static void cg_willneed(struct cg_stream *s, int fd)
{
	uint64_t ra = cg_ra_distance(s);
	uint64_t target, from, n, chunk = CG_WILLNEED_CHUNK;

	if (ra == 0 || s->via != CG_VIA_CACHE || s->state != CG_ACTIVE ||
	    s->ra_fd != -1) {
		return;
	}
	target = CG_MIN(s->seq.front + ra, CG_MAX(s->file_size, s->seq.front));
	from = CG_MAX(s->willneed_to, s->seq.front);
	/* Batch: one hint per quarter of the readahead distance */
	if (target <= from || target - from < CG_MAX(ra / 4, CG_PAGE)) {
		return;
	}
	/* One WILLNEED reads at most the device's readahead */
	if (s->kernel_ra >= CG_PAGE) {
		chunk = CG_MIN(cg_page_down(s->kernel_ra), chunk);
	}
	for (; from < target; from += n) {
		n = CG_MIN(target - from, chunk);
		s->sys->fadvise(fd, from, n, POSIX_FADV_WILLNEED);
	}
	s->willneed_to = target;
}

/* The kernel's readahead for this stream, if the budget has room */
static bool cg_ra_grant(struct cg_stream *s)
{
	/* Under FADV_SEQUENTIAL: two windows of 2 x read_ahead_kb */
	uint64_t cost = 4 * (s->kernel_ra >= CG_PAGE ? s->kernel_ra
						     : CG_RA_SLACK);
	int fd;

	if (s->ra_fd != -1) {
		return true;
	}
	if (s->cfg->readahead_memory == 0 || s->sys->ra_open == NULL) {
		return false;
	}
	fd = s->sys->ra_open();
	if (fd == -1) {
		return false;
	}
	if (cg_budget_take(s->sys, fd, cost, s->cfg->readahead_memory) != 0) {
		close(fd);
		return false;
	}
	s->ra_fd = fd;
	s->stats.ra_granted++;
	return true;
}

static void cg_ra_give(struct cg_stream *s)
{
	if (s->ra_fd != -1) {
		close(s->ra_fd);
		s->ra_fd = -1;
	}
}

/* One readahead hint for the whole descriptor, given once */
static void cg_hint(struct cg_stream *s, int fd, int advice)
{
	if (s->ra_hint != advice) {
		s->sys->fadvise(fd, 0, 0, advice);
		s->ra_hint = advice;
	}
}

/* The kernel's usual readahead back, and the budget's units */
static void cg_hints_off(struct cg_stream *s, int fd)
{
	cg_ra_give(s);
	cg_hint(s, fd, POSIX_FADV_NORMAL);
}

/* An active stream's readahead; a direct one keeps the kernel's usual */
static void cg_hints_on(struct cg_stream *s, int fd)
{
	if (s->cfg->readahead == 0 || s->via == CG_VIA_DIRECT) {
		cg_hints_off(s, fd);
		return;
	}
	if (cg_ra_grant(s)) {
		cg_hint(s, fd, POSIX_FADV_SEQUENTIAL);
		return;
	}
	cg_hint(s, fd, POSIX_FADV_RANDOM);
	cg_willneed(s, fd);
}

static void cg_stream_restart(struct cg_stream *s, int fd, uint64_t off)
{
	cg_hints_off(s, fd);
	if (s->state == CG_ACTIVE) {
		struct cg_range r = cg_stream_footprint(s);

		cg_add_tail(s, r);
		/* reads of it may be in flight: dropped at the close too */
		r = cg_share_leftover(s);
		cg_add_tail(s, r);
		cg_share_end(s, fd, false);
	}
	s->share.kept_lo = CG_FREE;	/* in the tail now */
	s->state = CG_DETECTING;
	cg_seq_restart(&s->seq, off);
	s->low = off;
	s->max_read = 0;
	cg_done_reset(&s->done, off);
	s->dropped_to = cg_page_down(off);
	s->willneed_to = off;
	s->cached_lo = CG_FREE;
	s->cached_hi = 0;
	s->cached_min = CG_FREE;
}

/*
 * The hot check runs on smbd's event loop, and mincore walks every page:
 * a long range is sampled in CG_HOT_SAMPLES pieces of CG_HOT_SAMPLE.
 */
#define CG_HOT_SAMPLES 16
#define CG_HOT_SAMPLE (1ULL << 20)

static int cg_resident_sampled(struct cg_stream *s,
			       int fd,
			       uint64_t from,
			       uint64_t len,
			       uint64_t *resident)
{
	uint64_t step, sum = 0;
	unsigned i;
	int ret;

	if (len <= CG_HOT_SAMPLES * CG_HOT_SAMPLE) {
		return s->sys->resident(fd, from, len, resident);
	}
	step = cg_page_down((len - CG_HOT_SAMPLE) / (CG_HOT_SAMPLES - 1));
	for (i = 0; i < CG_HOT_SAMPLES; i++) {
		uint64_t r = 0;

		ret = s->sys->resident(fd, from + i * step, CG_HOT_SAMPLE, &r);
		if (ret != 0) {
			return ret;
		}
		sum += CG_MIN(r, CG_HOT_SAMPLE);
	}
	/* sum / (CG_HOT_SAMPLES * CG_HOT_SAMPLE) of len, in 64 bits */
	*resident = (uint64_t)((double)sum / (CG_HOT_SAMPLES * CG_HOT_SAMPLE) *
			       (double)len);
	return 0;
}

/* Once other streams read the file, read through the cache, for them */
static void cg_share_follow(struct cg_stream *s, int fd, uint64_t from)
{
	if (cg_share_update(s, fd, from) && s->via != CG_VIA_CACHE) {
		cg_stream_set_via(s, fd, CG_VIA_CACHE);
	}
}

static void cg_stream_activate(struct cg_stream *s, int fd)
{
	uint64_t from = s->seq.front + cg_ra_window(s) + cg_ra_distance(s);
	uint64_t len = from < s->file_size ? s->file_size - from : 0;
	uint64_t resident = 0;
	/* What is cached beyond the stream's reach, when asked and known */
	bool known = s->cfg->hot_threshold != 0 || s->via == CG_VIA_DONTCACHE;

	if (known && len > 0) {
		known = cg_resident_sampled(s, fd, from, len, &resident) == 0;
	}
	if (known && s->cfg->hot_threshold != 0 && len > 0 &&
	    resident * 100 >= (uint64_t)s->cfg->hot_threshold * len) {
		s->state = CG_HOT;
		s->stats.hot++;
		return;
	}
	s->cold = known && resident < s->cfg->window;
	s->state = CG_ACTIVE;
	s->stats.streams++;
	cg_hints_on(s, fd);
	cg_share_begin(s);
	cg_share_follow(s, fd, s->dropped_to);
}

void cg_stream_set_via(struct cg_stream *s, int fd, enum cg_via via)
{
	s->via = via;
	if (s->state == CG_ACTIVE) {
		cg_hints_on(s, fd);
	}
}

struct cg_io cg_read_begin(struct cg_stream *s, int fd, uint64_t off, size_t n)
{
	struct cg_io io = {.off = off};

	if (s->state == CG_HOT || n == 0) {
		return io;
	}
	if (!cg_seq_near(&s->seq, off, s->cfg->window)) {
		if (s->state == CG_ACTIVE && cg_seq_stray(&s->seq) &&
		    !cg_share_sibling_active(s)) {
			cg_flight_add(&s->flight, off, &io.flight);
			return io;
		}
		cg_stream_restart(s, fd, off);
	}
	cg_seq_extend(&s->seq, off, n);
	s->low = CG_MIN(s->low, off);
	s->max_read = CG_MAX(s->max_read, (uint64_t)n);
	if (s->state == CG_DETECTING &&
	    (s->seq.bytes >= s->cfg->stream_trigger ||
	     cg_share_sibling_active(s))) {
		cg_stream_activate(s, fd);
		if (s->state == CG_HOT) {
			return io;
		}
	}
	io.in_stream = true;
	io.drop_pieces = s->state == CG_ACTIVE && s->via == CG_VIA_CACHE &&
			 !s->share.seen && s->lag == 0 && !s->next_reads;
	cg_flight_add(&s->flight, off, &io.flight);
	return io;
}

/*
 * Drop the whole windows below limit, the lowest byte still needed. A
 * stream dropping all it reads drops CG_REDROP_WINDOWS more below
 * dropped_to, where a thread's own readahead may have brought pages
 * back. Every read there has finished.
 */
static void cg_drop_behind(struct cg_stream *s, int fd, uint64_t limit)
{
	uint64_t w = s->cfg->window;
	uint64_t low = CG_MIN(cg_page_down(s->low), s->dropped_to);
	uint64_t from = s->dropped_to;
	uint64_t n;

	if (limit < s->dropped_to + s->lag) {
		return;
	}
	limit -= s->lag;
	n = (limit - s->dropped_to) / w * w;
	if (n == 0) {
		return;
	}
	if (cg_drops_all(s)) {
		/* Whole windows, as every drop: the rest below goes at close */
		from -= CG_MIN(CG_REDROP_WINDOWS * w,
			       (s->dropped_to - low) / w * w);
	}
	if (cg_drops_all(s) || s->cached_lo < s->dropped_to + n) {
		uint64_t kept = cg_share_drop(s, fd, from, s->dropped_to + n);

		s->share.kept_lo = CG_MIN(s->share.kept_lo, kept);
		s->stats.bytes_dropped += n;
	}
	s->dropped_to += n;
	/* Cached reads above the drop may lie anywhere up to cached_hi */
	s->cached_lo = s->cached_hi > s->dropped_to ? s->dropped_to : CG_FREE;
}

void cg_read_end(struct cg_stream *s, int fd, struct cg_io *io, ssize_t nread)
{
	bool data = nread > 0 && io->in_stream;
	uint64_t need;

	cg_flight_remove(&s->flight, &io->flight);
	if (io->zerocopy) {
		s->lag = CG_ZEROCOPY_LAG;
	}
	if (nread > 0) {
		s->stats.bytes_read += (uint64_t)nread;
	}
	if (s->state == CG_HOT) {
		return;
	}
	if (data) {
		/* a gap more than a window behind the front was skipped */
		cg_done_add(&s->done,
			    io->off,
			    io->off + (uint64_t)nread,
			    cg_seq_behind(&s->seq, s->cfg->window));
	}
	if (data && !io->uncached) {
		s->cached_lo = CG_MIN(s->cached_lo, io->off);
		s->cached_min = CG_MIN(s->cached_min, io->off);
		s->cached_hi = CG_MAX(s->cached_hi, io->off + (uint64_t)nread);
	}
	if (s->state != CG_ACTIVE) {
		return;
	}
	/* Any completion, a stray's too, may release held-back windows */
	need = CG_MIN(s->done.contig, cg_flight_lowest(&s->flight));
	cg_drop_behind(s, fd, need);
	cg_share_follow(s, fd, need);
	/* Read to its end: the readahead budget is free for the next copy */
	if (s->seq.front >= s->file_size) {
		cg_ra_give(s);
	}
	cg_willneed(s, fd);
}

void cg_stream_close(struct cg_stream *s, int fd)
{
	uint64_t end = CG_MIN(s->seq.front, s->file_size);
	unsigned i;

	/* what other streams of the file still need stays (cg_share.c) */
	for (i = 0; i < s->ntails; i++) {
		cg_share_drop(s, fd, s->tails[i].off, s->tails[i].end);
	}
	s->ntails = 0;
	if (s->state == CG_ACTIVE) {
		/* From its lowest read: skipped windows and readahead go too */
		struct cg_range r = cg_stream_footprint(s);

		cg_share_drop(s, fd, r.off, r.end);
		s->stats.bytes_dropped +=
			end > s->dropped_to ? end - s->dropped_to : 0;
	}
	cg_share_end(s, fd, true);
	cg_hints_off(s, fd);
	s->state = CG_DETECTING;
}
