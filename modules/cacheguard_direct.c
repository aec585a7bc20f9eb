/*
 * vfs_cacheguard: direct reads, O_DIRECT on a second descriptor with a
 * private prefetch buffer
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
 * A large sequential stream read with O_DIRECT, so that it never enters
 * the page cache. The scheduler (source/cg_direct.c) decides; this file
 * runs its decisions as jobs in smbd's thread pool and reports their ends
 * to it. A stream reopens smbd's fd through /proc/self/fd/N with O_DIRECT
 * (never by path, which a rename could redirect). Every job takes the
 * file's version in its thread, so that smbd's main thread neither calls
 * fstat() nor copies a megabyte per request.
 *
 * Lifetimes: a thread may outlive the stream (closed while fills run)
 * or its request (dropped while its read runs). So a job is a flat
 * struct under its own pool request, nobody's child, freed once its end
 * is reported; it holds a reference on the descriptor and buffer (struct
 * cacheguard_direct_io), and the stream clears its pointer back when it
 * goes away first. A request's state stays until its job is done, as
 * vfs_default's pread does: a copy or an in-place read writes into the
 * caller's buffer.
 */

#include "includes.h"
#include "smbd/smbd.h"
#include "smbd/globals.h"
#include "lib/util/tevent_unix.h"
#include "lib/util/sys_rw.h"
#include "lib/util/dlinklist.h"

#include "cacheguard_glue.h"
#include "../source/cg_budget.h"
#include "../source/cg_dev.h"
#include "../source/cg_direct.h"
#include "../source/cg_sys.h"

#undef DBGC_CLASS
#define DBGC_CLASS vfs_cacheguard_debug_level

/*
 * The descriptor and the prefetch buffer; outlive the stream while jobs
 * run. Of the address space reserved (mem_size), only the table's
 * segments (mem_used) are touched and hold budget.
 */
struct cacheguard_direct_io {
	int fd;
	uint8_t *mem;
	size_t mem_size;
	size_t mem_used;	/* bytes of mem the table may use */
	/* mem's units of the server's budget: at open, then each growth */
	int budget_fd[1 + CG_DIRECT_MAX_GROWS];
	unsigned nbudget;
	unsigned refs;		/* the stream, and each job in flight */
};

struct cacheguard_direct {
	struct cacheguard_direct *prev, *next; /* cacheguard_direct_live */
	struct file_id id;
	struct cacheguard_direct_io *io;
	struct tevent_context *ev;	/* for fills */
	struct pthreadpool_tevent *pool;
	size_t align;			/* offsets, lengths and buffers */
	unsigned ioprio;		/* cacheguard:stream ioprio */
	struct cg_direct sched;		/* the table and who waits on it */
	struct cacheguard_direct_job *jobs; /* running: fills, reads, copies */
};

/* One request; the scheduler queues sr while its segments load */
struct cacheguard_direct_read_state {
	struct tevent_req *req;
	struct tevent_context *ev;
	struct cacheguard_direct *d;
	uint8_t *data;			/* sr.n bytes, read at sr.off */
	struct cacheguard_aio aio;
	struct cg_dio_plan plan;
	struct cacheguard_direct_job *job; /* its read or copy, in flight */
	bool abandoned;			/* freed while its job runs */
	struct cg_direct_req sr;	/* sr.owner is this state */
};

static struct cacheguard_direct_read_state *
cacheguard_direct_owner(struct cg_direct_req *r)
{
	return talloc_get_type_abort(r->owner,
				     struct cacheguard_direct_read_state);
}

/* Every open stream of this process, for cacheguard_direct_note_write() */
static struct cacheguard_direct *cacheguard_direct_live;
/* Bytes of prefetch buffer this process holds */
static size_t cacheguard_direct_mem_in_use;

/* ---- the descriptor ------------------------------------------------- */

static int cacheguard_direct_io_destructor(struct cacheguard_direct_io *io)
{
	unsigned i;

	if (io->fd != -1) {
		close(io->fd);
	}
	for (i = 0; i < io->nbudget; i++) {
		if (io->budget_fd[i] != -1) {
			close(io->budget_fd[i]);	/* the units go back */
		}
	}
	cg_buf_unmap(io->mem, io->mem_size);
	cacheguard_direct_mem_in_use -= io->mem_used;
	return 0;
}

