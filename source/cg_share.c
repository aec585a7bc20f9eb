/*
 * vfs_cacheguard engine: streams of one file in several smbd processes
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
 * Several smbd processes streaming one file each have a stream of their
 * own; alone, the first reader would drop what the others are about to
 * read. So streams tell each other what they still need.
 *
 * The stream file, in smbd's state directory, is used only for its OFD
 * locks. A file gets a slot of its offsets from its device and inode;
 * each 64 KiB of the file is one byte of its slot. An active stream holds
 * a read lock on what it still needs, from the lowest byte it has not
 * read to cacheguard:reader gap past it, moved once per window, on a
 * descriptor of its own: it never merges with another's and dies with
 * the process. Before a drop, a stream asks for a write lock on the range
 * (F_OFD_GETLK): what another claims is kept for the stream behind, so
 * the slowest reader drops each window. A stream that has seen another
 * drops, when it ends, what others may have kept for it.
 *
 * Streams of one client (share.client: one smbd serves one client) keep
 * nothing for each other: a Linux cifs mount sends the pieces of one scan
 * through either handle. They share one open file description of the
 * stream file, whose locks never conflict with each other, and a stream
 * letting go of part of its claim keeps locked what a sibling claims.
 *
 * A dontcache or direct stream that sees another stream of its file reads
 * through the cache from then on, else each would read the file itself.
 * Colliding slots only keep too much. Without the stream file every
 * stream drops as if alone.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* F_OFD_GETLK, F_OFD_SETLK */
#endif
#include <fcntl.h>
#include <unistd.h>

#include "cg_util.h"
#include "cg_share.h"
#include "cg_sys.h"

/* 23 bits of file identity, 2^39 units each: locks end below 2^62 */
#define CG_SHARE_SLOT_BITS 23
#define CG_SHARE_SLOT_UNITS (1ULL << 39)
#define CG_SHARE_UNIT_SHIFT 16
/* Pieces a drop may split into around other streams' claims */
#define CG_SHARE_PIECES 16

uint64_t cg_share_slot(uint64_t dev, uint64_t ino)
{
	/* splitmix64's finalizer: nearby inodes land far apart */
	uint64_t h = dev * 0x9e3779b97f4a7c15ULL ^ ino;

	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h >> (64 - CG_SHARE_SLOT_BITS);
}

static uint64_t cg_unit_down(uint64_t off)
{
	return CG_MIN(off >> CG_SHARE_UNIT_SHIFT, CG_SHARE_SLOT_UNITS);
}

static uint64_t cg_unit_up(uint64_t off)
{
	uint64_t u = (off >> CG_SHARE_UNIT_SHIFT) +
		     ((off & ((1ULL << CG_SHARE_UNIT_SHIFT) - 1)) != 0);

	return CG_MIN(u, CG_SHARE_SLOT_UNITS);
}

/* A lock command of type on units [u0, u1) of the stream's slot */
static int cg_share_fcntl(const struct cg_stream *s,
			  int cmd,
			  struct flock *fl,
			  short type,
			  uint64_t u0,
			  uint64_t u1)
{
	*fl = (struct flock){
		.l_type = type,
		.l_whence = SEEK_SET,
		.l_start = (off_t)(s->share.slot * CG_SHARE_SLOT_UNITS + u0),
		.l_len = (off_t)(u1 - u0),
	};
	return cg_sys_lock(s->sys, s->share.fd, cmd, fl);
}

/*
 * This process's streams of a client that have the stream file open.
 * Only smbd's main thread calls the engine, so no lock. An entry with
 * share.client 0 (cleared without a close) counts for nothing.
 */
#define CG_SHARE_LOCAL 64
static struct cg_stream *cg_share_local[CG_SHARE_LOCAL];
static unsigned cg_share_nlocal;	/* entries in use */

/*
 * Whether another client's stream claims some of units [u0, u1), with one
 * such claim in *c0, *c1; an error says no. Our client's claims are locks
 * on our own description, which never conflict.
 */
