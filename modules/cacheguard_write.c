/*
 * vfs_cacheguard: the paths smbd changes a file's bytes through; uploads:
 * write-behind, uncached writes, kept errors
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
 *
 * A direct stream's prefetch must never hand out bytes older than a
 * change this smbd made: every path that changes a file's bytes (these
 * writes, fallocate, ftruncate, server-side copy) tells the streams
 * before the change and again after, so that a fill racing the change
 * is discarded too.
 */

#include "includes.h"
#include "smbd/smbd.h"
#include "smbd/globals.h"
#include "lib/util/tevent_unix.h"
#include "lib/util/tevent_ntstatus.h"
#include "lib/util/dlinklist.h"

#include "cacheguard_glue.h"
#include "../source/cg_sys.h"
#include "../source/cg_write.h"

#undef DBGC_CLASS
#define DBGC_CLASS vfs_cacheguard_debug_level

struct cacheguard_wfile {
	struct cg_writer w;
	struct files_struct *fsp;
	/*
	 * Where residency may be asked (cg_write_writeback): -3 not asked
	 * yet, else cg_sys_readable's answer; -1: none, jobs drop without
	 * waiting for writeback
	 */
	int res_fd;
	struct cacheguard_wb_job *job;	       /* in flight, or NULL */
	struct cacheguard_pwrite_state *held; /* answered after it */
};

/* Flat: the pool thread touches nothing else */
struct cacheguard_wb_job {
	struct cacheguard_wfile *wf; /* NULL once the file is gone */
	int fd;			/* a dup() of the file's descriptor */
	int res_fd;		/* a dup() of wf->res_fd's, or -1 */
	struct cg_wb_plan plan;
	uint64_t left;
};

struct cacheguard_pwrite_state {
	struct cacheguard_pwrite_state *prev, *next; /* in wf->held */
	struct tevent_req *req;
	struct tevent_context *ev;
	struct vfs_handle_struct *handle;
	struct files_struct *fsp;
	struct cacheguard_wfile *wf; /* NULL: the file is not watched */
	struct cg_wio wio;
	const void *data;
	size_t n;
	off_t offset;
	struct cacheguard_aio aio;
};

/* Tell fsp's direct streams of a change (cg_file_change); errno is kept */
static void cacheguard_changes(struct files_struct *fsp,
			       enum cg_change how,
			       const char *hook,
			       off_t offset,
			       uint64_t n)
{
	int err = errno;
	int64_t off;
	uint64_t len;

	cg_file_change(how, (int64_t)offset, n, &off, &len);
	if (cacheguard_direct_note_write(fsp->file_id,
					 (off_t)off,
					 (size_t)MIN(len, SIZE_MAX)) > 0) {
		DBG_DEBUG("%s: %s at %jd+%ju: prefetch there dropped\n",
			  fsp_str_dbg(fsp), hook, (intmax_t)offset,
			  (uintmax_t)n);
	}
	errno = err;
}

/* The write is over: tell the direct streams again, then answer */
static void cacheguard_pwrite_finish(struct cacheguard_pwrite_state *state,
				     int err)
{
	cacheguard_changes(
		state->fsp, CG_CHANGE_WRITE, "pwrite", state->offset, state->n);
	if (tevent_req_error(state->req, err)) {
		return;
	}
	tevent_req_done(state->req);
}

/* A job ended (or the file goes): answer the writes held for it */
static void cacheguard_wpwrite_release(struct cacheguard_wfile *wf)
{
	while (wf->held != NULL) {
		struct cacheguard_pwrite_state *state = wf->held;

		DLIST_REMOVE(wf->held, state);
		talloc_set_destructor(state, NULL);
		cacheguard_pwrite_finish(state, 0);
	}
}

/*
 * The file's close (cacheguard_file_done frees the writer) or its end:
 * the upload dropped, its summary logged, held answers given
 */