static void cacheguard_direct_io_unref(struct cacheguard_direct_io *io)
{
	if (--io->refs == 0) {
		TALLOC_FREE(io);
	}
}

/* The server-wide budget file (cg_budget.c): its locks are buffers' units */
static int cacheguard_direct_budget_open(void)
{
	return cacheguard_state_file_open("budget");
}

/*
 * Units of the budget for mem bytes (cg_budget_room): the descriptor
 * holding them, or -1; *spent when there is no room. Logs why the budget
 * file gave none, once per reason where it cannot be had at all.
 */
static int cacheguard_direct_budget_take(size_t mem,
					 uint64_t limit,
					 bool counted,
					 bool *spent)
{
	static int logged;	/* the errno last logged, once each */
	bool room;
	int fd, err;

	fd = cg_budget_room(&cg_sys_linux,
			    cacheguard_direct_budget_open,
			    cacheguard_direct_mem_in_use,
			    mem,
			    limit,
			    counted,
			    &room,
			    &err);
	*spent = !room;
	if (cg_budget_absent(err) && logged != err) {
		logged = err;
		DBG_ERR("budget file %s/cacheguard/budget: %s; cacheguard:"
			"direct memory bounds each smbd process on its own\n",
			lp_state_directory(),
			strerror(err));
	} else if (err != 0 && err != ENOSPC && !cg_budget_absent(err)) {
		DBG_INFO("budget file: %s; no room this time\n",
			 strerror(err));
	}
	return fd;
}

/* ---- jobs: the reads that run in smbd's thread pool ----------------- */

/*
 * A job: the thread's work (w, all the thread touches) and whom it
 * reports to: a fill to d, a request's read or copy to rs
 */
struct cacheguard_direct_job {
	struct cg_dio_job w;
	struct cacheguard_direct_io *io;
	size_t bounce_len;		/* w.bounce is owned */
	int budget_fd;			/* the bounce buffer's units */
	unsigned slot;			/* a fill's */
	struct cacheguard_direct *d; /* NULL once the stream is gone */
	struct cacheguard_direct_read_state *rs;   /* NULL for a fill */
	struct cacheguard_direct_job *prev, *next; /* d->jobs */
};

/* The job's work, in a pool thread (or inline: cacheguard_pool.c) */
static void cacheguard_direct_do(void *private_data)
{
	struct cacheguard_direct_job *job =
		talloc_get_type_abort(private_data,
				      struct cacheguard_direct_job);

	cg_dio_job_run(&job->w);
}

static int cacheguard_direct_job_destructor(struct cacheguard_direct_job *job)
{
	cg_buf_unmap(job->w.bounce, job->bounce_len);
	if (job->budget_fd != -1) {
		close(job->budget_fd);
	}
	cacheguard_direct_io_unref(job->io);
	return 0;
}

/*
 * A job of kind for state's request, or a fill (state NULL: its caller
 * sets buf, offset and count), not yet started; a bounce buffer given to
 * it after this is its own
 */
static struct cacheguard_direct_job *
cacheguard_direct_job_new(struct cacheguard_direct *d,
			  enum cg_dio_job_kind kind,
			  struct cacheguard_direct_read_state *state)
{
	struct cacheguard_direct_job *job = NULL;

	job = talloc(NULL, struct cacheguard_direct_job);
	if (job == NULL) {
		return NULL;
	}
	*job = (struct cacheguard_direct_job){
		.w = {
			.kind = kind,
			.sys = &cg_sys_linux,
			.fd = d->io->fd,
			.align = d->align,
			.mem = d->io->mem,
			.ioprio = d->ioprio,
		},
		.io = d->io,
		.d = d,
		.rs = state,
		.budget_fd = -1,
	};
	if (state != NULL) {
		job->w.buf = state->data;
		job->w.offset = state->sr.off;
		job->w.count = state->sr.n;
	}
	d->io->refs++;
	talloc_set_destructor(job, cacheguard_direct_job_destructor);
	return job;
}

/*
 * What a job's thread did goes to its stream's scheduler, then to its
 * request. If a HIT's pieces were not the file's bytes any more (a
 * change since their fill), the scheduler serves the request again, and
 * the request must not be touched after; with the stream gone, the
 * caller reads it through the next module.
 */
