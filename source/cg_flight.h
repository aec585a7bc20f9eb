/*
 * vfs_cacheguard engine: the reads of a stream in flight: how many,
 * and the lowest offset among them
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

#ifndef CG_FLIGHT_H
#define CG_FLIGHT_H

#include <stdint.h>

/* Reads tracked one by one; more go into two batches */
#define CG_FLIGHT_SLOTS 64

/* How a read in flight is tracked: one by one, or in an overflow batch */
enum cg_track {
	CG_TRACK_NONE = 0,
	CG_TRACK_SLOT,	/* slot[idx] holds its offset */
	CG_TRACK_BATCH,	/* counted in batch[idx] */
};

/* Where one read is tracked, from cg_flight_add to cg_flight_remove */
struct cg_flight_ref {
	enum cg_track track;
	unsigned idx;	/* in slot[], or the batch */
};

/*
 * A stream's reads in flight, so drops never reach below the lowest:
 * one by one up to CG_FLIGHT_SLOTS, beyond in two batches of count and
 * lowest offset. Spills switch batch whenever the other has drained, so
 * a batch's low is never older than the queue and drops keep moving.
 */
struct cg_flight {
	uint64_t slot[CG_FLIGHT_SLOTS];	/* offsets, UINT64_MAX free */
	unsigned nslots;		/* of them in use */
	struct {
		unsigned count;	/* reads in flight beyond the slots */
		uint64_t low;	/* the lowest offset among them */
	} batch[2];
	unsigned cur;		/* the batch new spills join */
};

void cg_flight_init(struct cg_flight *f);

/* A read at off is in flight: *ref says where it is tracked */
void cg_flight_add(struct cg_flight *f,
		   uint64_t off,
		   struct cg_flight_ref *ref);

/* The read of ref ended (a ref tracked nowhere is left alone) */
void cg_flight_remove(struct cg_flight *f, struct cg_flight_ref *ref);

unsigned cg_flight_count(const struct cg_flight *f);

/* The lowest offset of a read in flight; UINT64_MAX: none */
uint64_t cg_flight_lowest(const struct cg_flight *f);

#endif
