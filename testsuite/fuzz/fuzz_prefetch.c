/*
 * vfs_cacheguard fuzz harness: the prefetch table of direct streams
 * (cg_prefetch.c) against a file that changes under it
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
 * The harness plays modules/cacheguard_direct.c and the file at once.
 * The file is a size, a ctime and a generation per 4 KiB block that
 * every write bumps; its bytes are a function of position and
 * generation, so any byte served can be checked. Timestamps are those of
 * a kernel before 6.13: a change stamps ctime with a coarse clock that
 * only the input moves, so changes within a tick share a ctime.
 *
 * Events, in any order the input gives:
 * - a request: note_read, validate against the file's version now,
 *   lookup; a HIT is copied out of the table's buffer and must be
 *   exactly the file's bytes now, as many as pread() would return;
 *   PENDING waits (and keeps its segments, as the glue's waiters do);
 *   then the table is refilled, as the glue does;
 * - a fill job takes one step: fstat (the version), read (the bytes
 *   into its slot, as they are at that moment), report (filled, which
 *   serves the waiters again and refills), or fails;
 * - a write through smbd begins (invalidate) and later ends (the bytes
 *   change, then invalidate again), fills running in between;
 * - a local write or truncate (no invalidate: only the version tells);
 * - the clock ticks (4 ms), or jumps a second;
 * - the table is reset; the file is closed and opened again.
 *
 * Checked: no HIT serves a byte the file does not hold now (no stale
 * segment served), a HIT is short only at end of file, the table never
 * hands out a slot whose fill is still running (a thread writes it),
 * fills are whole aligned segments inside the file. ASan watches the
 * buffer, which is allocated to exactly cg_prefetch_memory() bytes.
 */

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "../unit/cg_model_file.h"
#include "cg_prefetch.h"
#include "cg_sys.h"
#include "fuzz_common.h"

static const struct cg_sys fz_memcpy;

#define KiB (1ULL << 10)
#define MiB (1ULL << 20)
#define BLOCK 4096
#define MAX_SIZE (8 * MiB)
#define MAX_WAITERS 8

enum job_step {
	JOB_NONE = 0,
	JOB_STARTED,	/* handed out by next_fill */
	JOB_STATED,	/* the version is taken */
	JOB_READ,	/* the bytes are in the slot */
};

struct job {
	enum job_step step;
	uint64_t off;
	size_t len;
	ssize_t got;
	struct cg_pf_version ver;
};

struct waiter {
	uint64_t off;
	size_t n;
};

struct fz_pf {
	/* the file */
	struct cg_model_file m;	/* size, ctime, coarse clock */
	uint8_t gen[MAX_SIZE / BLOCK * 2];
	bool writing;		/* a write through smbd has begun */
	uint64_t w_off;
	uint64_t w_len;

	/* the stream */
	struct cg_prefetch pf;
	uint8_t *mem;
	struct job jobs[CG_PREFETCH_MAX_SEGS];
	struct waiter waiters[MAX_WAITERS];
	unsigned nwaiters;
	uint64_t hits;
};

static uint8_t file_byte(const struct fz_pf *f, uint64_t pos)
{
	return (uint8_t)(pos + (pos >> 12) * 7 + f->gen[pos / BLOCK] * 0x9d);
}

/* The bytes change: a write (n > 0) or a truncate to off (n == 0) */
static void file_change(struct fz_pf *f, uint64_t off, uint64_t n)
{
	uint64_t b;

	if (n == 0) {
		for (b = off / BLOCK; b < FZ_N_ELEM(f->gen); b++) {
			f->gen[b]++;	/* what comes back later is new */
		}
		f->m.size = off;
	} else {
		for (b = off / BLOCK; b <= (off + n - 1) / BLOCK; b++) {
			f->gen[b]++;
		}
		f->m.size = FZ_MAX(f->m.size, off + n);
	}
	cg_model_stamp(&f->m);
}

static void serve(struct fz_pf *f, uint64_t off, size_t n, bool waiting);

static uint64_t keep_from(const struct fz_pf *f)
{
	uint64_t keep = UINT64_MAX;
	unsigned i;

	for (i = 0; i < f->nwaiters; i++) {
		keep = FZ_MIN(keep, f->waiters[i].off);
	}
	return keep;
}