static int cacheguard_wfile_destructor(struct cacheguard_wfile *wf)
{
	struct cg_range r = cg_write_close(&wf->w);
	char line[320];

	if (r.end > r.off) {
		/* Starts the writeback of what is dirty, drops the rest */
		posix_fadvise(fsp_get_io_fd(wf->fsp), r.off, r.end - r.off,
			      POSIX_FADV_DONTNEED);
	}
	if (cg_write_summary(&wf->w, line, sizeof(line))) {
		DBG_PREFIX(2, ("%s: %s\n", fsp_str_dbg(wf->fsp), line));
	}
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
	int fd = fsp_get_io_fd(wf->fsp);

	if (wf->res_fd == -3) {
		/* a reopen is as the client's user: permissions again */
		wf->res_fd = cg_sys_readable(fd);
		if (wf->res_fd == -1) {
			DBG_INFO("%s: no descriptor to ask residency of (%s): "
				 "its write-behind drops without waiting for "
				 "writeback\n",
				 fsp_str_dbg(wf->fsp),
				 strerror(errno));
		}
	}
	return wf->res_fd == CG_SYS_SAME_FD ? fd : wf->res_fd;
}

/*
 * The writer of fsp, created at its first write; NULL for everything the
 * module leaves alone
 */
static struct cacheguard_wfile *
cacheguard_writer(struct vfs_handle_struct *handle, struct files_struct *fsp)
{
	struct cacheguard_file *cgf = VFS_FETCH_FSP_EXTENSION(handle, fsp);
	struct cacheguard_share *share = NULL;
	struct cacheguard_wfile *wf = NULL;
	dev_t dev = fsp->fsp_name->st.st_ex_dev;

	if (cgf != NULL && (cgf->writer != NULL || cgf->foreign)) {
		return cgf->writer;
	}
	cgf = cacheguard_setup(handle, fsp, cgf, false, &share);
	if (cgf == NULL) {
		return NULL;
	}
	if (cg_config_probes(&share->cfg, share->below, CG_BELOW_WRITES)) {
		cacheguard_fs_probe(fsp, !cacheguard_kernel_oplock(fsp));
	}
	/* On fsp, not cgf: an fsp extension's data area is no talloc ctx */
	wf = talloc_zero(fsp, struct cacheguard_wfile);
	if (wf == NULL) {
		return NULL;
	}
	wf->fsp = fsp;
	wf->res_fd = -3;
	cg_writer_init(&wf->w,
		       &share->cfg,
		       cg_dev_lacks(&cacheguard_devs, dev) | share->below);
	talloc_set_destructor(wf, cacheguard_wfile_destructor);
	cgf->writer = wf;
	return wf;
}

static void cacheguard_wb_do(void *private_data)
{
	struct cacheguard_wb_job *job =
		talloc_get_type_abort(private_data, struct cacheguard_wb_job);

	job->left = cg_write_writeback(&cg_sys_linux, job->fd, job->res_fd,
				       &job->plan);
}

static void cacheguard_wb_done(struct tevent_req *subreq);

