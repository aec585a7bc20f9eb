/*
 * vfs_cacheguard: uploads: write-behind, uncached writes, kept errors
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
 * The glue of the engine's writer (../source/cg_write.c): it feeds the
 * engine every write smbd makes for a client (pwrite, pwrite_send,
 * recvfile) and does what the engine answers:
 *
 *   write --> cg_write_begin --+--> NEXT pwrite(_send) ---------+
 *                              +--> RWF_DONTCACHE --fail--> NEXT +
 *                                                               |
 *   cg_write_end --> plan? --> writeback job in smbd's pool  <--+
 *         |                    (sync_file_range, DONTNEED, residency)
 *         +--> lagging? pwrite_send: its answer held until the job ends
 *                       pwrite, recvfile: cg_write_catch_up, waited for
 *
 * Flushes and closes are smbd's own: the module never waits on
 * writeback in a way that reports an error (cg_write_writeback), so it
 * has none to hand on. The job works on dup()s of its descriptors, so a
 * close while it runs does not pull them from under it.
 */

#include "includes.h"
#include "smbd/smbd.h"
#include "smbd/globals.h"
#include "lib/util/tevent_unix.h"
#include "lib/util/dlinklist.h"

#include "cacheguard_glue.h"
#include "../source/cg_sys.h"
#include "../source/cg_write.h"

#undef DBGC_CLASS
#define DBGC_CLASS vfs_cacheguard_debug_level

struct cacheguard_wpwrite_state;
struct cacheguard_wb_job;

struct cacheguard_wfile {
	struct cg_writer w;
	struct vfs_handle_struct *handle;
	struct files_struct *fsp;
	/*
	 * Where residency may be asked (cg_write_writeback): the file's
	 * own descriptor (-2), or, where smbd's is write-only (mincore
	 * maps the file), one opened for reading as the client's user;
	 * -1: none, jobs drop without waiting for writeback
	 */
	int res_fd;
	struct cacheguard_wb_job *job;	       /* in flight, or NULL */
	struct cacheguard_wpwrite_state *held; /* answered after it */
};

/* Flat: the pool thread touches nothing else */
struct cacheguard_wb_job {
	struct cacheguard_wfile *wf; /* NULL once the file is gone */
	int fd;			/* a dup() of the file's descriptor */
	int res_fd;		/* a dup() of wf->res_fd's, or -1 */
	struct cg_wb_plan plan;
	uint64_t left;
};

static void cacheguard_wpwrite_release(struct cacheguard_wfile *wf);

static int cacheguard_wfile_destructor(struct cacheguard_wfile *wf)
{
	if (wf->job != NULL) {
		wf->job->wf = NULL;
	}
	if (wf->res_fd >= 0) {
		close(wf->res_fd);
	}
	/* smbd closes no file with I/O in flight; should it, answer */
	cacheguard_wpwrite_release(wf);
	return 0;
}

/* The descriptor residency is asked of, as res_fd says: -1 for none */
static int cacheguard_wfile_res_fd(struct cacheguard_wfile *wf)
{
	char buf[PATH_MAX];
	const char *path = NULL;
	int fd = fsp_get_io_fd(wf->fsp);
	int flags;

	if (wf->res_fd != -3) {
		return wf->res_fd == -2 ? fd : wf->res_fd;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags != -1 && (flags & O_ACCMODE) != O_WRONLY) {
		wf->res_fd = -2;
		return fd;
	}
	/* as the client's user: permissions are checked again */
	path = cacheguard_proc_fd_path(fd, buf, sizeof(buf));
	wf->res_fd = path != NULL ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (wf->res_fd == -1) {
		DBG_INFO("%s: no descriptor to ask residency of (%s): its "
			 "write-behind drops without waiting for writeback\n",
			 fsp_str_dbg(wf->fsp),
			 strerror(errno));
	}
	return wf->res_fd;
}

