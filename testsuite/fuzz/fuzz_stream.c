/*
 * vfs_cacheguard fuzz harness: a file's policy (cg_file.c) and its
 * stream's detection and drop-behind (cg_stream.c), driven by any
 * sequence of reads, completions, failures and closes
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
 * The input is a header (the share's options, the file) and then events:
 * a read begins (next to the stream, near its front, anywhere, or far
 * out), a read in flight ends (in full, short, empty, failed, served by
 * sendfile), the file's residency changes (hot files), the file is
 * closed and opened again with other options. The engine acts through
 * a fake cg_sys that checks each call against the reads in flight, as
 * testsuite/unit/test_stream.c does. The harness plays the glue
 * (modules/vfs_cacheguard.c): each open is a cg_file in a mode (auto,
 * dontneed, dontcache, direct) on a filesystem that may lack
 * RWF_DONTCACHE or O_DIRECT; each read takes the path cg_file_choose()
 * gives; setting up direct reads may fail (the filesystem, the file,
 * the memory budget), and a fast-path read may fail (EOPNOTSUPP, EINVAL,
 * EIO, ENOMEM) and is then read again through the cache, which changes
 * the file's mode mid-stream. After each event the harness checks:
 *
 * - no DONTNEED overlaps a read in flight, tracked by the engine or not;
 * - every fadvise is on the file's descriptor; window drops are whole
 *   windows; WILLNEED stays within the file (or the front past it);
 * - never SEQUENTIAL; WILLNEED only while the path is the page cache;
 *   RANDOM (whole file) never on a direct stream, and RANDOM and NORMAL
 *   alternate, NORMAL last when the file closes;
 * - the file's mode is dontneed, dontcache or direct, its stream's
 *   hints follow it, and it is none the filesystem is known to lack;
 *   a fast path only for an active stream's read, in its mode's path;
 * - every byte read is counted once, on the path that served it;
 * - the engine's count of reads in flight matches the caller's;
 * - a hot file gets no fadvise at all until it is closed;
 * - at a drop opportunity (a completion that extends the completed
 *   range of an active stream, no read spilled into the batches) the
 *   retained range front - dropped_to is under window + max(window,
 *   span of the reads in flight) + the sendfile lag: the exact bound
 *   derived in test_stream.c;
 * - closing an active stream that drops every window (the cache path,
 *   or dontcache on a cold file) drops it from at most dropped_to up to
 *   at least its front;
 * - closing an active stream, on any path, when the open saw no other
 *   stream: every byte a stream read brought into the cache was
 *   dropped by some DONTNEED made after that read ended (an uncached
 *   stream may keep others' pages, never its own).
 *
 * Any broken rule aborts with a message; ASan and UBSan catch the rest.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "cg_file.h"
#include "cg_sys.h"
#include "fuzz_common.h"

#define KiB (1ULL << 10)
#define MiB (1ULL << 20)
#define FD 5
#define MAX_READS 160
/* cg_stream.c's CG_RA_SLACK: its readahead window when none is known */
#define RA_SLACK (4 * MiB)

struct fz_read {
	bool busy;
	bool overflow;		/* the engine put it in a batch */
	enum cg_path path;	/* how it is served (cg_file_choose) */
	uint64_t off;
	size_t n;
	struct cg_io io;
};

/* A stream read that went through the cache, ended at call `at` */
struct fz_cached {
	uint64_t off;
	uint64_t end;
	unsigned at;
};

/* A DONTNEED, as the call `at` made it */
struct fz_drop {
	uint64_t off;
	uint64_t end;
	unsigned at;
};

#define MAX_LOG 4096

struct fz_stream {
	struct cg_config cfg;
	struct cg_file file;
	unsigned fs_lacks;	/* what the filesystem lacks, learnt */
	unsigned below;		/* CG_BELOW_* of the open's stack */
	bool direct_open;	/* direct reads set up for the open */
	struct fz_read reads[MAX_READS];
	unsigned nbusy;
	unsigned resident_pct;
	int resident_ret;
	bool closing;
	/* the last DONTNEED made by cg_stream_close() */
	bool close_drop;
	uint64_t close_off;
	uint64_t close_end;
	unsigned calls;		/* fadvise calls so far */
	uint64_t willneed_end;	/* the highest WILLNEED end */
	bool ra_off;		/* FADV_RANDOM given, no NORMAL since */
	/* since the open: cached stream reads, DONTNEEDs, restarts */
	struct fz_cached cached[MAX_LOG];
	unsigned ncached;
	struct fz_drop drops[MAX_LOG];
	unsigned ndrops;
	bool restarted;		/* a second stream began, or too much log */
	bool seen_read;		/* a read has begun since the open */
};

