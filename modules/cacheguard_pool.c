/*
 * vfs_cacheguard: jobs in smbd's thread pool, the way vfs_default runs
 * its preads and pwrites, and the uncached read or write among them
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
 * Every job of the module runs through cacheguard_pool_send, with
 * vfs_default's discipline:
 *
 * - the thread touches the job and this request's flat state only; the
 *   job is moved under the state, and a destructor keeps the state (and
 *   so the job) alive while a thread may still use it, even when the
 *   caller frees the request;
 * - a pool that cannot start a thread (EAGAIN) has the job run inline,
 *   so the client still gets its bytes, unless it may be skipped (a
 *   writeback, whose ranges the next job takes over);
 * - smbd's profile counts the job's bytes as vfs_default's own
 *   asynchronous preads or pwrites.
 *
 * The uncached job: a read or write with RWF_DONTCACHE (cg_sys.h), or a
 * dontneed stream's read in pieces, each dropped once read.
 */

#include "includes.h"
#include "smbd/smbd.h"
#include "smbd/globals.h"
#include "lib/util/tevent_unix.h"
#include "lib/pthreadpool/pthreadpool_tevent.h"

#include "cacheguard_glue.h"
#include "../source/cg_sys.h"
#include "../source/cg_util.h"

struct cacheguard_pool_state {
	void (*fn)(void *job);
	void *job;
	unsigned flags;
	SMBPROFILE_BYTES_ASYNC_STATE(profile_bytes);
};

static void cacheguard_pool_do(void *private_data)
{
	struct cacheguard_pool_state *state = talloc_get_type_abort(
		private_data, struct cacheguard_pool_state);

	SMBPROFILE_BYTES_ASYNC_SET_BUSY(state->profile_bytes);
	state->fn(state->job);
	SMBPROFILE_BYTES_ASYNC_SET_IDLE(state->profile_bytes);
}

static int cacheguard_pool_state_destructor(struct cacheguard_pool_state *state)
{
	return -1;	/* a thread may still use state and its job */
}

static void cacheguard_pool_done(struct tevent_req *subreq)
{
	struct tevent_req *req = tevent_req_callback_data(subreq,
							  struct tevent_req);
	struct cacheguard_pool_state *state =
		tevent_req_data(req, struct cacheguard_pool_state);
	int ret = pthreadpool_tevent_job_recv(subreq);

	TALLOC_FREE(subreq);
	talloc_set_destructor(state, NULL);
	if (ret == EAGAIN && !(state->flags & CACHEGUARD_POOL_MAY_SKIP)) {
		/* No thread to be had: run inline rather than fail */
		cacheguard_pool_do(state);
		ret = 0;
	}
	SMBPROFILE_BYTES_ASYNC_END(state->profile_bytes);
	if (tevent_req_error(req, ret)) {
		return;
	}
	tevent_req_done(req);
}

struct tevent_req *cacheguard_pool_send(TALLOC_CTX *mem_ctx,
					struct tevent_context *ev,
					struct pthreadpool_tevent *pool,
					void (*fn)(void *job),
					void *job,
					size_t bytes,
					unsigned flags)
{
	TALLOC_CTX *owner = talloc_parent(job);
	struct tevent_req *req = NULL;
	struct tevent_req *subreq = NULL;
	struct cacheguard_pool_state *state = NULL;

	req = tevent_req_create(mem_ctx, &state, struct cacheguard_pool_state);
	if (req == NULL) {
		return NULL;
	}
	state->fn = fn;
	state->job = talloc_steal(state, job);
	state->flags = flags;

	if (flags & CACHEGUARD_POOL_PREAD) {
		SMBPROFILE_BYTES_ASYNC_START(syscall_asys_pread,
					     profile_p,
					     state->profile_bytes,
					     bytes);
	} else if (flags & CACHEGUARD_POOL_PWRITE) {
		SMBPROFILE_BYTES_ASYNC_START(syscall_asys_pwrite,
					     profile_p,
					     state->profile_bytes,
					     bytes);
	}
	SMBPROFILE_BYTES_ASYNC_SET_IDLE(state->profile_bytes);
	subreq = pthreadpool_tevent_job_send(
		state, ev, pool, cacheguard_pool_do, state);
	if (subreq == NULL) {
		SMBPROFILE_BYTES_ASYNC_END(state->profile_bytes);
		talloc_steal(owner, job);	/* the caller's again */
		TALLOC_FREE(req);
		return NULL;
	}
	tevent_req_set_callback(subreq, cacheguard_pool_done, req);
	talloc_set_destructor(state, cacheguard_pool_state_destructor);
	return req;
}

int cacheguard_pool_recv(struct tevent_req *req)
{
	int err;

	if (tevent_req_is_unix_error(req, &err)) {
		return err;
	}
	return 0;
}

void *cacheguard_pool_job(struct tevent_req *req)
{
	struct cacheguard_pool_state *state =
		tevent_req_data(req, struct cacheguard_pool_state);

	return state->job;
}

ssize_t cacheguard_aio_recv(struct tevent_req *req,
			    const struct cacheguard_aio *aio,
			    struct vfs_aio_state *vfs_aio_state)
{
	if (tevent_req_is_unix_error(req, &vfs_aio_state->error)) {
		return -1;
	}
	*vfs_aio_state = aio->vfs_aio_state;
	return aio->ret;
}

/* Flat: the pool thread touches nothing else */
struct cacheguard_uncached_job {
	int fd;
	int flags;
	bool write;		/* pwritev2() of buf, else preadv2() into it */
	void *buf;
	size_t count;
	off_t offset;
	unsigned ioprio;	/* cacheguard:stream ioprio */
	struct cacheguard_aio aio;
};

static void cacheguard_uncached_do(void *private_data)
{
	struct cacheguard_uncached_job *job = talloc_get_type_abort(
		private_data, struct cacheguard_uncached_job);
	uint64_t start_ns = cg_now_ns();
	int saved = cg_ioprio_enter(job->ioprio);

	if (job->write) {
		job->aio.ret = cg_pwrite_full(&cg_sys_linux, job->fd, job->buf,
					      job->count, (uint64_t)job->offset,
					      job->flags);
	} else {
		job->aio.ret = cg_pread_full(&cg_sys_linux, job->fd, job->buf,
					     job->count, (uint64_t)job->offset,
					     job->flags);
	}
	job->aio.vfs_aio_state.error = job->aio.ret == -1 ? errno : 0;
	cg_ioprio_leave(saved);
	job->aio.vfs_aio_state.duration = cg_now_ns() - start_ns;
}

struct tevent_req *cacheguard_uncached_send(TALLOC_CTX *mem_ctx,
					    struct tevent_context *ev,
					    struct vfs_handle_struct *handle,
					    bool write,
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
		.write = write,
		.buf = data,
		.count = n,
		.offset = offset,
		.ioprio = ioprio,
		.aio = {.ret = -1},
	};
	req = cacheguard_pool_send(mem_ctx,
				   ev,
				   handle->conn->sconn->pool,
				   cacheguard_uncached_do,
				   job,
				   n,
				   write ? CACHEGUARD_POOL_PWRITE
					 : CACHEGUARD_POOL_PREAD);
	if (req == NULL) {
		TALLOC_FREE(job);
	}
	return req;
}

ssize_t cacheguard_uncached_recv(struct tevent_req *req,
				 struct vfs_aio_state *vfs_aio_state)
{
	struct cacheguard_uncached_job *job = talloc_get_type_abort(
		cacheguard_pool_job(req), struct cacheguard_uncached_job);

	return cacheguard_aio_recv(req, &job->aio, vfs_aio_state);
}
