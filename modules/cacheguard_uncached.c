/*
 * vfs_cacheguard: uncached reads, preadv2(RWF_DONTCACHE) in smbd's pool,
 * or pieces dropped once read
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

/*
 * RWF_DONTCACHE (Linux 6.14+; ext4 from 6.17, XFS from 6.15) is a
 * buffered read whose newly created pages are dropped once the read
 * completes; pages that were cached already stay. Kernels or
 * filesystems without it fail with EOPNOTSUPP. The same job reads a
 * dontneed stream alone on its file in pieces, each dropped once read
 * (CG_READ_DROP).
 */

#include "includes.h"
#include "smbd/smbd.h"
#include "smbd/globals.h"
#include "lib/util/tevent_unix.h"

#include <sys/uio.h>

#include "cacheguard_glue.h"
#include "../source/cg_sys.h"

#undef DBGC_CLASS
#define DBGC_CLASS vfs_cacheguard_debug_level

/* Counted in smbd's profile as vfs_default's pread is (syscall_pread) */
ssize_t cacheguard_uncached_pread(int fd,
				  void *data,
				  size_t n,
				  off_t offset,
				  int flags,
				  unsigned ioprio)
{
	int saved = cg_ioprio_enter(ioprio);
	ssize_t ret;
	int err;

	START_PROFILE_BYTES(syscall_pread, n);
	ret = cg_pread_full(&cg_sys_linux, fd, data, n, (uint64_t)offset,
			    flags);
	END_PROFILE_BYTES(syscall_pread);
	err = errno;
	cg_ioprio_leave(saved);
	errno = err;
	return ret;
}

/* Flat: the pool thread touches nothing else */
struct cacheguard_uncached_job {
	int fd;
	int flags;
	void *buf;
	size_t count;
	off_t offset;
	unsigned ioprio;	/* cacheguard:stream ioprio */
	ssize_t ret;
	int err;
	uint64_t duration;
};

static void cacheguard_uncached_do(void *private_data)
{
	struct cacheguard_uncached_job *job =
		talloc_get_type_abort(private_data,
				      struct cacheguard_uncached_job);
	struct timespec start, end;
	int saved;

	clock_gettime_mono(&start);
	saved = cg_ioprio_enter(job->ioprio);
	job->ret = cg_pread_full(&cg_sys_linux,
				 job->fd,
				 job->buf,
				 job->count,
				 (uint64_t)job->offset,
				 job->flags);
	job->err = job->ret == -1 ? errno : 0;
	cg_ioprio_leave(saved);
	clock_gettime_mono(&end);
	job->duration = nsec_time_diff(&end, &start);
}

struct tevent_req *
cacheguard_uncached_pread_send(TALLOC_CTX *mem_ctx,
			       struct tevent_context *ev,
			       struct vfs_handle_struct *handle,
			       int fd,
			       void *data,
			       size_t n,
			       off_t offset,
			       int flags,
			       unsigned ioprio)
{
	struct tevent_req *req = NULL;
	struct cacheguard_uncached_job *job = NULL;

	job = talloc(mem_ctx, struct cacheguard_uncached_job);
	if (job == NULL) {
		return NULL;
	}
	*job = (struct cacheguard_uncached_job){
		.fd = fd,
		.flags = flags,
		.buf = data,
		.count = n,
		.offset = offset,
		.ioprio = ioprio,
		.ret = -1,
	};
	req = cacheguard_pool_send(mem_ctx,
				   ev,
				   handle->conn->sconn->pool,
				   cacheguard_uncached_do,
				   job,
				   n,
				   CACHEGUARD_POOL_PREAD);
	if (req == NULL) {
		TALLOC_FREE(job);
	}
	return req;
}

ssize_t cacheguard_uncached_pread_recv(struct tevent_req *req,
				       struct vfs_aio_state *vfs_aio_state)
{
	struct cacheguard_uncached_job *job = NULL;
	int err = cacheguard_pool_recv(req);

	*vfs_aio_state = (struct vfs_aio_state){.error = err};
	if (err != 0) {
		return -1;
	}
	job = talloc_get_type_abort(cacheguard_pool_job(req),
				    struct cacheguard_uncached_job);
	vfs_aio_state->error = job->err;
	vfs_aio_state->duration = job->duration;
	return job->ret;
}