struct cacheguard_wfile *cacheguard_wfile_new(TALLOC_CTX *mem_ctx,
					      struct vfs_handle_struct *handle,
					      struct files_struct *fsp,
					      const struct cg_config *cfg,
					      unsigned fs_lacks)
{
	struct cacheguard_wfile *wf =
		talloc_zero(mem_ctx, struct cacheguard_wfile);

	if (wf == NULL) {
		return NULL;
	}
	wf->handle = handle;
	wf->fsp = fsp;
	wf->res_fd = -3;	/* not asked yet */
	cg_writer_init(&wf->w, cfg, fs_lacks);
	talloc_set_destructor(wf, cacheguard_wfile_destructor);
	return wf;
}

static void cacheguard_wb_start(struct cacheguard_wfile *wf,
				const struct cg_wb_plan *plan);

static void cacheguard_wb_do(void *private_data)
{
	struct cacheguard_wb_job *job =
		talloc_get_type_abort(private_data, struct cacheguard_wb_job);

	job->left = cg_write_writeback(&cg_sys_linux, job->fd, job->res_fd,
				       &job->plan, CG_WB_PATIENCE_NS);
}

/* A writeback's end; its request is nobody's child, so it comes */
static void cacheguard_wb_done(struct tevent_req *subreq)
{
	struct cacheguard_wb_job *job =
		talloc_get_type_abort(cacheguard_pool_job(subreq),
				      struct cacheguard_wb_job);
	struct cacheguard_wfile *wf = job->wf;
	struct cg_wb_plan plan = job->plan;
	uint64_t left = job->left;
	bool ran;

	ran = cacheguard_pool_recv(subreq) == 0;
	close(job->fd);
	if (job->res_fd != -1) {
		close(job->res_fd);
	}
	TALLOC_FREE(subreq);	/* and the job */
	if (wf == NULL) {
		return;
	}
	wf->job = NULL;
	if (!ran) {
		/* skipped: the next write's job takes its ranges */
		cg_write_wb_skipped(&wf->w, &plan);
	} else {
		cg_write_wb_done(&wf->w, &plan, left);
	}
	/* Catch up at once: what was written meanwhile needs no new write */
	if (cg_write_replan(&wf->w, &plan)) {
		cacheguard_wb_start(wf, &plan);
	}
	cacheguard_wpwrite_release(wf);
}

/* The engine planned a job: run it in smbd's pool, never here */
static void cacheguard_wb_start(struct cacheguard_wfile *wf,
				const struct cg_wb_plan *plan)
{
	struct smbd_server_connection *sconn = wf->handle->conn->sconn;
	struct tevent_req *subreq = NULL;
	struct cacheguard_wb_job *job = NULL;

	job = talloc_zero(NULL, struct cacheguard_wb_job);
	if (job == NULL) {
		goto not_run;
	}
	*job = (struct cacheguard_wb_job){
		.wf = wf,
		.plan = *plan,
		.fd = dup(fsp_get_io_fd(wf->fsp)),
		.res_fd = -1,
	};
	if (job->fd == -1) {
		goto not_run;
	}
	if (cacheguard_wfile_res_fd(wf) != -1) {
		job->res_fd = dup(cacheguard_wfile_res_fd(wf));
	}
	subreq = cacheguard_pool_send(NULL,
				      sconn->ev_ctx,
				      sconn->pool,
				      cacheguard_wb_do,
				      job,
				      0,
				      plan->may_skip ? CACHEGUARD_POOL_MAY_SKIP
						     : 0);
	if (subreq == NULL) {
		close(job->fd);
		if (job->res_fd != -1) {
			close(job->res_fd);
		}
		goto not_run;
	}
	tevent_req_set_callback(subreq, cacheguard_wb_done, NULL);
	wf->job = job;
	return;

not_run:
	TALLOC_FREE(job);
	cg_write_wb_skipped(&wf->w, plan);
}

/*
 * A write whose answer cannot be held ended while the stream lags: it
 * waits here, on smbd's main thread (which the write blocked anyway),
 * for what it wrote to be written back and dropped (cg_write_catch_up)
 */