static void cacheguard_direct_job_done(struct tevent_req *subreq)
{
	struct cacheguard_direct_job *job =
		talloc_get_type_abort(cacheguard_pool_job(subreq),
				      struct cacheguard_direct_job);
	struct cg_dio_job *w = &job->w;
	struct cacheguard_direct *d = job->d;
	struct cacheguard_direct_read_state *state = job->rs;
	bool abandoned = state != NULL && state->abandoned;
	struct cg_direct_req *r = state != NULL && !abandoned ? &state->sr
							      : NULL;
	int ret = cacheguard_pool_recv(subreq);

	if (ret != 0) {
		w->ret = -1;
		w->err = ret;
	}
	if (w->ret == -1 && w->err == 0 && !w->stale) {
		w->err = EIO;
	}
	if (state != NULL) {
		state->job = NULL;
		state->aio.vfs_aio_state.duration = w->duration;
	}
	if (d != NULL) {
		DLIST_REMOVE(d->jobs, job);
	}
	if (d != NULL && cg_direct_job_done(&d->sched, w, job->slot, r)) {
		DBG_INFO("prefetch read at %jd failed (%s); no more prefetch "
			 "for this stream\n",
			 (intmax_t)w->offset,
			 strerror(w->err));
	}
	if (abandoned) {
		talloc_set_destructor(state, NULL);
		TALLOC_FREE(state);
	} else if (state != NULL && w->ret >= 0) {
		state->aio.ret = (ssize_t)cg_dio_job_result(w,
							    &state->plan,
							    state->sr.n,
							    state->data);
		tevent_req_done(state->req);
	} else if (state != NULL && w->kind == CG_JOB_READ) {
		tevent_req_error(state->req, w->err);
	} else if (state != NULL && d == NULL) {
		tevent_req_error(state->req, CG_DIRECT_NOT_NOW);
	}
	TALLOC_FREE(subreq);	/* and the job */
}

/*
 * Hand job to the pool once everything the thread reads is set, and list
 * it; its request is nobody's child and ends in cacheguard_direct_job_done.
 * Without a thread the job is freed, a copy's pieces unpinned first.
 */
static bool cacheguard_direct_job_start(struct cacheguard_direct_job *job)
{
	struct cacheguard_direct *d = job->d;
	struct cacheguard_direct_read_state *state = job->rs;
	struct tevent_req *subreq = NULL;

	/* reads, in smbd's profile as vfs_default's; a copy is no read */
	subreq = cacheguard_pool_send(
		NULL,
		state != NULL ? state->ev : d->ev,
		d->pool,
		cacheguard_direct_do,
		job,
		job->w.count,
		job->w.kind != CG_JOB_COPY ? CACHEGUARD_POOL_PREAD : 0);
	if (subreq == NULL) {
		if (job->w.kind == CG_JOB_COPY) {
			/* undo cg_direct_pin */
			cg_prefetch_unpin(&d->sched.pf,
					  job->w.pieces,
					  job->w.npieces,
					  false);
		}
		TALLOC_FREE(job);
		return false;
	}
	tevent_req_set_callback(subreq, cacheguard_direct_job_done, NULL);
	DLIST_ADD(d->jobs, job);
	if (state != NULL) {
		state->job = job;
	}
	return true;
}

/* ---- the stream: what the scheduler asks for ------------------------ */

/* A fill of slot: a job reads [off, off + len) into its segment */
static bool cacheguard_direct_submit_fill(void *priv,
					  unsigned slot,
					  uint64_t off,
					  size_t len)
{
	struct cacheguard_direct *d =
		talloc_get_type_abort(priv, struct cacheguard_direct);
	struct cacheguard_direct_job *job = NULL;

	job = cacheguard_direct_job_new(d, CG_JOB_FILL, NULL);
	if (job == NULL) {
		return false;
	}
	job->w.buf = d->io->mem + (size_t)slot * d->sched.pf.seg_size;
	job->w.offset = off;
	job->w.count = len;
	job->slot = slot;
	return cacheguard_direct_job_start(job);
}

/*
 * extra bytes more of the buffer: units of the server's budget, and the
 * reserved address space made usable; false when either has no room
 */