static struct fz_stream *cur = NULL;

static void check_dontneed(const struct fz_stream *f,
			   uint64_t off,
			   uint64_t len)
{
	uint64_t end = len == 0 ? UINT64_MAX : off + len;
	unsigned i;

	for (i = 0; i < MAX_READS; i++) {
		const struct fz_read *r = &f->reads[i];

		if (r->busy && r->n > 0 && r->off < end &&
		    off < r->off + r->n) {
			fz_violation("DONTNEED [%" PRIu64 ", %" PRIu64
				     ") overlaps the read [%" PRIu64
				     ", %" PRIu64 ") in flight",
				     off, end, r->off, r->off + r->n);
		}
	}
}

static int fake_fadvise(int fd, uint64_t off, uint64_t len, int advice)
{
	struct fz_stream *f = cur;
	const struct cg_stream *s = &f->file.stream;

	f->calls++;
	if (fd != FD) {
		fz_violation("fadvise on fd %d, not %d", fd, FD);
	}
	if (advice == POSIX_FADV_SEQUENTIAL ||
	    (advice == POSIX_FADV_WILLNEED && s->via != CG_VIA_CACHE) ||
	    (advice == POSIX_FADV_RANDOM && s->via == CG_VIA_DIRECT)) {
		fz_violation("advice %d on a stream whose path is %d",
			     advice, (int)s->via);
	}
	if (advice == POSIX_FADV_RANDOM || advice == POSIX_FADV_NORMAL) {
		if (f->ra_off == (advice == POSIX_FADV_RANDOM) || off != 0 ||
		    len != 0) {
			fz_violation("advice %d out of turn", advice);
		}
		f->ra_off = advice == POSIX_FADV_RANDOM;
	}
	if (advice == POSIX_FADV_DONTNEED) {
		check_dontneed(f, off, len);
		if (f->ndrops == MAX_LOG) {
			f->restarted = true;	/* stop checking */
		} else {
			f->drops[f->ndrops++] = (struct fz_drop){
				.off = off,
				.end = len == 0 ? UINT64_MAX : off + len,
				.at = f->calls,
			};
		}
		if (f->closing) {
			f->close_drop = true;
			f->close_off = off;
			f->close_end = len == 0 ? UINT64_MAX : off + len;
		} else if (len == 0 || len % s->cfg->window != 0) {
			fz_violation("window drop of %" PRIu64 " bytes, "
				     "window %" PRIu64, len, s->cfg->window);
		}
	}
	if (advice == POSIX_FADV_WILLNEED) {
		if (len == 0 ||
		    off + len > FZ_MAX(s->file_size, s->seq.front)) {
			fz_violation("WILLNEED [%" PRIu64 ", +%" PRIu64
				     ") past the file (%" PRIu64
				     ") and the front (%" PRIu64 ")",
				     off, len, s->file_size, s->seq.front);
		}
		f->willneed_end = FZ_MAX(f->willneed_end, off + len);
	}
	return 0;
}

static int fake_resident(int fd, uint64_t off, uint64_t len, uint64_t *bytes)
{
	struct fz_stream *f = cur;

	if (fd != FD) {
		fz_violation("resident on fd %d, not %d", fd, FD);
	}
	if (off + len > cur->file.stream.file_size) {
		fz_violation("resident [%" PRIu64 ", +%" PRIu64 ") past the "
			     "file's end %" PRIu64, off, len,
			     cur->file.stream.file_size);
	}
	if (f->resident_ret != 0) {
		return f->resident_ret;
	}
	*bytes = len / 100 * f->resident_pct;
	return 0;
}

static const struct cg_sys fake_sys = {
	.fadvise = fake_fadvise,
	.resident = fake_resident,
};

