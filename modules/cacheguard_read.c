/*
 * vfs_cacheguard: the read hooks: each read carried out as the engine decides
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
 * Each client read: the engine decides its path (cg_file_choose) and
 * what its end means (cg_file_read_after); this file carries that out
 * with smbd's calls: the next module's read, an uncached read in the
 * pool (cacheguard_pool.c), or the file's direct stream
 * (cacheguard_direct.c). SMB_VFS_PREAD, SMB_VFS_PREAD_SEND and
 * SMB_VFS_SENDFILE; README.md draws one read's path.
 */

#include "includes.h"
#include "smbd/smbd.h"
#include "smbd/globals.h"
#include "lib/util/tevent_unix.h"

#include "cacheguard_glue.h"
#include "../source/cg_dio.h"
#include "../source/cg_sys.h"
#include "../source/cg_util.h"

#undef DBGC_CLASS
#define DBGC_CLASS vfs_cacheguard_debug_level

/* A read's start: its *io in the stream, its path; sets up direct reads */
static enum cg_path cacheguard_choose(struct vfs_handle_struct *handle,
				      struct files_struct *fsp,
				      struct cacheguard_file *cgf,
				      struct cg_io *io,
				      off_t offset,
				      size_t n,
				      bool sync)
{
	enum cg_direct_fail fail = CG_DIRECT_FAIL_FILE;
	dev_t dev = fsp->fsp_name->st.st_ex_dev;
	enum cg_path path;
	unsigned lacks;

	*io = cg_read_begin(&cgf->file.stream, fsp_get_io_fd(fsp), offset, n);
	path = cg_file_choose(&cgf->file, io, n, sync);
	if (path != CG_PATH_DIRECT || cgf->direct != NULL) {
		return path;
	}
	/* on fsp: an fsp extension's data area is no talloc context */
	cgf->direct = cacheguard_direct_open(fsp,
					     handle,
					     fsp,
					     cgf->file.stream.cfg,
					     cgf->file.stream.file_size,
					     cacheguard_kernel_oplock(fsp),
					     &fail);
	if (cgf->direct != NULL) {
		return CG_PATH_DIRECT;
	}
	lacks = cg_dev_lacks(&cacheguard_devs, dev);
	lacks = cg_file_direct_unavailable(&cgf->file,
					   fsp_get_io_fd(fsp),
					   fail,
					   lacks);
	cacheguard_fs_lacks(fsp, lacks, "O_DIRECT", EINVAL);
	DBG_INFO("%s: no direct reads (%s), mode %s\n",
		 fsp_str_dbg(fsp),
		 cg_direct_fail_name(fail),
		 cg_mode_name(cgf->file.mode));
	/* this read too, in the file's mode now */
	return cg_file_choose(&cgf->file, io, n, sync);
}

/*
 * What the engine makes of a read's end (cg_file_read_after): true when
 * the range is to be read again through the next module
 */
static bool cacheguard_read_again(struct files_struct *fsp,
				  struct cacheguard_file *cgf,
				  struct cg_io *io,
				  enum cg_path *path,
				  ssize_t ret,
				  int err)
{
	enum cg_mode was = cgf->file.mode;
	enum cg_path failed = *path;
	dev_t dev = fsp->fsp_name->st.st_ex_dev;
	unsigned lacks = 0;
	unsigned learnt;
	enum cg_after after;

	if (ret == -1) {
		/* only a failure may need what the device is known to lack */
		lacks = cg_dev_lacks(&cacheguard_devs, dev);
	}
	after = cg_file_read_after(&cgf->file,
				   fsp_get_io_fd(fsp),
				   io,
				   path,
				   ret,
				   err,
				   lacks,
				   &learnt);
	if (after != CG_AFTER_FELL_BACK) {
		return after == CG_AFTER_AGAIN;
	}
	cacheguard_fs_lacks(fsp, learnt, "RWF_DONTCACHE", err);
	if (failed == CG_PATH_DIRECT && was == CG_MODE_DIRECT &&
	    cgf->file.mode != CG_MODE_DIRECT) {
		DBG_WARNING("%s: direct read failed (%s); the file falls back "
			    "to %s\n",
			    fsp_str_dbg(fsp),
			    strerror(err),
			    cg_mode_name(cgf->file.mode));
	}
	return true;
}

/*
 * A read's end: its bytes counted by path, the stream told. A finished
 * direct stream gives its buffer back now, not at close: clients keep
 * files open.
 */