static bool cacheguard_direct_grow(void *priv, size_t extra, uint64_t below)
{
	struct cacheguard_direct *d =
		talloc_get_type_abort(priv, struct cacheguard_direct);
	struct cacheguard_direct_io *io = d->io;
	unsigned want = d->sched.pf.nseg + extra / d->sched.pf.seg_size;
	int budget_fd;
	bool spent;

	budget_fd = cacheguard_direct_budget_take(extra, below, true, &spent);
	if (!spent && !cg_buf_commit(io->mem, io->mem_used, extra)) {
		if (budget_fd != -1) {
			close(budget_fd);
		}
		spent = true;
	}
	if (spent) {
		DBG_DEBUG("prefetch stays %u x %zu: no room for %u\n",
			  d->sched.pf.nseg, d->sched.pf.seg_size, want);
		return false;
	}
	io->budget_fd[io->nbudget++] = budget_fd;
	io->mem_used += extra;
	cacheguard_direct_mem_in_use += extra;
	DBG_DEBUG("prefetch grows from %u to %u x %zu: reads of %zu\n",
		  d->sched.pf.nseg, want, d->sched.pf.seg_size,
		  d->sched.pf.max_read);
	return true;
}

/*
 * A MISS: the request's own aligned read, as state->plan maps it. In
 * place where it can (cg_dio_read_plan), else through a bounce buffer
 * counted in the budget while it lives; without room, CG_DIRECT_NOT_NOW.
 */
static bool cacheguard_direct_start_read(void *priv, struct cg_direct_req *r)
{
	struct cacheguard_direct *d =
		talloc_get_type_abort(priv, struct cacheguard_direct);
	struct cacheguard_direct_read_state *state = cacheguard_direct_owner(r);
	struct cacheguard_direct_job *job = NULL;
	struct cg_dio_plan *plan = &state->plan;
	bool charge;
	bool spent = false;
	int err = ENOMEM;

	job = cacheguard_direct_job_new(d, CG_JOB_READ, state);
	if (job == NULL) {
		goto fail;
	}
	if (!cg_dio_read_plan(&job->w,
			      cg_dio_kernel_pins_pages(),
			      plan,
			      &job->bounce_len,
			      &charge)) {
		err = EINVAL;
		goto fail;
	}
	if (charge) {
		job->budget_fd = cacheguard_direct_budget_take(job->bounce_len,
							       d->sched.limit,
							       false,
							       &spent);
	}
	if (spent) {
		err = CG_DIRECT_NOT_NOW;
		goto fail;
	}
	if (job->bounce_len != 0) {
		job->w.bounce = cg_buf_map(job->bounce_len);
	}
	if (job->bounce_len != 0 && job->w.bounce == NULL) {
		goto fail;
	}
	if (!job->w.inplace) {
		job->w.buf = job->w.bounce;
		job->w.offset = plan->off;
		job->w.count = plan->len;
	}
	if (cacheguard_direct_job_start(job)) {
		return true;
	}
	job = NULL;	/* freed */
fail:
	TALLOC_FREE(job);
	tevent_req_error(state->req, err);
	return false;
}

/*
 * A HIT: a job checks the file's version and copies the pinned pieces
 * into the request's buffer, off the event loop. False without a job:
 * the scheduler has the request read on its own.
 */
static bool
cacheguard_direct_start_copy(void *priv, struct cg_direct_req *r, size_t avail)
{
	struct cacheguard_direct *d =
		talloc_get_type_abort(priv, struct cacheguard_direct);
	struct cacheguard_direct_read_state *state = cacheguard_direct_owner(r);
	struct cacheguard_direct_job *job = NULL;
	struct cg_pf_piece *pieces = NULL;
	unsigned max = cg_direct_pieces_max(&d->sched, r);
	unsigned np = 0;

	job = cacheguard_direct_job_new(d, CG_JOB_COPY, state);
	if (job != NULL) {
		pieces = talloc_array(job, struct cg_pf_piece, max);
	}
	if (pieces == NULL ||
	    !cg_direct_pin(&d->sched, r, avail, pieces, max, &np)) {
		TALLOC_FREE(job);
		return false;
	}
	job->w.pieces = pieces;
	job->w.npieces = np;
	return cacheguard_direct_job_start(job);
}