static void check_counts(const struct fz_stream *f)
{
	unsigned tracked = 0, overflow = 0, i;
	const struct cg_stream *s = &f->file.stream;
	unsigned batched = s->flight.batch[0].count + s->flight.batch[1].count;

	for (i = 0; i < MAX_READS; i++) {
		if (f->reads[i].busy &&
		    f->reads[i].io.flight.track == CG_TRACK_SLOT) {
			tracked++;
		}
		if (f->reads[i].busy && f->reads[i].overflow) {
			overflow++;
		}
	}
	if (tracked != s->flight.nslots || overflow != batched) {
		fz_violation("engine counts %u tracked + %u batched reads in "
			     "flight, the caller %u + %u",
			     s->flight.nslots, batched, tracked, overflow);
	}
}

static uint64_t lowest_busy(const struct fz_stream *f)
{
	uint64_t low = UINT64_MAX;
	unsigned i;

	for (i = 0; i < MAX_READS; i++) {
		if (f->reads[i].busy) {
			low = FZ_MIN(low, f->reads[i].off);
		}
	}
	return low;
}

static bool any_overflow(const struct fz_stream *f)
{
	unsigned i;

	for (i = 0; i < MAX_READS; i++) {
		if (f->reads[i].busy && f->reads[i].overflow) {
			return true;
		}
	}
	return false;
}

/*
 * The path of a read, as the glue finds it: cg_file_choose(), then, for
 * a first direct read, setting direct reads up, which may fail
 */
static enum cg_path choose(struct fz_stream *f, const struct fz_read *r,
			   uint8_t setup_fails)
{
	const struct cg_file *file = &f->file;
	enum cg_path path = cg_file_choose(file, &r->io, r->n, false);

	if (path != CG_PATH_NEXT &&
	    (!r->io.in_stream || file->stream.state != CG_ACTIVE)) {
		fz_violation("path %d for a read outside an active stream",
			     (int)path);
	}
	if ((path == CG_PATH_UNCACHED && file->mode != CG_MODE_DONTCACHE) ||
	    (path == CG_PATH_DIRECT && (file->mode != CG_MODE_DIRECT ||
					r->n < file->stream.cfg->direct_min_io))) {
		fz_violation("path %d for a %zu-byte read in mode %s",
			     (int)path, r->n, cg_mode_name(file->mode));
	}
	if ((f->below & CG_BELOW_READS) &&
	    (path != CG_PATH_NEXT || r->io.drop_pieces)) {
		fz_violation("path %d (pieces %d) past a module below that "
			     "must see the reads", (int)path,
			     (int)r->io.drop_pieces);
	}
	if (path != CG_PATH_DIRECT || f->direct_open) {
		return path;
	}
	if (setup_fails < 0xe0) {
		f->direct_open = true;
		return path;
	}
	f->fs_lacks |= cg_file_direct_unavailable(&f->file, FD,
		(enum cg_direct_fail)(setup_fails % 4), f->fs_lacks);
	return CG_PATH_NEXT;
}

/* The mode, the path of the hints and what the filesystem lacks agree */
static void check_mode(const struct fz_stream *f)
{
	const struct cg_file *file = &f->file;
	static const enum cg_via via_of[] = {
		[CG_MODE_DONTNEED] = CG_VIA_CACHE,
		[CG_MODE_DONTCACHE] = CG_VIA_DONTCACHE,
		[CG_MODE_DIRECT] = CG_VIA_DIRECT,
	};

	if (file->mode != CG_MODE_DONTNEED &&
	    file->mode != CG_MODE_DONTCACHE && file->mode != CG_MODE_DIRECT) {
		fz_violation("a file in mode %s", cg_mode_name(file->mode));
	}
	if (file->stream.via != via_of[file->mode]) {
		fz_violation("mode %s with hints for path %d",
			     cg_mode_name(file->mode), (int)file->stream.via);
	}
	if ((f->below & CG_BELOW_READS) && file->mode != CG_MODE_DONTNEED) {
		fz_violation("mode %s past a module below that must see the "
			     "reads", cg_mode_name(file->mode));
	}
	if ((file->mode == CG_MODE_DONTCACHE &&
	     (f->fs_lacks & CG_FS_NO_DONTCACHE)) ||
	    (file->mode == CG_MODE_DIRECT && (f->fs_lacks & CG_FS_NO_DIRECT))) {
		fz_violation("mode %s on a filesystem lacking %#x",
			     cg_mode_name(file->mode), f->fs_lacks);
	}
}