static void cacheguard_served(struct files_struct *fsp,
			      struct cacheguard_file *cgf,
			      struct cg_io *io,
			      enum cg_path path,
			      ssize_t nread)
{
	cg_file_served(&cgf->file, path, nread);
	if (cgf->direct != NULL &&
	    cacheguard_direct_finished(cgf->direct,
				       cgf->file.stream.via == CG_VIA_DIRECT)) {
		TALLOC_FREE(cgf->direct);
	}
	cg_read_end(&cgf->file.stream, fsp_get_io_fd(fsp), io, nread);
}

static ssize_t cacheguard_pread(struct vfs_handle_struct *handle,
				struct files_struct *fsp,
				void *data,
				size_t n,
				off_t offset)
{
	struct cacheguard_file *cgf = cacheguard_track(handle, fsp);
	int fd = fsp_get_io_fd(fsp);
	enum cg_path path;
	enum cg_call call;
	struct cg_io io;
	unsigned ioprio;
	ssize_t ret = -1;
	bool uncached;
	bool direct;
	int saved;
	int err;

	if (cgf == NULL) {
		return SMB_VFS_NEXT_PREAD(handle, fsp, data, n, offset);
	}
	cgf->file.calls.pread++;
	ioprio = cgf->file.stream.cfg->stream_ioprio;
	path = cacheguard_choose(handle, fsp, cgf, &io, offset, n, true);
	do {
		call = cg_file_call(&io, path);
		uncached = call == CG_CALL_DONTCACHE || call == CG_CALL_PIECES;
		/* a direct stream's own reads through the cache too */
		direct = cgf->file.stream.state == CG_ACTIVE && io.in_stream &&
			 cgf->file.stream.via == CG_VIA_DIRECT;
		saved = cg_ioprio_enter(uncached || direct ? ioprio : 0);
		if (uncached) {
			/* in smbd's profile as vfs_default's pread */
			START_PROFILE_BYTES(syscall_pread, n);
			ret = cg_pread_full(&cg_sys_linux, fd, data, n,
					    (uint64_t)offset,
					    cg_file_call_flags(call));
			END_PROFILE_BYTES(syscall_pread);
		} else {
			/* CG_CALL_DIRECT is never a sync read's */
			ret = SMB_VFS_NEXT_PREAD(handle, fsp, data, n, offset);
		}
		/* smbd maps the read's errno to the client's NTSTATUS */
		err = errno;
		cg_ioprio_leave(saved);
	} while (cacheguard_read_again(fsp, cgf, &io, &path, ret, err));
	cacheguard_served(fsp, cgf, &io, path, ret);
	errno = err;
	return ret;
}

struct cacheguard_pread_state {
	struct vfs_handle_struct *handle;
	struct tevent_context *ev;
	struct files_struct *fsp;
	struct cacheguard_file *cgf;	/* NULL: nothing of the module's */
	struct cg_io io;
	enum cg_path path;
	void *data;
	size_t n;
	off_t offset;
	struct cacheguard_aio aio;
	/* the _recv of the try in flight */
	ssize_t (*recv)(struct tevent_req *subreq,
			struct vfs_aio_state *vfs_aio_state);
};

static void cacheguard_pread_done(struct tevent_req *subreq);

/* The read's next try; false (and its stream told) without memory */
static bool cacheguard_pread_issue(struct tevent_req *req,
				   struct cacheguard_pread_state *state)
{
	struct cg_stream *s = NULL;
	struct tevent_req *subreq = NULL;
	enum cg_call call = CG_CALL_NEXT;

	if (state->cgf != NULL) {
		s = &state->cgf->file.stream;
		call = cg_file_call(&state->io, state->path);
	}
	switch (call) {
	case CG_CALL_DONTCACHE:
	case CG_CALL_PIECES:
		subreq = cacheguard_uncached_send(
			state, state->ev, state->handle, false,
			fsp_get_io_fd(state->fsp), state->data, state->n,
			state->offset, cg_file_call_flags(call),
			s->cfg->stream_ioprio);
		state->recv = cacheguard_uncached_recv;
		break;
	case CG_CALL_DIRECT:
		subreq = cacheguard_direct_pread_send(
			state, state->ev, state->cgf->direct, state->data,
			state->n, state->offset, cg_flight_count(&s->flight));
		state->recv = cacheguard_direct_pread_recv;
		break;
	case CG_CALL_NEXT:
		subreq = SMB_VFS_NEXT_PREAD_SEND(state, state->ev,
						 state->handle, state->fsp,
						 state->data, state->n,
						 state->offset);
		state->recv = SMB_VFS_PREAD_RECV;
		break;
	}
	if (tevent_req_nomem(subreq, req)) {
		if (s != NULL) {
			cg_read_end(s, fsp_get_io_fd(state->fsp), &state->io,
				    -1);
		}
		return false;
	}
	tevent_req_set_callback(subreq, cacheguard_pread_done, req);
	return true;
}

