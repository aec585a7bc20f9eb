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

#include "cg_util.h"
#include "cg_flight.h"

#define CG_FLIGHT_FREE UINT64_MAX

void cg_flight_init(struct cg_flight *f)
{
	unsigned i;

	*f = (struct cg_flight){.cur = 0};
	for (i = 0; i < CG_FLIGHT_SLOTS; i++) {
		f->slot[i] = CG_FLIGHT_FREE;
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
	for (i = 0; f->slot[i] != CG_FLIGHT_FREE; i++) {
		/* a free slot exists: nslots < CG_FLIGHT_SLOTS */
	}
	f->slot[i] = off;
	f->nslots++;
	*ref = (struct cg_flight_ref){CG_TRACK_SLOT, i};
}

void cg_flight_remove(struct cg_flight *f, struct cg_flight_ref *ref)
{
	if (ref->track == CG_TRACK_SLOT) {
		f->slot[ref->idx] = CG_FLIGHT_FREE;
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
	uint64_t low = CG_FLIGHT_FREE;
	unsigned i;

	for (i = 0; i < 2; i++) {
		if (f->batch[i].count > 0) {
			low = CG_MIN(low, f->batch[i].low);
		}
	}
	/* a free slot holds CG_FLIGHT_FREE, which is no lower */
	for (i = 0; i < CG_FLIGHT_SLOTS; i++) {
		low = CG_MIN(low, f->slot[i]);
	}
	return low;
}