static void cacheguard_wfile_catch_up(struct cacheguard_wfile *wf,
				      const struct cg_wio *wio,
				      ssize_t nwritten)
{
	struct cg_wb_plan plan;
	uint64_t left;

	if (!cg_write_catch_up(&wf->w, wio, nwritten, &plan)) {
		return;
	}
	left = cg_write_writeback(&cg_sys_linux,
				  fsp_get_io_fd(wf->fsp),
				  cacheguard_wfile_res_fd(wf),
				  &plan,
				  CG_WB_PATIENCE_NS);
	cg_write_caught_up(&wf->w, &plan, left);
}

/*
 * A write of nwritten bytes ended: the engine may plan a job, and a
 * write whose answer cannot be held catch up
 */
static void cacheguard_wfile_ended(struct cacheguard_wfile *wf,
				   const struct cg_wio *wio,
				   ssize_t nwritten)
{
	struct cg_wb_plan plan;

	if (cg_write_end(&wf->w, wio, nwritten, &plan)) {
		cacheguard_wb_start(wf, &plan);
	}
	cacheguard_wfile_catch_up(wf, wio, nwritten);
}

/* An uncached write failed with err: learn, then write it buffered */
static void cacheguard_wfile_fell_back(struct cacheguard_wfile *wf,
				       struct cg_wio *wio,
				       int err)
{
	unsigned lacks = cg_write_failed(&wf->w, wio, err);

	if (lacks != 0) {
		cacheguard_fs_lacks(wf->fsp->fsp_name->st.st_ex_dev,
				    lacks,
				    "RWF_DONTCACHE writes",
				    err);
	}
}

static ssize_t cacheguard_wfile_pwrite(struct cacheguard_wfile *wf,
				       const void *data,
				       size_t n,
				       off_t offset)
{
	struct cg_wio wio = cg_write_begin_sync(&wf->w, offset, n);
	ssize_t ret = -1;
	int err;

	if (wio.path == CG_PATH_UNCACHED) {
		START_PROFILE_BYTES(syscall_pwrite, n);
		ret = cg_pwrite_full(&cg_sys_linux, fsp_get_io_fd(wf->fsp),
				     data, n, offset, CG_RWF_DONTCACHE);
		END_PROFILE_BYTES(syscall_pwrite);
		if (ret == -1) {
			cacheguard_wfile_fell_back(wf, &wio, errno);
		}
	}
	if (wio.path == CG_PATH_NEXT) {
		ret = SMB_VFS_NEXT_PWRITE(wf->handle, wf->fsp, data, n, offset);
	}
	err = errno;
	cacheguard_wfile_ended(wf, &wio, ret);
	errno = err;
	return ret;
}

static ssize_t cacheguard_wfile_recvfile(struct cacheguard_wfile *wf,
					 int fromfd,
					 off_t offset,
					 size_t n)
{
	struct cg_wio wio = cg_write_begin_socket(&wf->w, offset, n);
	ssize_t ret;
	int err;

	ret = SMB_VFS_NEXT_RECVFILE(wf->handle, fromfd, wf->fsp, offset, n);
	err = errno;
	cacheguard_wfile_ended(wf, &wio, ret);
	errno = err;
	return ret;
}

/* pwritev2(RWF_DONTCACHE) in smbd's pool, as vfs_default's pwrite */
struct cacheguard_upwrite_job {
	int fd;
	const void *buf;
	size_t count;
	off_t offset;
	ssize_t ret;
	int err;
};

static void cacheguard_upwrite_do(void *private_data)
{
	struct cacheguard_upwrite_job *job =
		talloc_get_type_abort(private_data,
				      struct cacheguard_upwrite_job);

	job->ret = cg_pwrite_full(&cg_sys_linux, job->fd, job->buf,
				  job->count, job->offset, CG_RWF_DONTCACHE);
	job->err = job->ret == -1 ? errno : 0;
}