/* A fill the table handed out: a free slot, a whole segment in the file */
static void claimed(struct fz_pf *f, unsigned slot, uint64_t off, size_t len)
{
	if (slot >= f->pf.nseg) {
		fz_violation("fill into slot %u of %u", slot, f->pf.nseg);
	}
	if (f->jobs[slot].step != JOB_NONE) {
		fz_violation("slot %u handed out again while its fill of %"
			     PRIu64 " still runs",
			     slot, f->jobs[slot].off);
	}
	if (len != f->pf.seg_size || off % f->pf.seg_size != 0 ||
	    off >= f->m.size) {
		fz_violation("fill [%" PRIu64 ", +%zu): segment %zu, file %"
			     PRIu64,
			     off, len, f->pf.seg_size, f->m.size);
	}
	f->jobs[slot] = (struct job){
		.step = JOB_STARTED,
		.off = off,
		.len = len,
	};
}

static void refill(struct fz_pf *f)
{
	unsigned slot;
	uint64_t off;
	size_t len;

	while (cg_prefetch_next_fill(&f->pf, f->m.size, keep_from(f), &slot,
				     &off, &len)) {
		claimed(f, slot, off, len);
	}
}

static void check_hit(const struct fz_pf *f, uint64_t off, size_t n,
		      size_t avail, size_t done, const uint8_t *dst)
{
	size_t want = cg_model_pread_len(f->m.size, off, n);
	size_t i;

	if (avail != want || done != want) {
		fz_violation("HIT [%" PRIu64 ", +%zu) gave %zu (lookup said "
			     "%zu), the file has %zu there (size %" PRIu64
			     ")", off, n, done, avail, want, f->m.size);
	}
	for (i = 0; i < done; i++) {
		if (dst[i] != file_byte(f, off + i)) {
			fz_violation("stale byte served at %" PRIu64
				     " (request [%" PRIu64 ", +%zu), "
				     "block generation %u)",
				     off + i, off, n,
				     f->gen[(off + i) / BLOCK]);
		}
	}
}

static void serve(struct fz_pf *f, uint64_t off, size_t n, bool waiting)
{
	struct cg_pf_version now = cg_model_version(&f->m);
	enum cg_pf_lookup res;
	size_t avail = 0;

	if (!waiting) {
		cg_prefetch_note_read(&f->pf, off, n);
	}
	cg_prefetch_validate(&f->pf, &now);
	res = cg_prefetch_lookup(&f->pf, off, n, &avail);
	if (res == CG_PF_HIT) {
		struct cg_pf_piece pieces[CG_PREFETCH_MAX_SEGS + 1];
		uint8_t *dst = malloc(FZ_MAX(n, 1));
		size_t done = 0;
		unsigned np;
		bool current;

		if (dst == NULL) {
			abort();
		}
		/* as the glue copies a HIT; memcpy: the table is fuzzed */
		np = cg_prefetch_pin(&f->pf, off, n, pieces,
				     CG_PREFETCH_MAX_SEGS + 1);
		current = cg_prefetch_pieces_current(pieces, np, &now);
		if (current) {
			done = cg_prefetch_copy_pieces(&fz_memcpy, f->mem,
						       pieces, np, dst);
		}
		cg_prefetch_unpin(&f->pf, pieces, np, current);
		check_hit(f, off, n, avail, done, dst);
		free(dst);
		f->hits++;
	} else if (res == CG_PF_PENDING && f->nwaiters < MAX_WAITERS) {
		f->waiters[f->nwaiters++] = (struct waiter){.off = off, .n = n};
	}
	/* MISS: the glue reads it directly, nothing to check here */
}

static void wake(struct fz_pf *f)
{
	struct waiter list[MAX_WAITERS];
	unsigned n = f->nwaiters, i;

	memcpy(list, f->waiters, sizeof(list));
	f->nwaiters = 0;
	for (i = 0; i < n; i++) {
		serve(f, list[i].off, list[i].n, true);
	}
}

/* One step of the fill in slot s: fstat, read, report */
static void job_step(struct fz_pf *f, unsigned s, bool fail)
{
	struct job *j = &f->jobs[s];
	uint64_t i;

	switch (j->step) {
	case JOB_NONE:
		return;
	case JOB_STARTED:
		j->ver = cg_model_version(&f->m);
		j->step = JOB_STATED;
		return;
	case JOB_STATED:
		j->got = (ssize_t)cg_model_pread_len(f->m.size, j->off,
						     j->len);
		for (i = 0; i < (uint64_t)j->got; i++) {
			f->mem[s * f->pf.seg_size + i] =
				file_byte(f, j->off + i);
		}
		j->step = JOB_READ;
		return;
	case JOB_READ:
		j->step = JOB_NONE;
		cg_prefetch_filled(&f->pf, s, fail ? -1 : j->got, &j->ver);
		wake(f);
		refill(f);
		return;
	}
}

