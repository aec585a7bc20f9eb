/*
 * vfs_cacheguard engine: what a thread of smbd's pool does for a direct
 * stream: a fill, a request's own read, a HIT's copy
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

#ifndef CG_DJOB_H
#define CG_DJOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cg_prefetch.h"
#include "cg_sys.h"

/*
 * A fill (into a segment of the prefetch buffer), a request's own read
 * (into its buffer in place, or into a bounce buffer when the request is
 * not aligned), or a HIT's copy (from the pinned pieces of the buffer
 * into the request's, if they are still the file's bytes). Every one
 * takes the file's version first (cg_pf_version_now): so smbd's event
 * loop never calls fstat(), and every job tells the table how the file
 * is now. The glue sets what the job is, a thread runs it
 * (cg_djob_run), the glue reads what it did.
 */
enum cg_djob_kind {
	CG_DJOB_FILL = 0,
	CG_DJOB_READ,
	CG_DJOB_COPY,
};

struct cg_djob {
	/* what to do */
	enum cg_djob_kind kind;
	const struct cg_sys *sys;
	int fd;				/* O_DIRECT */
	uint8_t *buf;
	size_t count;
	uint64_t offset;
	size_t align;
	const uint8_t *mem;		/* COPY: the table's buffer */
	const struct cg_pf_piece *pieces;	/* COPY: what to copy */
	unsigned npieces;
	bool inplace;			/* READ: into the request's own */
	struct cg_dio_inplace plan;	/* READ, in place */
	uint8_t *bounce;		/* READ: in place its tail's, or all */
	unsigned ioprio;		/* the thread's, while it reads */

	/* what it did */
	bool version_ok;
	struct cg_pf_version ver;	/* the file just before the read */
	bool stale;			/* COPY: pieces not current */
	ssize_t ret;
	int err;
	uint64_t duration;		/* ns, on the monotonic clock */
};

/* Run j, in whichever thread runs it (cg_once.h): fills its results */
void cg_djob_run(struct cg_djob *j);

#endif