static struct tevent_req *cacheguard_upwrite_send(TALLOC_CTX *mem_ctx,
						  struct tevent_context *ev,
						  struct cacheguard_wfile *wf,
						  const void *data,
						  size_t n,
						  off_t offset)
{
	struct tevent_req *req = NULL;
	struct cacheguard_upwrite_job *job = NULL;

	job = talloc(mem_ctx, struct cacheguard_upwrite_job);
	if (job == NULL) {
		return NULL;
	}
	*job = (struct cacheguard_upwrite_job){
		.fd = fsp_get_io_fd(wf->fsp),
		.buf = data,
		.count = n,
		.offset = offset,
		.ret = -1,
	};
	req = cacheguard_pool_send(mem_ctx,
				   ev,
				   wf->handle->conn->sconn->pool,
				   cacheguard_upwrite_do,
				   job,
				   n,
				   CACHEGUARD_POOL_PWRITE);
	if (req == NULL) {
		TALLOC_FREE(job);
	}
	return req;
}

static ssize_t cacheguard_upwrite_recv(struct tevent_req *req, int *err)
{
	struct cacheguard_upwrite_job *job = NULL;

	*err = cacheguard_pool_recv(req);
	if (*err != 0) {
		return -1;
	}
	job = talloc_get_type_abort(cacheguard_pool_job(req),
				    struct cacheguard_upwrite_job);
	*err = job->err;
	return job->ret;
}

struct cacheguard_wpwrite_state {
	struct cacheguard_wpwrite_state *prev, *next; /* in wf->held */
	struct tevent_req *req;
	struct tevent_context *ev;
	struct vfs_handle_struct *handle;
	struct files_struct *fsp;
	struct cacheguard_wfile *wf; /* NULL: the file is not watched */
	struct cg_wio wio;
	const void *data;
	size_t n;
	off_t offset;
	ssize_t ret;
	struct vfs_aio_state vfs_aio_state;
};

static void cacheguard_wpwrite_done(struct tevent_req *subreq);
static int
cacheguard_wpwrite_destructor(struct cacheguard_wpwrite_state *state);

static struct tevent_req *
cacheguard_wpwrite_issue(struct cacheguard_wpwrite_state *state)
{
	if (state->wio.path == CG_PATH_UNCACHED) {
		return cacheguard_upwrite_send(state,
					       state->ev,
					       state->wf,
					       state->data,
					       state->n,
					       state->offset);
	}
	return SMB_VFS_NEXT_PWRITE_SEND(state, state->ev, state->handle,
					state->fsp, state->data, state->n,
					state->offset);
}

/* wf NULL: the next module's pwrite_send, unwatched */
static struct tevent_req *
cacheguard_wfile_pwrite_send(TALLOC_CTX *mem_ctx,
			     struct tevent_context *ev,
			     struct vfs_handle_struct *handle,
			     struct files_struct *fsp,
			     struct cacheguard_wfile *wf,
			     const void *data,
			     size_t n,
			     off_t offset)
{
	struct tevent_req *req = NULL;
	struct tevent_req *subreq = NULL;
	struct cacheguard_wpwrite_state *state = NULL;

	req = tevent_req_create(mem_ctx,
				&state,
				struct cacheguard_wpwrite_state);
	if (req == NULL) {
		return NULL;
	}
	*state = (struct cacheguard_wpwrite_state){
		.ev = ev,
		.handle = handle,
		.fsp = fsp,
		.wf = wf,
		.req = req,
		.wio = {.path = CG_PATH_NEXT},
		.data = data,
		.n = n,
		.offset = offset,
		.ret = -1,
	};
	if (wf != NULL) {
		state->wio = cg_write_begin(&wf->w, offset, n);
	}
	subreq = cacheguard_wpwrite_issue(state);
	if (tevent_req_nomem(subreq, req)) {
		return tevent_req_post(req, ev);
	}
	tevent_req_set_callback(subreq, cacheguard_wpwrite_done, req);
	return req;
}

