/*
 * vfs_cacheguard engine: the ranges a stream has completed, reads or
 * writes
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

#ifndef CG_DONE_H
#define CG_DONE_H

#include <stdint.h>

struct cg_range {
	uint64_t off;
	uint64_t end;
};

/* Completed ranges above the contiguous front kept to merge later */
#define CG_MAX_DONE 16

/*
 * What a stream has completed, in any order: all below contig, and above
 * it up to CG_MAX_DONE sorted, disjoint ranges waiting for the gap
 */
struct cg_done {
	uint64_t contig;
	struct cg_range above[CG_MAX_DONE];
	unsigned nabove;
};

void cg_done_reset(struct cg_done *d, uint64_t off);

/*
 * [off, end) completed. A gap below floor was skipped: contig moves past
 * it. When full, the highest range is forgotten; floor passes it later.
 */
void cg_done_add(struct cg_done *d, uint64_t off, uint64_t end, uint64_t floor);

#endif /* CG_DONE_H */