/* The request waits for a fill: woken from its completion, not nested */
static void cacheguard_direct_defer(void *priv, struct cg_direct_req *r)
{
	struct cacheguard_direct_read_state *state = cacheguard_direct_owner(r);

	tevent_req_defer_callback(state->req, state->ev);
}

static const struct cg_direct_ops cacheguard_direct_sched_ops = {
	.submit_fill = cacheguard_direct_submit_fill,
	.grow = cacheguard_direct_grow,
	.start_copy = cacheguard_direct_start_copy,
	.start_read = cacheguard_direct_start_read,
	.defer = cacheguard_direct_defer,
};

static int cacheguard_direct_destructor(struct cacheguard_direct *d)
{
	struct cacheguard_direct_job *job = NULL;
	struct cg_direct_req *w = NULL;
	struct cacheguard_direct_read_state *state = NULL;

	DLIST_REMOVE(cacheguard_direct_live, d);
	/*
	 * running jobs free themselves, and the io, later; the pins of
	 * copies go with the table
	 */
	for (job = d->jobs; job != NULL; job = job->next) {
		job->d = NULL;
	}
	/*
	 * smbd waits for reads in flight before it closes a file, so none
	 * should wait here; if one does, it fails (its callback is
	 * deferred) rather than wait for a fill that will never report.
	 */
	for (w = cg_direct_orphan(&d->sched); w != NULL;
	     w = cg_direct_orphan(&d->sched)) {
		state = cacheguard_direct_owner(w);
		tevent_req_error(state->req, EBADF);
	}
	DBG_DEBUG("direct stream done: %ju hits, %ju waits, %ju misses, "
		  "%ju stale, %ju fills, %ju discarded, %ju unsettled\n",
		  (uintmax_t)d->sched.hits,
		  (uintmax_t)d->sched.waits,
		  (uintmax_t)d->sched.misses,
		  (uintmax_t)d->sched.stale,
		  (uintmax_t)d->sched.pf.fills,
		  (uintmax_t)d->sched.pf.discarded,
		  (uintmax_t)d->sched.pf.unsettled);
	cacheguard_direct_io_unref(d->io);
	return 0;
}

struct cacheguard_direct *
cacheguard_direct_open(TALLOC_CTX *mem_ctx,
		       struct vfs_handle_struct *handle,
		       struct files_struct *fsp,
		       const struct cg_config *cfg,
		       uint64_t size,
		       bool kernel_oplock,
		       enum cg_direct_fail *fail)
{
	struct cacheguard_direct *d = NULL;
	struct cacheguard_direct_io *io = NULL;
	int fd = fsp_get_io_fd(fsp);
	dev_t dev = fsp->fsp_name->st.st_ex_dev;
	size_t align = kernel_oplock ? 0 : cg_dio_fd_alignment(fd, dev);
	uint64_t max_req;
	size_t mem;
	size_t reserve;
	bool spent;
	int err;