/* The engine planned a job: run it in smbd's pool, never here */
static void cacheguard_wb_start(struct cacheguard_wfile *wf,
				const struct cg_wb_plan *plan)
{
	struct smbd_server_connection *sconn = wf->fsp->conn->sconn;
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

/* A writeback's end; its request is nobody's child, so it comes */
static void cacheguard_wb_done(struct tevent_req *subreq)
{
	struct cacheguard_wb_job *job = talloc_get_type_abort(
		cacheguard_pool_job(subreq), struct cacheguard_wb_job);
	struct cacheguard_wfile *wf = job->wf;
	struct cg_wb_plan plan = job->plan;
	uint64_t left = job->left;
	bool ran = cacheguard_pool_recv(subreq) == 0;

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

/*
 * A write of nwritten bytes ended: the engine may plan a job. A write
 * whose answer cannot be held, ended while the stream lags, waits here
 * on smbd's main thread (which the write blocked anyway) for what it
 * wrote to be written back and dropped (cg_write_catch_up). errno is
 * kept.
 */
static void cacheguard_wfile_ended(struct cacheguard_wfile *wf,
				   const struct cg_wio *wio,
				   ssize_t nwritten)
{
	int err = errno;
	struct cg_wb_plan plan;
	uint64_t left;

	if (cg_write_end(&wf->w, wio, nwritten, &plan)) {
		cacheguard_wb_start(wf, &plan);
	}
	if (cg_write_catch_up(&wf->w, wio, nwritten, &plan)) {
		left = cg_write_writeback(&cg_sys_linux,
					  fsp_get_io_fd(wf->fsp),
					  cacheguard_wfile_res_fd(wf),
					  &plan);
		cg_write_caught_up(&wf->w, &plan, left);
	}
	errno = err;
}

/* An uncached write failed with err: learn, then write it buffered */
static void cacheguard_wfile_fell_back(struct cacheguard_wfile *wf,
				       struct cg_wio *wio,
				       int err)
{
	unsigned lacks = cg_write_failed(&wf->w, wio, err);

	cacheguard_fs_lacks(wf->fsp, lacks, "RWF_DONTCACHE writes", err);
}

static ssize_t cacheguard_pwrite(struct vfs_handle_struct *handle,
				 struct files_struct *fsp,
				 const void *data,
				 size_t n,
				 off_t offset)
{
	struct cacheguard_wfile *wf = cacheguard_writer(handle, fsp);
	struct cg_wio wio = {.path = CG_PATH_NEXT};
	ssize_t ret = -1;

	cacheguard_changes(fsp, CG_CHANGE_WRITE, "pwrite", offset, n);
	if (wf != NULL) {
		DBG_DEBUG("%s: synchronous pwrite of %zu at %jd\n",
			  fsp_str_dbg(fsp), n, (intmax_t)offset);
		wio = cg_write_begin_sync(&wf->w, offset, n);
	}
	if (wio.path == CG_PATH_UNCACHED) {
		START_PROFILE_BYTES(syscall_pwrite, n);
		ret = cg_pwrite_full(&cg_sys_linux, fsp_get_io_fd(fsp),
				     data, n, offset, CG_RWF_DONTCACHE);
		END_PROFILE_BYTES(syscall_pwrite);
		if (ret == -1) {
			cacheguard_wfile_fell_back(wf, &wio, errno);
		}
	}
	if (wio.path == CG_PATH_NEXT) {
		ret = SMB_VFS_NEXT_PWRITE(handle, fsp, data, n, offset);
	}
	if (wf != NULL) {
		cacheguard_wfile_ended(wf, &wio, ret);
	}
	cacheguard_changes(fsp, CG_CHANGE_WRITE, "pwrite", offset, n);
	return ret;
}

/* smbd's recvfile ("min receivefile size"): a write from the socket */
static ssize_t cacheguard_recvfile(struct vfs_handle_struct *handle,
				   int fromfd,
				   struct files_struct *tofsp,
				   off_t offset,
				   size_t n)
{
	struct cacheguard_wfile *wf = cacheguard_writer(handle, tofsp);
	struct cg_wio wio = {.path = CG_PATH_NEXT};
	ssize_t ret;

	cacheguard_changes(tofsp, CG_CHANGE_WRITE, "recvfile", offset, n);
	if (wf != NULL) {
		DBG_DEBUG("%s: recvfile of %zu at %jd\n",
			  fsp_str_dbg(tofsp), n, (intmax_t)offset);
		wio = cg_write_begin_socket(&wf->w, offset, n);
	}
	ret = SMB_VFS_NEXT_RECVFILE(handle, fromfd, tofsp, offset, n);
	if (wf != NULL) {
		cacheguard_wfile_ended(wf, &wio, ret);
	}
	cacheguard_changes(tofsp, CG_CHANGE_WRITE, "recvfile", offset, n);
	return ret;
}

static void cacheguard_pwrite_done(struct tevent_req *subreq);

/* One try at the write, uncached or through the next module */
static bool cacheguard_pwrite_issue(struct cacheguard_pwrite_state *state)
{
	struct tevent_req *subreq = NULL;

	if (state->wio.path == CG_PATH_UNCACHED) {
		subreq = cacheguard_uncached_send(
			state, state->ev, state->handle, true,
			fsp_get_io_fd(state->fsp), discard_const(state->data),
			state->n, state->offset, CG_RWF_DONTCACHE, 0);
	} else {
		subreq = SMB_VFS_NEXT_PWRITE_SEND(state, state->ev,
						  state->handle, state->fsp,
						  state->data, state->n,
						  state->offset);
	}
	if (subreq == NULL) {
		return false;
	}
	tevent_req_set_callback(subreq, cacheguard_pwrite_done, state->req);
	return true;
}

static struct tevent_req *cacheguard_pwrite_send(
	struct vfs_handle_struct *handle,
	TALLOC_CTX *mem_ctx,
	struct tevent_context *ev,
	struct files_struct *fsp,
	const void *data,
	size_t n,
	off_t offset)
{
	struct cacheguard_wfile *wf = cacheguard_writer(handle, fsp);
	struct tevent_req *req = NULL;
	struct cacheguard_pwrite_state *state = NULL;

	req = tevent_req_create(mem_ctx,
				&state,
				struct cacheguard_pwrite_state);
	if (req == NULL) {
		return NULL;
	}
	*state = (struct cacheguard_pwrite_state){
		.ev = ev,
		.handle = handle,
		.fsp = fsp,
		.wf = wf,
		.req = req,
		.wio = {.path = CG_PATH_NEXT},
		.data = data,
		.n = n,
		.offset = offset,
		.aio = {.ret = -1},
	};
	cacheguard_changes(fsp, CG_CHANGE_WRITE, "pwrite", offset, n);
	if (wf != NULL) {
		state->wio = cg_write_begin(&wf->w, offset, n);
	}
	if (!cacheguard_pwrite_issue(state)) {
		cacheguard_pwrite_finish(state, ENOMEM);
		return tevent_req_post(req, ev);
	}
	return req;
}

static int cacheguard_pwrite_destructor(struct cacheguard_pwrite_state *state)
{
	DLIST_REMOVE(state->wf->held, state);
	return 0;
}

static void cacheguard_pwrite_done(struct tevent_req *subreq)
{
	struct tevent_req *req = tevent_req_callback_data(subreq,
							  struct tevent_req);
	struct cacheguard_pwrite_state *state =
		tevent_req_data(req, struct cacheguard_pwrite_state);
	struct vfs_aio_state uncached = {0};
	int err = 0;

	if (state->wio.path == CG_PATH_UNCACHED) {
		state->aio.ret = cacheguard_uncached_recv(subreq, &uncached);
		err = uncached.error;
	} else {
		state->aio.ret = SMB_VFS_PWRITE_RECV(subreq,
						     &state->aio.vfs_aio_state);
	}
	TALLOC_FREE(subreq);
	if (state->aio.ret == -1 && state->wio.path == CG_PATH_UNCACHED) {
		/* Write it again through the next module */
		cacheguard_wfile_fell_back(state->wf, &state->wio, err);
		if (!cacheguard_pwrite_issue(state)) {
			cacheguard_pwrite_finish(state, ENOMEM);
		}
		return;
	}
	if (state->wf == NULL) {
		cacheguard_pwrite_finish(state, 0);
		return;
	}
	cacheguard_wfile_ended(state->wf, &state->wio, state->aio.ret);
	if (cg_write_lagging(&state->wf->w)) {
		/* The device is behind: answer once the job in flight ends */
		DLIST_ADD_END(state->wf->held, state);
		talloc_set_destructor(state, cacheguard_pwrite_destructor);
		return;
	}
	cacheguard_pwrite_finish(state, 0);
}

static ssize_t cacheguard_pwrite_recv(struct tevent_req *req,
				      struct vfs_aio_state *vfs_aio_state)
{
	struct cacheguard_pwrite_state *state =
		tevent_req_data(req, struct cacheguard_pwrite_state);

	return cacheguard_aio_recv(req, &state->aio, vfs_aio_state);
}

static int cacheguard_fallocate(struct vfs_handle_struct *handle,
				struct files_struct *fsp,
				uint32_t mode,
				off_t offset,
				off_t len)
{
	enum cg_change how = (mode & VFS_FALLOCATE_FL_KEEP_SIZE) != 0
				     ? CG_CHANGE_ALLOCATE
				     : CG_CHANGE_GROW;
	uint64_t n = (uint64_t)MAX(len, 0);
	int ret;

	cacheguard_changes(fsp, how, "fallocate", offset, n);
	ret = SMB_VFS_NEXT_FALLOCATE(handle, fsp, mode, offset, len);
	cacheguard_changes(fsp, how, "fallocate", offset, n);
	return ret;
}

static int cacheguard_ftruncate(struct vfs_handle_struct *handle,
				struct files_struct *fsp,
				off_t len)
{
	int ret;

	cacheguard_changes(fsp, CG_CHANGE_TRUNCATE, "ftruncate", 0, 0);
	ret = SMB_VFS_NEXT_FTRUNCATE(handle, fsp, len);
	cacheguard_changes(fsp, CG_CHANGE_TRUNCATE, "ftruncate", 0, 0);
	return ret;
}

struct cacheguard_offload_write_state {
	struct vfs_handle_struct *handle;
	struct files_struct *dest_fsp;
	off_t dest_off;
	uint64_t n;
	off_t copied;
};

static void cacheguard_offload_write_done(struct tevent_req *subreq)
{
	struct tevent_req *req = tevent_req_callback_data(subreq,
							  struct tevent_req);
	struct cacheguard_offload_write_state *state =
		tevent_req_data(req, struct cacheguard_offload_write_state);
	NTSTATUS status;

	status = SMB_VFS_NEXT_OFFLOAD_WRITE_RECV(state->handle, subreq,
						 &state->copied);
	TALLOC_FREE(subreq);
	cacheguard_changes(state->dest_fsp, CG_CHANGE_COPY,
			   "server-side copy", state->dest_off, state->n);
	if (tevent_req_nterror(req, status)) {
		return;
	}
	tevent_req_done(req);
}

/* Server-side copy (copy-chunk): vfs_default uses copy_file_range() */
static struct tevent_req *cacheguard_offload_write_send(
	struct vfs_handle_struct *handle,
	TALLOC_CTX *mem_ctx,
	struct tevent_context *ev,
	uint32_t fsctl,
	DATA_BLOB *token,
	off_t transfer_offset,
	struct files_struct *dest_fsp,
	off_t dest_off,
	off_t num)
{
	struct tevent_req *req = NULL;
	struct tevent_req *subreq = NULL;
	struct cacheguard_offload_write_state *state = NULL;

	req = tevent_req_create(mem_ctx, &state,
				struct cacheguard_offload_write_state);
	if (req == NULL) {
		return NULL;
	}
	*state = (struct cacheguard_offload_write_state){
		.handle = handle,
		.dest_fsp = dest_fsp,
		.dest_off = dest_off,
		.n = (uint64_t)MAX(num, 0),
	};
	cacheguard_changes(dest_fsp, CG_CHANGE_COPY, "server-side copy",
			   dest_off, state->n);
	subreq = SMB_VFS_NEXT_OFFLOAD_WRITE_SEND(handle, state, ev, fsctl,
						 token, transfer_offset,
						 dest_fsp, dest_off, num);
	if (tevent_req_nomem(subreq, req)) {
		return tevent_req_post(req, ev);
	}
	tevent_req_set_callback(subreq, cacheguard_offload_write_done, req);
	return req;
}

static NTSTATUS cacheguard_offload_write_recv(struct vfs_handle_struct *handle,
					      struct tevent_req *req,
					      off_t *copied)
{
	struct cacheguard_offload_write_state *state =
		tevent_req_data(req, struct cacheguard_offload_write_state);

	*copied = state->copied;
	return tevent_req_simple_recv_ntstatus(req);
}

void cacheguard_write_hooks(struct vfs_fn_pointers *fns)
{
	fns->pwrite_fn = cacheguard_pwrite;
	fns->pwrite_send_fn = cacheguard_pwrite_send;
	fns->pwrite_recv_fn = cacheguard_pwrite_recv;
	fns->recvfile_fn = cacheguard_recvfile;
	fns->fallocate_fn = cacheguard_fallocate;
	fns->ftruncate_fn = cacheguard_ftruncate;
	fns->offload_write_send_fn = cacheguard_offload_write_send;
	fns->offload_write_recv_fn = cacheguard_offload_write_recv;
}