static void open_stream(struct fz_pf *f, struct fz_in *in)
{
	/* small tables: every byte served is checked, so size is time */
	static const uint64_t aheads[] = {256 * KiB, 64 * KiB, 1 * MiB,
					  512 * KiB, 0, 128 * KiB, 100 * KiB};
	static const size_t aligns[] = {4096, 512, 65536, 3000};
	uint64_t ahead = FZ_PICK(in, aheads);
	size_t align = FZ_PICK(in, aligns);

	cg_prefetch_init(&f->pf, ahead, align);
	free(f->mem);
	f->mem = malloc(FZ_MAX(cg_prefetch_memory(&f->pf), 1));
	if (f->mem == NULL) {
		abort();
	}
	memset(f->jobs, 0, sizeof(f->jobs));
	f->nwaiters = 0;
	if (f->pf.nseg > CG_PREFETCH_MAX_SEGS) {
		fz_violation("%u segments", f->pf.nseg);
	}
}

/* The file is closed: fills still running end (the glue drops them) */
static void close_stream(struct fz_pf *f)
{
	unsigned s;

	for (s = 0; s < CG_PREFETCH_MAX_SEGS; s++) {
		f->jobs[s].step = JOB_NONE;
	}
	f->nwaiters = 0;
}

/* An offset in [0, MAX_SIZE]: the file model holds no more */
static uint64_t pick_offset(const struct fz_pf *f, struct fz_in *in)
{
	uint8_t k = fz_u8(in);

	if (k < 0x80) {
		/* near the stream's front, 4 KiB steps */
		int64_t d = (int8_t)fz_u8(in) * 4 * (int64_t)KiB;

		if (d < 0 && (uint64_t)(-d) > f->pf.front) {
			return 0;
		}
		return FZ_MIN(f->pf.front + d, MAX_SIZE);
	}
	if (k < 0xc0) {
		return FZ_MIN(f->pf.front, MAX_SIZE);
	}
	return (uint64_t)fz_u16(in) * 512 % (MAX_SIZE + 1);
}

static size_t pick_length(struct fz_in *in)
{
	static const size_t lens[] = {64 * KiB, 128 * KiB, 1, 4096, 0,
				      1 * MiB, 60 * KiB, 300 * KiB};
	uint8_t k = fz_u8(in);

	if (k >= 0xc0) {
		return (size_t)(k - 0xbf) * 512;
	}
	return lens[k % FZ_N_ELEM(lens)];
}

static void write_begin(struct fz_pf *f, struct fz_in *in)
{
	uint64_t off = pick_offset(f, in);
	uint64_t n = pick_length(in);

	if (f->writing || n == 0 || off + n > MAX_SIZE) {
		return;
	}
	f->writing = true;
	f->w_off = off;
	f->w_len = n;
	cg_prefetch_invalidate(&f->pf, off, n);
}

static void write_end(struct fz_pf *f)
{
	if (!f->writing) {
		return;
	}
	file_change(f, f->w_off, f->w_len);
	cg_prefetch_invalidate(&f->pf, f->w_off, f->w_len);
	f->writing = false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz_pf f;
	struct fz_in in = {.p = data, .n = size};
	uint64_t off;
	size_t n;
	unsigned s;
	uint8_t op;

	free(f.mem);
	memset(&f, 0, sizeof(f));
	f.m.size = (uint64_t)fz_u16(&in) * 256 % (MAX_SIZE + 1);
	f.m.clock = 1700000000ULL * 1000000000ULL + 4000000;
	f.m.ctime = f.m.clock - 1000000000ULL;
	open_stream(&f, &in);
	while (in.n > 0) {
		op = fz_u8(&in);
		switch (op % 10) {
		case 0:
		case 1:
		case 2:
			off = pick_offset(&f, &in);
			n = pick_length(&in);
			serve(&f, off, n, false);
			refill(&f);
			break;
		case 3:
		case 4:
		case 5:
			s = fz_u8(&in) % CG_PREFETCH_MAX_SEGS;
			job_step(&f, s, op >= 0xf0);
			break;
		case 6:
			write_begin(&f, &in);
			break;
		case 7:
			write_end(&f);
			break;
		case 8:
			/* a local process writes or truncates */
			off = pick_offset(&f, &in);
			if (op >= 0x80) {
				file_change(&f, off, 0);
			} else {
				file_change(&f, off,
					    FZ_MIN(pick_length(&in) + 1,
						   MAX_SIZE - off + 1));
			}
			break;
		default:
			if (op < 0x60) {
				f.m.clock += 4000000;
			} else if (op < 0x68) {
				f.m.clock += 1000000000;
			} else if (op < 0xb0) {
				cg_prefetch_reset(&f.pf);
			} else {
				close_stream(&f);
				open_stream(&f, &in);
			}
			break;
		}
	}
	return 0;
}
