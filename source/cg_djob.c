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
#include <sys/file.h>

#include "cg_dev.h"
#include "cg_djob.h"
#include "cg_huge.h"

static uint64_t cg_djob_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/* How a job reads: its descriptor, alignment, pieces, counting, turn */
struct cg_djob_reader {
	const struct cg_sys *sys;
	int fd;
	size_t align;
	size_t piece;
	int stat_fd;		/* -1: not counted */
	int turn_fd;		/* -1: pieces without the device's turn */
	/* with the turn: what the pieces saw, and their time */
	int64_t others;
	uint64_t busy;
	unsigned waited;
};

/*
 * The device's turn (cg_dev_turn_open): taken at once, or after another
 * stream's piece (counted as waited for); false where flock() failed
 */
static bool cg_djob_turn_take(struct cg_djob_reader *r)
{
	int ret;

	if (flock(r->turn_fd, LOCK_EX | LOCK_NB) == 0) {
		return true;
	}
	if (errno != EWOULDBLOCK) {
		return false;
	}
	r->waited++;
	do {
		ret = flock(r->turn_fd, LOCK_EX);
	} while (ret == -1 && errno == EINTR);
	return ret == 0;
}

/*
 * One piece: counted as this process's while it is out; with the turn,
 * held while it is out, and counted alone (others' bytes then are the
 * neighbours', never another paced stream's)
 */
static ssize_t cg_djob_read_piece(struct cg_djob_reader *r,
				  uint8_t *buf,
				  size_t n,
				  uint64_t off)
{
	struct cg_dev_count count;
	bool turn = r->turn_fd >= 0;
	bool held = turn && cg_djob_turn_take(r);
	uint64_t start = 0;
	ssize_t got;

	if (turn) {
		start = cg_djob_now_ns();
		cg_dev_count_start(&count, r->stat_fd);
	}
	if (r->stat_fd >= 0) {
		cg_dev_own_sent(n);
	}
	got = cg_dio_read_full(r->sys, r->fd, buf, n, off, r->align);
	if (r->stat_fd >= 0) {
		cg_dev_own_done(n);
	}
	if (turn) {
		int saved = errno;
		int64_t others = got == -1 ? -1 : cg_dev_count_others(&count);

		r->others = cg_dev_others_sum(r->others, others);
		r->busy += cg_djob_now_ns() - start;
		if (held) {
			flock(r->turn_fd, LOCK_UN);
		}
		errno = saved;
	}
	return got;
}

/*
 * An aligned read, one piece at the device at a time (stream pacing:
 * a neighbour's read waits for one piece, not the whole read)
 */
static ssize_t cg_djob_read_aligned(void *ctx,
				    uint8_t *buf,
				    size_t len,
				    uint64_t off)
{
	struct cg_djob_reader *r = ctx;
	size_t done = 0;

	while (done < len) {
		size_t n = len - done;
		ssize_t got;

		if (r->piece != 0 && n > r->piece) {
			n = r->piece;
		}
		got = cg_djob_read_piece(r, buf + done, n, off + done);
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
	bool counted = j->counted && j->kind != CG_DJOB_COPY;
	struct cg_djob_reader r = {
		.sys = j->sys,
		.fd = j->fd,
		.align = j->align,
		.piece = j->piece,
		.stat_fd = counted ? j->stat_fd : -1,
		.turn_fd = counted && j->piece != 0 ? j->turn_fd : -1,
	};
	struct cg_dev_count count;

	j->ret = -1;
	j->err = 0;
	j->others = -1;
	cg_dev_count_start(&count, r.turn_fd < 0 ? r.stat_fd : -1);
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
	cg_ioprio_leave(saved);
	j->duration = cg_djob_now_ns() - start;
	j->busy = j->duration;
	j->waited = r.waited;
	if (j->ret == -1) {
		return;
	}
	if (r.turn_fd < 0) {
		j->others = cg_dev_count_others(&count);
	} else if (r.busy != 0) {
		j->others = r.others;
		j->busy = r.busy;
	}
}
