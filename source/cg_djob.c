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

#include <errno.h>
#include <time.h>

#include "cg_djob.h"
#include "cg_util.h"

/* How a job reads: its descriptor and alignment */
struct cg_djob_reader {
	const struct cg_sys *sys;
	int fd;
	size_t align;
};

static ssize_t cg_djob_read_aligned(void *ctx,
				    uint8_t *buf,
				    size_t len,
				    uint64_t off)
{
	struct cg_djob_reader *r = ctx;

	return cg_dio_read_full(r->sys, r->fd, buf, len, off, r->align);
}

void cg_djob_run(struct cg_djob *j)
{
	uint64_t start = cg_now_ns();
	int saved = cg_ioprio_enter(j->ioprio);
	struct cg_djob_reader r = {
		.sys = j->sys,
		.fd = j->fd,
		.align = j->align,
	};

	j->ret = -1;
	j->err = 0;
	j->version_ok = cg_pf_version_now(j->fd, &j->ver) == 0;
	if (!j->version_ok) {
		j->err = errno;
	} else if (j->kind == CG_DJOB_COPY) {
		j->stale = !cg_prefetch_pieces_current(j->pieces,
						       j->npieces,
						       &j->ver);
		j->ret = j->stale ? -1
				  : (ssize_t)cg_prefetch_copy_pieces(j->sys,
								     j->mem,
								     j->pieces,
								     j->npieces,
								     j->buf);
	} else if (j->inplace) {
		j->ret = cg_dio_read_inplace(&j->plan,
					     j->buf,
					     j->offset,
					     j->bounce,
					     cg_djob_read_aligned,
					     &r);
		j->err = j->ret == -1 ? errno : 0;
	} else {
		j->ret = cg_djob_read_aligned(&r, j->buf, j->count, j->offset);
		j->err = j->ret == -1 ? errno : 0;
	}
	cg_ioprio_leave(saved);
	j->duration = cg_now_ns() - start;
}