static void begin_read(struct fz_stream *f, uint64_t off, size_t n,
		       uint8_t setup_fails)
{
	struct fz_read *r = NULL;
	bool hot = f->file.stream.state == CG_HOT;
	unsigned calls = f->calls;
	unsigned i;

	for (i = 0; f->reads[i].busy; i++) {
		/* the caller made room: nbusy < MAX_READS */
	}
	r = &f->reads[i];
	*r = (struct fz_read){.busy = true, .off = off, .n = n};
	f->nbusy++;
	r->io = cg_read_begin(&f->file.stream, FD, off, n);
	r->overflow = r->io.flight.track == CG_TRACK_BATCH;
	if ((r->io.flight.track == CG_TRACK_SLOT &&
	     r->io.flight.idx >= CG_FLIGHT_SLOTS) ||
	    (r->io.flight.track == CG_TRACK_BATCH && r->io.flight.idx >= 2)) {
		fz_violation("read tracked as %d at %u",
			     (int)r->io.flight.track,
			     r->io.flight.idx);
	}
	r->path = choose(f, r, setup_fails);
	/* a new stream began here (detection starts over at this read) */
	if (n > 0 && !hot && f->file.stream.seq.strays == 0 &&
	    f->file.stream.seq.bytes == n &&
	    f->seen_read) {
		f->restarted = true;
	}
	if (n > 0 && !hot) {
		f->seen_read = true;
	}
	if (hot && f->calls != calls) {
		fz_violation("fadvise while the file is hot (read begins)");
	}
	check_counts(f);
	check_mode(f);
}

/* The bound at a drop opportunity (see test_stream.c, the property) */
static void check_retained(const struct fz_stream *f)
{
	const struct cg_stream *s = &f->file.stream;
	uint64_t w = s->cfg->window;
	uint64_t low = lowest_busy(f);
	uint64_t span = low < s->seq.front ? s->seq.front - low : 0;
	uint64_t kept = s->dropped_to < s->seq.front
				? s->seq.front - s->dropped_to
				: 0;

	if (kept >= w + FZ_MAX(w, span) + s->lag) {
		fz_violation("retained %" PRIu64 " bytes (front %" PRIu64
			     ", dropped to %" PRIu64 ") at a drop "
			     "opportunity: window %" PRIu64 ", span in "
			     "flight %" PRIu64 ", lag %" PRIu64,
			     kept,
			     s->seq.front,
			     s->dropped_to,
			     w,
			     span,
			     s->lag);
	}
}

static void end_read(struct fz_stream *f, unsigned i, ssize_t got,
		     bool zerocopy, uint8_t fails)
{
	struct fz_read *r = &f->reads[i];
	bool hot = f->file.stream.state == CG_HOT;
	uint64_t contig = f->file.stream.done.contig;
	bool opportunity;
	unsigned calls = f->calls;

	r->busy = false;
	f->nbusy--;
	r->io.zerocopy = zerocopy;
	if (r->path != CG_PATH_NEXT && fails >= 0xc0) {
		static const int errs[] = {EOPNOTSUPP, EINVAL, EIO, ENOMEM};

		/* the fast path failed: read again through the next module */
		f->fs_lacks |= cg_file_read_failed(&f->file, FD, r->path,
						   errs[fails % 4],
						   f->fs_lacks);
		r->path = CG_PATH_NEXT;
	}
	cg_file_served(&f->file, r->path, got);
	r->io.uncached = r->path != CG_PATH_NEXT;
	opportunity = r->io.in_stream && got > 0 && !any_overflow(f) &&
		      r->off + (uint64_t)got > contig;
	cg_read_end(&f->file.stream, FD, &r->io, got);
	r->overflow = false;
	if (r->io.in_stream && got > 0 && !r->io.uncached && !hot) {
		if (f->ncached == MAX_LOG) {
			f->restarted = true;	/* stop checking */
		} else {
			f->cached[f->ncached++] = (struct fz_cached){
				.off = r->off,
				.end = r->off + (uint64_t)got,
				.at = f->calls,
			};
		}
	}
	if (hot && f->calls != calls) {
		fz_violation("fadvise while the file is hot (read ends)");
	}
	check_counts(f);
	check_mode(f);
	if (opportunity && f->file.stream.state == CG_ACTIVE) {
		check_retained(f);
	}
}

