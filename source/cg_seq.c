/*
 * vfs_cacheguard engine: the sequential detector of read and write
 * streams, and the ranges they have completed
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

#include <string.h>

#include "cg_seq.h"
#include "cg_util.h"

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

void cg_done_reset(struct cg_done *d, uint64_t off)
{
	d->contig = off;
	d->nabove = 0;
}

/* Insert [off, end) above contig into the sorted, disjoint above[] */
static void cg_done_insert(struct cg_done *d, uint64_t off, uint64_t end)
{
	unsigned i = 0, j;

	while (i < d->nabove && d->above[i].end < off) {
		i++;
	}
	if (i < d->nabove && d->above[i].off <= end) {
		/* overlaps or touches above[i]: widen it, absorb successors */
		d->above[i].off = CG_MIN(d->above[i].off, off);
		d->above[i].end = CG_MAX(d->above[i].end, end);
		for (j = i + 1;
		     j < d->nabove && d->above[j].off <= d->above[i].end;
		     j++) {
			d->above[i].end = CG_MAX(d->above[i].end,
						 d->above[j].end);
		}
		memmove(d->above + i + 1,
			d->above + j,
			(d->nabove - j) * sizeof(d->above[0]));
		d->nabove -= j - i - 1;
		return;
	}
	if (d->nabove == CG_MAX_DONE) {
		/* Forget the highest; the floor moves past it */
		if (i == CG_MAX_DONE) {
			return;
		}
		d->nabove--;
	}
	memmove(d->above + i + 1,
		d->above + i,
		(d->nabove - i) * sizeof(d->above[0]));
	d->above[i] = (struct cg_range){.off = off, .end = end};
	d->nabove++;
}

void cg_done_add(struct cg_done *d, uint64_t off, uint64_t end, uint64_t floor)
{
	unsigned k = 0;

	if (end <= d->contig) {
		return;
	}
	if (off <= d->contig) {
		d->contig = end;
	} else {
		cg_done_insert(d, off, end);
	}
	d->contig = CG_MAX(d->contig, floor);
	while (k < d->nabove && d->above[k].off <= d->contig) {
		d->contig = CG_MAX(d->contig, d->above[k].end);
		k++;
	}
	if (k > 0) {
		d->nabove -= k;
		memmove(d->above, d->above + k,
			d->nabove * sizeof(d->above[0]));
	}
}