static void cacheguard_wpwrite_done(struct tevent_req *subreq)
{
	struct tevent_req *req = tevent_req_callback_data(subreq,
							  struct tevent_req);
	struct cacheguard_wpwrite_state *state =
		tevent_req_data(req, struct cacheguard_wpwrite_state);
	int err = 0;

	if (state->wio.path == CG_PATH_UNCACHED) {
		state->ret = cacheguard_upwrite_recv(subreq, &err);
	} else {
		state->ret = SMB_VFS_PWRITE_RECV(subreq, &state->vfs_aio_state);
	}
	TALLOC_FREE(subreq);
	if (state->ret == -1 && state->wio.path == CG_PATH_UNCACHED) {
		/* Write it again through the next module */
		cacheguard_wfile_fell_back(state->wf, &state->wio, err);
		subreq = cacheguard_wpwrite_issue(state);
		if (tevent_req_nomem(subreq, req)) {
			return;
		}
		tevent_req_set_callback(subreq, cacheguard_wpwrite_done, req);
		return;
	}
	if (state->wf == NULL) {
		tevent_req_done(req);
		return;
	}
	cacheguard_wfile_ended(state->wf, &state->wio, state->ret);
	if (cg_write_lagging(&state->wf->w)) {
		/* The device is behind: answer once the job in flight ends */
		DLIST_ADD_END(state->wf->held, state);
		talloc_set_destructor(state, cacheguard_wpwrite_destructor);
		return;
	}
	tevent_req_done(req);
}

static int cacheguard_wpwrite_destructor(struct cacheguard_wpwrite_state *state)
{
	DLIST_REMOVE(state->wf->held, state);
	return 0;
}

/* A job ended (or the file goes): answer the writes held for it */
static void cacheguard_wpwrite_release(struct cacheguard_wfile *wf)
{
	while (wf->held != NULL) {
		struct cacheguard_wpwrite_state *state = wf->held;

		DLIST_REMOVE(wf->held, state);
		talloc_set_destructor(state, NULL);
		tevent_req_done(state->req);
	}
}

static ssize_t cacheguard_wfile_pwrite_recv(struct tevent_req *req,
					    struct vfs_aio_state *vfs_aio_state)
{
	struct cacheguard_wpwrite_state *state =
		tevent_req_data(req, struct cacheguard_wpwrite_state);

	if (tevent_req_is_unix_error(req, &vfs_aio_state->error)) {
		return -1;
	}
	*vfs_aio_state = state->vfs_aio_state;
	return state->ret;
}

void cacheguard_wfile_close(struct cacheguard_wfile *wf)
{
	const struct cg_wstats *st = &wf->w.stats;
	struct cg_range r = cg_write_close(&wf->w);

	if (r.end > r.off) {
		/* Starts the writeback of what is dirty, drops the rest */
		posix_fadvise(fsp_get_io_fd(wf->fsp), r.off, r.end - r.off,
			      POSIX_FADV_DONTNEED);
	}
	if (st->streams > 0) {
		DBG_PREFIX(2,
			   ("%s: written %ju mode %s; stream %ju uncached "
			    "%ju written back and dropped %ju in %ju jobs; "
			    "streams %ju; fallbacks %ju\n",
			    fsp_str_dbg(wf->fsp),
			    (uintmax_t)st->bytes_written,
			    cg_mode_name(wf->w.mode),
			    (uintmax_t)st->bytes_stream,
			    (uintmax_t)st->bytes_uncached,
			    (uintmax_t)st->bytes_dropped,
			    (uintmax_t)st->jobs,
			    (uintmax_t)st->streams,
			    (uintmax_t)st->fallbacks));
	}
}

/*
 * The write hooks: every write goes to fsp's writer, and tells the
 * direct streams before and after (cacheguard_changes.c)
 */
ssize_t cacheguard_upload_pwrite(struct vfs_handle_struct *handle,
				 struct files_struct *fsp,
				 struct cacheguard_wfile *wf,
				 const void *data,
				 size_t n,
				 off_t offset)
{
	ssize_t ret;

	cacheguard_changes(fsp, CG_CHANGE_WRITE, "pwrite", offset, n);
	if (wf != NULL) {
		DBG_DEBUG("%s: synchronous pwrite of %zu at %jd\n",
			  fsp_str_dbg(fsp), n, (intmax_t)offset);
		ret = cacheguard_wfile_pwrite(wf, data, n, offset);
	} else {
		ret = SMB_VFS_NEXT_PWRITE(handle, fsp, data, n, offset);
	}
	cacheguard_changes(fsp, CG_CHANGE_WRITE, "pwrite", offset, n);
	return ret;
}

