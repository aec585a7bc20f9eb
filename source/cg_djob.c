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

#include "cg_dev.h"
#include "cg_djob.h"
#include "cg_huge.h"

static uint64_t cg_djob_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/* How a job reads: its descriptor, alignment, pieces, and counting */
struct cg_djob_reader {
	const struct cg_sys *sys;
	int fd;
	size_t align;
	size_t piece;
	bool counted;
};

/*
 * An aligned read, one piece at the device at a time (stream pacing:
 * a neighbour's read waits for one piece, not the whole read), each
 * counted as this process's while it is out
 */
static ssize_t cg_djob_read_aligned(void *ctx,
				    uint8_t *buf,
				    size_t len,
				    uint64_t off)
{
	const struct cg_djob_reader *r = ctx;
	size_t done = 0;

	while (done < len) {
		size_t n = len - done;
		ssize_t got;

		if (r->piece != 0 && n > r->piece) {
			n = r->piece;
		}
		if (r->counted) {
			cg_dev_own_sent(n);
		}
		got = cg_dio_read_full(r->sys, r->fd, buf + done, n,
				       off + done, r->align);
		if (r->counted) {
			cg_dev_own_done(n);
		}
		if (got == -1) {
			return -1;
		}
		done += (size_t)got;
		if ((size_t)got < n) {
			break;	/* end of file */
		}
	}
	return (ssize_t)done;
}

void cg_djob_run(struct cg_djob *j)
{
	uint64_t start = cg_djob_now_ns();
	int saved = cg_ioprio_enter(j->ioprio);
	struct cg_djob_reader r = {
		.sys = j->sys,
		.fd = j->fd,
		.align = j->align,
		.piece = j->piece,
		.counted = j->counted && j->kind != CG_DJOB_COPY,
	};
	struct cg_dev_count count;

	j->ret = -1;
	j->err = 0;
	j->others = -1;
	cg_dev_count_start(&count, r.counted ? j->stat_fd : -1);
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
		if (j->probe && j->ret > 0) {
			j->probed = cg_huge_probe(j->buf, &j->huge);
		}
	}
	if (j->ret != -1) {
		j->others = cg_dev_count_others(&count);
	}
	cg_ioprio_leave(saved);
	j->duration = cg_djob_now_ns() - start;
}