static bool cg_share_claimed(const struct cg_stream *s,
			     uint64_t u0,
			     uint64_t u1,
			     uint64_t *c0,
			     uint64_t *c1)
{
	uint64_t base = s->share.slot * CG_SHARE_SLOT_UNITS;
	uint64_t start, end;
	struct flock fl;

	if (u1 <= u0 ||
	    cg_share_fcntl(s, F_OFD_GETLK, &fl, F_WRLCK, u0, u1) != 0 ||
	    fl.l_type == F_UNLCK) {
		return false;
	}
	start = (uint64_t)fl.l_start;
	end = fl.l_len == 0 ? CG_FREE : start + (uint64_t)fl.l_len;
	*c0 = CG_MAX(start, base + u0) - base;
	*c1 = CG_MIN(end, base + u1) - base;
	return *c1 > *c0;
}

/*
 * Unlock units [u0, u1), but not what a sibling claims there: one in
 * cg_share_local[i] or later, as earlier ones claim none of the range
 */
static void cg_share_unlock(struct cg_stream *s,
			    uint64_t u0,
			    uint64_t u1,
			    unsigned i)
{
	struct flock fl;

	for (; i < CG_SHARE_LOCAL && u0 < u1; i++) {
		const struct cg_stream *o = cg_share_local[i];
		uint64_t c0, c1;

		if (o == NULL || o == s || s->share.client == 0 ||
		    o->share.client != s->share.client ||
		    o->share.slot != s->share.slot ||
		    o->share.claim.end <= o->share.claim.off) {
			continue;
		}
		c0 = cg_unit_down(o->share.claim.off);
		c1 = cg_unit_up(o->share.claim.end);
		if (c0 < u1 && u0 < c1) {
			/* around the claim: what lies before it, then after */
			cg_share_unlock(s, u0, c0, i + 1);
			u0 = c1;
		}
	}
	if (u0 < u1) {
		cg_share_fcntl(s, F_OFD_SETLK, &fl, F_UNLCK, u0, u1);
	}
}

bool cg_share_sibling_active(const struct cg_stream *s)
{
	unsigned i;

	/* asked on detecting reads: most processes have no stream at all */
	if (cg_share_nlocal == 0 || s->share.client == 0) {
		return false;
	}
	for (i = 0; i < CG_SHARE_LOCAL; i++) {
		const struct cg_stream *o = cg_share_local[i];

		if (o != NULL && o != s && o->share.client == s->share.client &&
		    o->share.slot == s->share.slot && o->state == CG_ACTIVE) {
			return true;
		}
	}
	return false;
}

void cg_share_begin(struct cg_stream *s)
{
	const struct cg_stream *sib = NULL;
	unsigned i, free_i = CG_SHARE_LOCAL;
	bool linked = false;

	if (s->share.fd != -1 || s->share.slot == CG_FREE) {
		return;
	}
	/* In the table with no claims too: its siblings see that it streams */
	for (i = 0; i < CG_SHARE_LOCAL && s->share.client != 0; i++) {
		const struct cg_stream *o = cg_share_local[i];

		if (o == s) {
			linked = true;
		} else if (o == NULL) {
			free_i = CG_MIN(free_i, i);
		} else if (sib == NULL && o->share.fd != -1 &&
			   o->share.client == s->share.client &&
			   o->share.slot == s->share.slot) {
			sib = o;
		}
	}
	if (!linked && free_i < CG_SHARE_LOCAL) {
		cg_share_local[free_i] = s;
		cg_share_nlocal++;
		linked = true;
	}
	if (s->sys->share_open == NULL || s->cfg->reader_gap == 0) {
		return;
	}
	/* the stream file: a sibling's description, or its own */
	s->share.fd = linked && sib != NULL ? cg_sys_dup(s->sys, sib->share.fd)
					    : s->sys->share_open();
}

