/*
 * vfs_cacheguard engine: the sequential detector of read and write
 * streams
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

#include "cg_seq.h"

void cg_seq_restart(struct cg_seq *q, uint64_t off)
{
	*q = (struct cg_seq){.start = off, .front = off};
}

bool cg_seq_near(const struct cg_seq *q, uint64_t off, uint64_t tol)
{
	return q->bytes > 0 && off + tol >= q->front && off <= q->front + tol;
}

bool cg_seq_stray(struct cg_seq *q)
{
	return ++q->strays < CG_STRAY_LIMIT;
}

void cg_seq_extend(struct cg_seq *q, uint64_t off, size_t n)
{
	q->strays = 0;
	q->bytes += n;
	if (off + n > q->front) {
		q->front = off + n;
	}
}

uint64_t cg_seq_behind(const struct cg_seq *q, uint64_t tol)
{
	return q->front > tol ? q->front - tol : 0;
}