	*fail = cg_direct_may_open(kernel_oplock, align);
	if (*fail != CG_DIRECT_OK) {
		return NULL;
	}
	*fail = CG_DIRECT_FAIL_FILE;
	d = talloc(mem_ctx, struct cacheguard_direct);
	io = talloc(NULL, struct cacheguard_direct_io);	/* outlives d */
	if (d == NULL || io == NULL) {
		goto fail;
	}
	*io = (struct cacheguard_direct_io){
		.fd = -1,
		.budget_fd = {-1},
		.nbudget = 1,
		.refs = 1,
	};
	talloc_set_destructor(io, cacheguard_direct_io_destructor);
	*d = (struct cacheguard_direct){
		.id = fsp->file_id,
		.io = io,
		.ev = handle->conn->sconn->ev_ctx,
		.pool = handle->conn->sconn->pool,
		.align = align,
		.ioprio = cfg->stream_ioprio,
	};
	max_req = cg_dev_max_request(&cacheguard_devs, dev);
	cg_direct_init(&d->sched,
		       &cacheguard_direct_sched_ops,
		       d,
		       cfg->direct_prefetch,
		       cg_prefetch_align(cfg->direct_prefetch, align, max_req),
		       size,
		       cfg->direct_memory);
	mem = cg_direct_buffer(&d->sched, &reserve);
	io->budget_fd[0] = cacheguard_direct_budget_take(mem,
							 cfg->direct_memory,
							 true,
							 &spent);
	if (spent) {
		DBG_INFO("%s: %zu bytes of prefetch buffer would pass "
			 "cacheguard:direct memory (%ju), all smbd processes "
			 "together (%zu held here)\n",
			 fsp_str_dbg(fsp),
			 mem,
			 (uintmax_t)cfg->direct_memory,
			 cacheguard_direct_mem_in_use);
		*fail = CG_DIRECT_FAIL_ROOM;
		goto fail;
	}
	io->fd = cg_sys_reopen_direct(&cg_sys_linux, fd);
	err = io->fd == -1 ? errno : 0;
	if (err == 0 && mem > 0) {
		io->mem_size = MAX(mem, reserve);
		io->mem = cg_buf_reserve(io->mem_size, mem);
		err = io->mem == NULL ? ENOMEM : 0;
	}
	if (err != 0) {
		DBG_INFO("%s: no O_DIRECT descriptor: %s\n",
			 fsp_str_dbg(fsp), strerror(err));
		*fail = cg_direct_open_failure(err);
		goto fail;
	}
	io->mem_used = mem;
	cacheguard_direct_mem_in_use += mem;
	DLIST_ADD(cacheguard_direct_live, d);
	talloc_set_destructor(d, cacheguard_direct_destructor);
	DBG_DEBUG("%s: direct, alignment %zu, prefetch %u x %zu\n",
		  fsp_str_dbg(fsp), align, d->sched.pf.nseg,
		  d->sched.pf.seg_size);
	return d;
fail:
	TALLOC_FREE(io);
	TALLOC_FREE(d);
	return NULL;
}

bool cacheguard_direct_finished(const struct cacheguard_direct *d,
				bool still_direct)
{
	return cg_direct_finished(&d->sched, still_direct);
}

unsigned cacheguard_direct_note_write(struct file_id id, off_t offset, size_t n)
{
	struct cacheguard_direct *d = NULL;
	unsigned streams = 0;

	for (d = cacheguard_direct_live; d != NULL; d = d->next) {
		if (file_id_equal(&d->id, &id)) {
			streams++;
			cg_direct_note_write(&d->sched, (int64_t)offset, n);
		}
	}
	return streams;
}

/* ---- requests ------------------------------------------------------- */

static int cacheguard_direct_read_state_destructor(
	struct cacheguard_direct_read_state *state)
{
	if (state->sr.waiting) {
		/* only a live stream has waiters (its destructor orphans) */
		cg_direct_cancel(&state->d->sched, &state->sr);
	}
	if (state->job != NULL) {
		/* its thread may write into the caller's buffer */
		state->abandoned = true;
		return -1;
	}
	return 0;
}

struct tevent_req *cacheguard_direct_pread_send(TALLOC_CTX *mem_ctx,
						struct tevent_context *ev,
						struct cacheguard_direct *d,
						void *data,
						size_t n,
						off_t offset,
						unsigned inflight)
{
	struct tevent_req *req = NULL;
	struct cacheguard_direct_read_state *state = NULL;

	req = tevent_req_create(mem_ctx,
				&state,
				struct cacheguard_direct_read_state);
	if (req == NULL) {
		return NULL;
	}
	*state = (struct cacheguard_direct_read_state){
		.req = req,
		.ev = ev,
		.d = d,
		.data = data,
		.sr = {.owner = state},
	};
	talloc_set_destructor(state, cacheguard_direct_read_state_destructor);

	if (!sys_valid_io_range(offset, n)) {
		tevent_req_error(req, EINVAL);
		return tevent_req_post(req, ev);
	}
	cg_direct_request(&d->sched, &state->sr, (uint64_t)offset, n, inflight);
	if (!tevent_req_is_in_progress(req)) {
		return tevent_req_post(req, ev);
	}
	return req;
}

ssize_t cacheguard_direct_pread_recv(struct tevent_req *req,
				     struct vfs_aio_state *vfs_aio_state)
{
	struct cacheguard_direct_read_state *state =
		tevent_req_data(req, struct cacheguard_direct_read_state);

	return cacheguard_aio_recv(req, &state->aio, vfs_aio_state);
}