/* What a read of the file returns, as the event asks */
static ssize_t read_result(const struct fz_stream *f,
			   const struct fz_read *r,
			   unsigned kind)
{
	uint64_t size = f->file.stream.file_size;
	size_t full = 0;

	if (r->off < size) {
		full = (size_t)FZ_MIN((uint64_t)r->n, size - r->off);
	}
	switch (kind % 8) {
	case 0:
		return -1;
	case 1:
		return (ssize_t)(full / 2);
	case 2:
		return 0;
	default:
		return (ssize_t)full;
	}
}

static void end_all(struct fz_stream *f, struct fz_in *in)
{
	unsigned i;

	while (f->nbusy > 0) {
		/* in an order the input picks */
		i = fz_u8(in) % MAX_READS;
		while (!f->reads[i].busy) {
			i = (i + 1) % MAX_READS;
		}
		end_read(f, i, read_result(f, &f->reads[i], 3), false, 0);
	}
}

static void open_file(struct fz_stream *f, struct fz_in *in)
{
	static const uint64_t windows[] = {4 * KiB, 64 * KiB, 256 * KiB,
					   1 * MiB, 4 * MiB, 8 * MiB};
	static const uint64_t triggers[] = {0, 4 * KiB, 64 * KiB, 1 * MiB,
					    4 * MiB, 16 * MiB};
	static const uint64_t ras[] = {0, 0, 256 * KiB, 4 * MiB, 16 * MiB};
	static const unsigned hots[] = {50, 0, 100, 1};
	static const uint64_t kras[] = {0, 128 * KiB, 8 * MiB};
	static const enum cg_mode modes[] = {CG_MODE_DONTNEED,
					     CG_MODE_DONTCACHE, CG_MODE_DIRECT,
					     CG_MODE_AUTO};
	static const uint64_t min_ios[] = {64 * KiB, 0, 1 * MiB};
	uint64_t size;

	cg_config_init(&f->cfg);
	f->cfg.mode = FZ_PICK(in, modes);
	f->cfg.direct_min_io = FZ_PICK(in, min_ios);
	f->cfg.window = FZ_PICK(in, windows);
	f->cfg.stream_trigger = FZ_PICK(in, triggers);
	f->cfg.readahead = FZ_PICK(in, ras);
	f->cfg.hot_threshold = FZ_PICK(in, hots);
	size = ((uint64_t)fz_u16(in) + 1) * 64 * KiB - fz_u8(in);
	/* what the filesystem lacks is remembered across opens */
	f->fs_lacks |= (fz_u8(in) & 3) << 1;
	/* a module below that must see the reads, one open in four */
	f->below = (fz_u8(in) & 3) == 0 ? CG_BELOW_READS : 0;
	f->direct_open = false;
	cg_file_init(&f->file, &f->cfg, &fake_sys, size,
		     f->fs_lacks | f->below, FD);
	f->file.stream.kernel_ra = FZ_PICK(in, kras);
	check_mode(f);
	f->willneed_end = 0;
	f->ncached = 0;
	f->ndrops = 0;
	f->restarted = false;
	f->seen_read = false;
}

/* Whether [off, end) lies in the DONTNEEDs made after call `at` */
static bool dropped_after(const struct fz_stream *f, uint64_t off,
			  uint64_t end, unsigned at)
{
	uint64_t pos = off;
	bool moved = true;
	unsigned i;

	while (pos < end && moved) {
		moved = false;
		for (i = 0; i < f->ndrops; i++) {
			const struct fz_drop *d = &f->drops[i];

			if (d->at > at && d->off <= pos && d->end > pos) {
				pos = d->end;
				moved = true;
			}
		}
	}
	return pos >= end;
}

static void check_nothing_left(const struct fz_stream *f)
{
	unsigned i;

	for (i = 0; i < f->ncached; i++) {
		const struct fz_cached *c = &f->cached[i];

		if (!dropped_after(f, c->off, c->end, c->at)) {
			fz_violation("the stream read [%" PRIu64 ", %" PRIu64
				     ") through the cache (path %d, cold %d)"
				     " and nothing dropped all of it after",
				     c->off, c->end, (int)f->file.stream.via,
				     (int)f->file.stream.cold);
		}
	}
}