static struct tevent_req *cacheguard_pread_send(
	struct vfs_handle_struct *handle,
	TALLOC_CTX *mem_ctx,
	struct tevent_context *ev,
	struct files_struct *fsp,
	void *data,
	size_t n,
	off_t offset)
{
	struct tevent_req *req = NULL;
	struct cacheguard_pread_state *state = NULL;
	uint64_t start_ns = 0;
	bool ok;

	req = tevent_req_create(mem_ctx, &state, struct cacheguard_pread_state);
	if (req == NULL) {
		return NULL;
	}
	*state = (struct cacheguard_pread_state){
		.handle = handle,
		.ev = ev,
		.fsp = fsp,
		.cgf = cacheguard_track(handle, fsp),
		.data = data,
		.n = n,
		.offset = offset,
		.aio = {.ret = -1},
	};
	if (state->cgf != NULL) {
		start_ns = cg_now_ns();
		state->cgf->file.calls.pread_send++;
		state->path = cacheguard_choose(handle, fsp, state->cgf,
						&state->io, offset, n, false);
	}
	ok = cacheguard_pread_issue(req, state);
	cacheguard_loop_took(state->cgf, "send", start_ns);
	if (!ok) {
		return tevent_req_post(req, ev);
	}
	return req;
}

static void cacheguard_pread_done(struct tevent_req *subreq)
{
	struct tevent_req *req = tevent_req_callback_data(subreq,
							  struct tevent_req);
	struct cacheguard_pread_state *state =
		tevent_req_data(req, struct cacheguard_pread_state);
	struct vfs_aio_state *aio_state = &state->aio.vfs_aio_state;
	uint64_t start_ns = state->cgf != NULL ? cg_now_ns() : 0;

	state->aio.ret = state->recv(subreq, aio_state);
	TALLOC_FREE(subreq);
	if (state->cgf == NULL) {
		tevent_req_done(req);
		return;
	}
	if (cacheguard_read_again(state->fsp, state->cgf, &state->io,
				  &state->path, state->aio.ret,
				  aio_state->error)) {
		*aio_state = (struct vfs_aio_state){0};
		cacheguard_pread_issue(req, state);
		cacheguard_loop_took(state->cgf, "done", start_ns);
		return;
	}
	cacheguard_served(state->fsp, state->cgf, &state->io, state->path,
			  state->aio.ret);
	cacheguard_loop_took(state->cgf, "done", start_ns);
	tevent_req_done(req);
}

static ssize_t cacheguard_pread_recv(struct tevent_req *req,
				     struct vfs_aio_state *vfs_aio_state)
{
	struct cacheguard_pread_state *state =
		tevent_req_data(req, struct cacheguard_pread_state);

	return cacheguard_aio_recv(req, &state->aio, vfs_aio_state);
}

static ssize_t cacheguard_sendfile(struct vfs_handle_struct *handle,
				   int tofd,
				   files_struct *fromfsp,
				   const DATA_BLOB *hdr,
				   off_t offset,
				   size_t n)
{
	struct cacheguard_file *cgf = cacheguard_track(handle, fromfsp);
	struct cg_io io;
	ssize_t ret, data;
	int err;

	if (cgf == NULL) {
		return SMB_VFS_NEXT_SENDFILE(handle, tofd, fromfsp, hdr, offset,
					     n);
	}
	if (!cg_file_zerocopy_ok(&cgf->file)) {
		/*
		 * ENOSYS with nothing sent makes smbd read through
		 * SMB_VFS_PREAD instead, where the stream is served
		 * uncached or direct.
		 */
		errno = ENOSYS;
		return -1;
	}
	cgf->file.calls.sendfile++;
	io = cg_read_begin(&cgf->file.stream,
			   fsp_get_io_fd(fromfsp),
			   offset,
			   n);
	ret = SMB_VFS_NEXT_SENDFILE(handle, tofd, fromfsp, hdr, offset, n);
	/*
	 * errno is part of the answer: ENOSYS means nothing was sent,
	 * EINTR that the header went out and smbd must send the rest.
	 */
	err = errno;
	io.zerocopy = true;
	/* The count includes the header sent ahead of the file's bytes */
	data = ret > 0 && hdr != NULL ? MAX(ret - (ssize_t)hdr->length, 0)
				      : ret;
	cacheguard_served(fromfsp, cgf, &io, CG_PATH_NEXT, data);
	errno = err;
	return ret;
}

void cacheguard_read_hooks(struct vfs_fn_pointers *fns)
{
	fns->pread_fn = cacheguard_pread;
	fns->pread_send_fn = cacheguard_pread_send;
	fns->pread_recv_fn = cacheguard_pread_recv;
	fns->sendfile_fn = cacheguard_sendfile;
}