uint64_t cg_share_drop(struct cg_stream *s, int fd, uint64_t off, uint64_t end)
{
	struct cg_range todo[CG_SHARE_PIECES];
	unsigned n = 0;
	uint64_t kept = CG_FREE;

	if (end <= off) {
		return kept;
	}
	if (s->share.fd == -1) {
		s->sys->fadvise(fd, off, end - off, POSIX_FADV_DONTNEED);
		s->stats.drops++;
		return kept;
	}
	/* Units, outward: a claim on any part of a unit keeps all of it */
	todo[n++] = (struct cg_range){cg_unit_down(off), cg_unit_up(end)};
	while (n > 0) {
		struct cg_range u = todo[--n];
		uint64_t c0, c1, a, b;

		if (u.end <= u.off) {
			continue;
		}
		if (cg_share_claimed(s, u.off, u.end, &c0, &c1)) {
			if (n + 2 > CG_SHARE_PIECES) {
				/* too many claims to step around: keep it */
				c0 = u.off;
				c1 = u.end;
			}
			kept = CG_MIN(kept, CG_MAX(c0 << CG_SHARE_UNIT_SHIFT,
						   off));
			todo[n++] = (struct cg_range){u.off, c0};
			todo[n++] = (struct cg_range){c1, u.end};
			continue;
		}
		a = CG_MAX(u.off << CG_SHARE_UNIT_SHIFT, off);
		b = u.end == CG_SHARE_SLOT_UNITS
			    ? end
			    : CG_MIN(u.end << CG_SHARE_UNIT_SHIFT, end);
		if (b > a) {
			s->sys->fadvise(fd, a, b - a, POSIX_FADV_DONTNEED);
			s->stats.drops++;
		}
	}
	return kept;
}

bool cg_share_update(struct cg_stream *s, int fd, uint64_t from)
{
	uint64_t size = CG_MAX(s->file_size, s->seq.front);
	uint64_t o0 = cg_unit_down(s->share.claim.off);
	uint64_t c0, c1, end, u0, u1;
	struct flock fl;
	bool met = false;

	if (s->share.fd == -1 || s->state != CG_ACTIVE) {
		return false;
	}
	/* Until it has seen another, look: it may keep pages for us */
	if (!s->share.seen &&
	    cg_share_claimed(s, 0, cg_unit_up(size), &c0, &c1)) {
		s->share.seen = true;
		met = true;
	}
	if (s->share.claim.end != 0 &&
	    from < s->share.claim.off + s->cfg->window) {
		return met;
	}
	from = CG_MIN(from, size);
	end = CG_MIN(from + s->cfg->reader_gap, size);
	u0 = cg_unit_down(from);
	u1 = cg_unit_up(end);
	/* The new claim first: what is still needed is never unclaimed */
	if (u1 > u0) {
		cg_share_fcntl(s, F_OFD_SETLK, &fl, F_RDLCK, u0, u1);
	}
	if (s->share.claim.end > s->share.claim.off && o0 < u0) {
		cg_share_unlock(s, o0, u0, 0);
	}
	s->share.claim = (struct cg_range){.off = from, .end = end};
	/* below every read in flight: "from" is at most the lowest */
	if (s->share.kept_lo < CG_MIN(s->dropped_to, from)) {
		s->share.kept_lo = cg_share_drop(s, fd, s->share.kept_lo,
					   CG_MIN(s->dropped_to, from));
	}
	return met;
}

struct cg_range cg_share_leftover(const struct cg_stream *s)
{
	uint64_t off = CG_MAX(s->share.claim.off, s->seq.front);

	if (s->share.fd == -1 || !s->share.seen || s->share.claim.end <= off) {
		return (struct cg_range){0, 0};
	}
	return (struct cg_range){.off = off, .end = s->share.claim.end};
}

/* A claim is made (cg_share_update) and given up only with share.fd open */
void cg_share_end(struct cg_stream *s, int fd, bool close_it)
{
	struct cg_range r = cg_share_leftover(s);
	unsigned i;

	if (close_it) {
		for (i = 0; i < CG_SHARE_LOCAL; i++) {
			if (cg_share_local[i] == s) {
				cg_share_local[i] = NULL;
				cg_share_nlocal--;
			}
		}
		cg_share_drop(s, fd, r.off, r.end);
	}
	if (s->share.claim.end != 0) {
		cg_share_unlock(s, 0, CG_SHARE_SLOT_UNITS, 0);
		s->share.claim = (struct cg_range){0, 0};
	}
	if (close_it && s->share.fd != -1) {
		close(s->share.fd);
		s->share.fd = -1;
	}
}