/* Counted once: the bytes per path add up to the bytes read */
static void check_served(const struct fz_stream *f)
{
	uint64_t sum = 0;
	unsigned i;

	for (i = 0; i < CG_PATH_COUNT; i++) {
		sum += f->file.bytes[i];
	}
	if (sum != f->file.stream.stats.bytes_read) {
		fz_violation("%" PRIu64 " bytes served by path, %" PRIu64
			     " read", sum, f->file.stream.stats.bytes_read);
	}
}

static void close_file(struct fz_stream *f, struct fz_in *in)
{
	const struct cg_stream *s = &f->file.stream;
	bool active;
	bool drops_all;
	uint64_t dropped_to;
	uint64_t end;

	end_all(f, in);
	active = s->state == CG_ACTIVE;
	drops_all = s->via == CG_VIA_CACHE ||
		    (s->via == CG_VIA_DONTCACHE && s->cold);
	dropped_to = s->dropped_to;
	end = FZ_MIN(s->seq.front, s->file_size);
	f->closing = true;
	f->close_drop = false;
	cg_stream_close(&f->file.stream, FD);
	f->closing = false;
	if (f->ra_off) {
		fz_violation("closed with the kernel's readahead still off");
	}
	if (active && !f->restarted) {
		check_nothing_left(f);
	}
	check_served(f);
	if (active && drops_all && end > dropped_to &&
	    (!f->close_drop || f->close_off > dropped_to ||
	     f->close_end < end)) {
		fz_violation("close of an active stream dropped [%" PRIu64
			     ", %" PRIu64 "), not all of [%" PRIu64
			     ", %" PRIu64 ")",
			     f->close_off, f->close_end, dropped_to, end);
	}
}

/* Where the next read lands */
static uint64_t read_offset(const struct fz_stream *f, struct fz_in *in)
{
	const struct cg_stream *s = &f->file.stream;
	int16_t delta;

	switch (fz_u8(in) % 5) {
	case 0:
	case 1:
		return s->seq.front;	/* the next read of a copy */
	case 2:
		/* near the front, either side, in 4 KiB steps */
		delta = (int16_t)fz_u16(in);
		if (delta < 0 && (uint64_t)(-delta) * 4 * KiB > s->seq.front) {
			return 0;
		}
		return s->seq.front + (int64_t)delta * 4 * (int64_t)KiB;
	case 3:
		/* anywhere in the file, in 512-byte steps */
		return (uint64_t)fz_u32(in) * 512 % (s->file_size + MiB);
	default:
		/* far out: up to what an SMB offset can be */
		return ((uint64_t)fz_u32(in) << 30) & (UINT64_MAX >> 2);
	}
}

static size_t read_length(struct fz_in *in)
{
	static const size_t lens[] = {64 * KiB, 1 * MiB, 0, 1, 4095,
				      4 * KiB, 60 * KiB, 8 * MiB};
	uint8_t k = fz_u8(in);

	if (k >= 0xc0) {
		return (size_t)(k - 0xc0 + 1) * 512 * (1 + fz_u8(in) % 32);
	}
	return lens[k % FZ_N_ELEM(lens)];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz_stream f;
	struct fz_in in = {.p = data, .n = size};
	unsigned i;

	memset(&f, 0, sizeof(f));
	cur = &f;
	open_file(&f, &in);
	while (in.n > 0) {
		uint8_t op = fz_u8(&in);

		switch (op % 8) {
		case 0:
		case 1:
		case 2: {
			uint64_t off = read_offset(&f, &in);
			size_t n = read_length(&in);

			if (f.nbusy == MAX_READS) {
				end_read(&f, 0, read_result(&f, &f.reads[0],
							    3), false, 0);
			}
			begin_read(&f, off, n, op);
			break;
		}
		case 3:
		case 4:
		case 5:
			if (f.nbusy == 0) {
				break;
			}
			i = fz_u8(&in) % MAX_READS;
			while (!f.reads[i].busy) {
				i = (i + 1) % MAX_READS;
			}
			op = fz_u8(&in);
			end_read(&f, i, read_result(&f, &f.reads[i], op),
				 (op & 0x30) == 0x30, op);
			break;
		case 6:
			op = fz_u8(&in);
			f.resident_pct = op % 101;
			f.resident_ret = op >= 0xf0 ? EPERM : 0;
			break;
		default:
			close_file(&f, &in);
			open_file(&f, &in);
			break;
		}
	}
	close_file(&f, &in);
	cur = NULL;
	return 0;
}
