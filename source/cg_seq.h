/*
 * vfs_cacheguard engine: a run of sequential reads or writes: where
 * it began, how far it reached, its strays, the ranges it completed
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

#ifndef CG_SEQ_H
#define CG_SEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Far accesses in a row an active stream ignores before it starts over */
#define CG_STRAY_LIMIT 8

/*
 * One run of accesses from start to front, bytes in all; an access
 * within tol of the front, either side, extends it. Reads and writes.
 */
struct cg_seq {
	uint64_t start;
	uint64_t front;
	uint64_t bytes;
	unsigned strays;	/* far accesses in a row while active */
};

void cg_seq_restart(struct cg_seq *q, uint64_t off);

/* off is within tol of the front; never before the run's first access */
bool cg_seq_near(const struct cg_seq *q, uint64_t off, uint64_t tol);

/* A far access while active: true while ignored, false to start over */
bool cg_seq_stray(struct cg_seq *q);

void cg_seq_extend(struct cg_seq *q, uint64_t off, size_t n);

/* tol behind the front (at least 0): cg_done_add's floor */
uint64_t cg_seq_behind(const struct cg_seq *q, uint64_t tol);

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

#endif /* CG_SEQ_H */