struct cacheguard_upload_pwrite_state {
	struct files_struct *fsp;
	off_t offset;
	size_t n;
	ssize_t ret;
	struct vfs_aio_state vfs_aio_state;
};

static void cacheguard_upload_pwrite_done(struct tevent_req *subreq);

struct tevent_req *
cacheguard_upload_pwrite_send(struct vfs_handle_struct *handle,
			      TALLOC_CTX *mem_ctx,
			      struct tevent_context *ev,
			      struct files_struct *fsp,
			      struct cacheguard_wfile *wf,
			      const void *data,
			      size_t n,
			      off_t offset)
{
	struct tevent_req *req = NULL;
	struct tevent_req *subreq = NULL;
	struct cacheguard_upload_pwrite_state *state = NULL;

	req = tevent_req_create(mem_ctx,
				&state,
				struct cacheguard_upload_pwrite_state);
	if (req == NULL) {
		return NULL;
	}
	*state = (struct cacheguard_upload_pwrite_state){
		.fsp = fsp,
		.offset = offset,
		.n = n,
		.ret = -1,
	};
	cacheguard_changes(fsp, CG_CHANGE_WRITE, "pwrite", offset, n);
	subreq = cacheguard_wfile_pwrite_send(state,
					      ev,
					      handle,
					      fsp,
					      wf,
					      data,
					      n,
					      offset);
	if (tevent_req_nomem(subreq, req)) {
		return tevent_req_post(req, ev);
	}
	tevent_req_set_callback(subreq, cacheguard_upload_pwrite_done, req);
	return req;
}

static void cacheguard_upload_pwrite_done(struct tevent_req *subreq)
{
	struct tevent_req *req = tevent_req_callback_data(subreq,
							  struct tevent_req);
	struct cacheguard_upload_pwrite_state *state =
		tevent_req_data(req, struct cacheguard_upload_pwrite_state);

	state->ret =
		cacheguard_wfile_pwrite_recv(subreq, &state->vfs_aio_state);
	TALLOC_FREE(subreq);
	cacheguard_changes(state->fsp,
			   CG_CHANGE_WRITE,
			   "pwrite",
			   state->offset,
			   state->n);
	tevent_req_done(req);
}

ssize_t cacheguard_upload_pwrite_recv(struct tevent_req *req,
				      struct vfs_aio_state *vfs_aio_state)
{
	struct cacheguard_upload_pwrite_state *state =
		tevent_req_data(req, struct cacheguard_upload_pwrite_state);

	if (tevent_req_is_unix_error(req, &vfs_aio_state->error)) {
		return -1;
	}
	*vfs_aio_state = state->vfs_aio_state;
	return state->ret;
}

/* smbd's recvfile ("min receivefile size"): a write from the socket */
ssize_t cacheguard_upload_recvfile(struct vfs_handle_struct *handle,
				   int fromfd,
				   struct files_struct *tofsp,
				   struct cacheguard_wfile *wf,
				   off_t offset,
				   size_t n)
{
	ssize_t ret;

	if (wf == NULL) {
		return cacheguard_recvfile(handle, fromfd, tofsp, offset, n);
	}
	DBG_DEBUG("%s: recvfile of %zu at %jd\n",
		  fsp_str_dbg(tofsp), n, (intmax_t)offset);
	cacheguard_changes(tofsp, CG_CHANGE_WRITE, "recvfile", offset, n);
	ret = cacheguard_wfile_recvfile(wf, fromfd, offset, n);
	cacheguard_changes(tofsp, CG_CHANGE_WRITE, "recvfile", offset, n);
	return ret;
}
