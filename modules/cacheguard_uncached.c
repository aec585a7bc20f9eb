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
 * RWF_DONTCACHE (Linux 6.14+; read side fixed in 6.16; ext4 from 6.17,
 * XFS from 6.15) is a buffered read whose newly created pages are dropped
 * once the read completes; pages that were cached already stay. Kernels
 * or filesystems without it fail with EOPNOTSUPP.
 *
 * The same job reads a dontneed stream that is alone on its file in
 * pieces, each dropped with POSIX_FADV_DONTNEED once read (CG_READ_DROP),
 * so its reads in flight hold a piece each, not the whole client read.
 *
 * The job follows vfs_default's pread: the thread function touches only
 * the flat state, a destructor keeps that state alive while a thread
 * writes into it, and a pool that cannot start a thread (EAGAIN) gets
 * the read done inline so the client still gets its data.
 */

#include "includes.h"
#include "smbd/smbd.h"
#include "smbd/globals.h"
#include "lib/util/tevent_unix.h"
#include "lib/pthreadpool/pthreadpool_tevent.h"

#include <sys/uio.h>

#include "cacheguard_glue.h"
#include "../source/cg_sys.h"

#undef DBGC_CLASS
#define DBGC_CLASS vfs_cacheguard_debug_level

/*
 * pread semantics, with an error in the middle an error: then the caller
 * retries the range buffered (cg_pread_full in the engine). Counted in
 * smbd's profile as vfs_default's pread is (syscall_pread).
 */
ssize_t cg_uncached_pread(int fd,
			  void *data,
			  size_t n,
			  off_t offset,
			  int flags)
{
	ssize_t ret;

	START_PROFILE_BYTES(syscall_pread, n);
	ret = cg_pread_full(&cg_sys_linux, fd, data, n, (uint64_t)offset,
			    flags);
	END_PROFILE_BYTES(syscall_pread);
	return ret;
}

struct cg_uncached_state {
	int fd;
	int flags;
	void *buf;
	size_t count;
	off_t offset;
	unsigned ioprio;	/* cacheguard:stream ioprio */
	ssize_t ret;
	int err;
	struct vfs_aio_state vfs_aio_state;
	SMBPROFILE_BYTES_ASYNC_STATE(profile_bytes);
};

static void cg_uncached_do(void *private_data);
static void cg_uncached_done(struct tevent_req *subreq);
static int cg_uncached_state_destructor(struct cg_uncached_state *state);

struct tevent_req *cg_uncached_pread_send(TALLOC_CTX *mem_ctx,
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
	struct tevent_req *subreq = NULL;
	struct cg_uncached_state *state = NULL;

	req = tevent_req_create(mem_ctx, &state, struct cg_uncached_state);
	if (req == NULL) {
		return NULL;
	}
	*state = (struct cg_uncached_state){
		.fd = fd,
		.flags = flags,
		.buf = data,
		.count = n,
		.offset = offset,
		.ioprio = ioprio,
		.ret = -1,
	};

	/* in smbd's profile as vfs_default's (syscall_asys_pread) */
	SMBPROFILE_BYTES_ASYNC_START(syscall_asys_pread,
				     profile_p,
				     state->profile_bytes,
				     n);
	SMBPROFILE_BYTES_ASYNC_SET_IDLE(state->profile_bytes);
	subreq = pthreadpool_tevent_job_send(state,
					     ev,
					     handle->conn->sconn->pool,
					     cg_uncached_do,
					     state);
	if (tevent_req_nomem(subreq, req)) {
		return tevent_req_post(req, ev);
	}
	tevent_req_set_callback(subreq, cg_uncached_done, req);
	talloc_set_destructor(state, cg_uncached_state_destructor);
	return req;
}

static void cg_uncached_do(void *private_data)
{
	struct cg_uncached_state *state = talloc_get_type_abort(
		private_data, struct cg_uncached_state);
	struct timespec start, end;
	int saved;

	SMBPROFILE_BYTES_ASYNC_SET_BUSY(state->profile_bytes);
	clock_gettime_mono(&start);
	saved = cg_ioprio_enter(state->ioprio);
	state->ret = cg_pread_full(&cg_sys_linux,
				   state->fd,
				   state->buf,
				   state->count,
				   (uint64_t)state->offset,
				   state->flags);
	state->err = state->ret == -1 ? errno : 0;
	cg_ioprio_leave(saved);
	clock_gettime_mono(&end);
	state->vfs_aio_state.duration = nsec_time_diff(&end, &start);
	SMBPROFILE_BYTES_ASYNC_SET_IDLE(state->profile_bytes);
}

static int cg_uncached_state_destructor(struct cg_uncached_state *state)
{
	return -1;	/* a thread may still write into state */
}

static void cg_uncached_done(struct tevent_req *subreq)
{
	struct tevent_req *req = tevent_req_callback_data(subreq,
							  struct tevent_req);
	struct cg_uncached_state *state =
		tevent_req_data(req, struct cg_uncached_state);
	int ret;

	ret = pthreadpool_tevent_job_recv(subreq);
	TALLOC_FREE(subreq);
	talloc_set_destructor(state, NULL);
	if (ret != 0) {
		if (ret != EAGAIN) {
			SMBPROFILE_BYTES_ASYNC_END(state->profile_bytes);
			tevent_req_error(req, ret);
			return;
		}
		/* No thread to be had: read inline rather than fail */
		cg_uncached_do(state);
	}
	SMBPROFILE_BYTES_ASYNC_END(state->profile_bytes);
	state->vfs_aio_state.error = state->err;
	tevent_req_done(req);
}

ssize_t cg_uncached_pread_recv(struct tevent_req *req,
			       struct vfs_aio_state *vfs_aio_state)
{
	struct cg_uncached_state *state =
		tevent_req_data(req, struct cg_uncached_state);

	if (tevent_req_is_unix_error(req, &vfs_aio_state->error)) {
		return -1;
	}
	*vfs_aio_state = state->vfs_aio_state;
	return state->ret;
}
