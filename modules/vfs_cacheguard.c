/*
 * vfs_cacheguard: keep large sequential share reads out of the page cache
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
 * What does this module do?
 *
 * A client copying a multi-gigabyte file through a share reads it once,
 * yet buffered reads leave all of it in the page cache, evicting the hot
 * pages of whatever else runs on the server. This module watches the
 * reads of every large open file, recognises a large sequential stream
 * and drops the pages behind it, one window at a time, so the copy's
 * cache footprint stays a few megabytes whatever the file size:
 *
 *	[share]
 *		vfs objects = cacheguard
 *		cacheguard:mode = dontneed
 *		cacheguard:window = 8M
 *
 * The policy lives in the engine (../source/, no Samba types); this file
 * only connects it to smbd. Every read path smbd uses for SMB2 READ goes
 * through here: pread_send (the default, "aio read size = 1"), sendfile
 * ("use sendfile = yes") and plain pread. Each calls the next module and
 * tells the engine when the read started and ended, so the module stacks
 * above io_uring or aio_pthread and never changes the bytes returned.
 */

#include "includes.h"
#include "smbd/smbd.h"
#include "lib/util/tevent_unix.h"
#include "version.h"

#include "../source/cacheguard.h"
#include "../source/cg_sys.h"

static int vfs_cacheguard_debug_level = DBGC_VFS;

#undef DBGC_CLASS
#define DBGC_CLASS vfs_cacheguard_debug_level

/* What the module keeps per open file, as an fsp extension */
struct cacheguard_file {
	struct cg_stream stream;
	/* Reads per smbd read path, for the close summary */
	uint64_t n_pread;
	uint64_t n_pread_send;
	uint64_t n_sendfile;
};

static int cacheguard_connect(struct vfs_handle_struct *handle,
			      const char *service,
			      const char *user)
{
	const struct cg_option *o = NULL;
	struct cg_config *cfg = NULL;
	char err[256];
	char desc[512];
	int snum = SNUM(handle->conn);
	int ret;

	ret = SMB_VFS_NEXT_CONNECT(handle, service, user);
	if (ret < 0) {
		return ret;
	}

	cfg = talloc_zero(handle->conn, struct cg_config);
	if (cfg == NULL) {
		SMB_VFS_NEXT_DISCONNECT(handle);
		errno = ENOMEM;
		return -1;
	}
	cg_config_init(cfg);

	for (o = cg_options; o->name != NULL; o++) {
		const char *v = lp_parm_const_string(snum,
						     "cacheguard",
						     o->name,
						     NULL);
		if (v == NULL) {
			continue;
		}
		if (cg_config_set(cfg, o->name, v, err, sizeof(err)) != 0) {
			goto bad_option;
		}
	}
	if (cg_config_check(cfg, err, sizeof(err)) != 0) {
		goto bad_option;
	}

	/* Until the uncached and direct paths exist, all modes drop behind */
	if (cfg->mode != CG_MODE_OFF) {
		cfg->mode = CG_MODE_DONTNEED;
	}

	cg_config_describe(cfg, desc, sizeof(desc));
	DBG_PREFIX(2, ("share [%s]: %s\n", service, desc));

	SMB_VFS_HANDLE_SET_DATA(handle, cfg, NULL, struct cg_config, {
		SMB_VFS_NEXT_DISCONNECT(handle);
		return -1;
	});
	return 0;

bad_option:
	DBG_ERR("share [%s]: %s; refusing the connection\n", service, err);
	TALLOC_FREE(cfg);
	SMB_VFS_NEXT_DISCONNECT(handle);
	errno = EINVAL;
	return -1;
}

/*
 * The state of fsp, created on the first read of a file that is at least
 * min file size long. NULL for everything the module leaves alone.
 */
static struct cacheguard_file *cacheguard_file(struct vfs_handle_struct *handle,
					       struct files_struct *fsp)
{
	struct cacheguard_file *cgf = NULL;
	struct cg_config *cfg = NULL;

	cgf = VFS_FETCH_FSP_EXTENSION(handle, fsp);
	if (cgf != NULL) {
		return cgf;
	}
	SMB_VFS_HANDLE_GET_DATA(handle, cfg, struct cg_config, return NULL);
	if (cfg->mode == CG_MODE_OFF || fsp->fsp_flags.is_pathref ||
	    fsp->fsp_flags.is_directory || fsp_is_alternate_stream(fsp)) {
		return NULL;
	}
	if ((uint64_t)fsp->fsp_name->st.st_ex_size < cfg->min_file_size) {
		return NULL;
	}
	cgf = VFS_ADD_FSP_EXTENSION(handle, fsp, struct cacheguard_file, NULL);
	if (cgf == NULL) {
		return NULL;	/* no memory: serve the file untouched */
	}
	cg_stream_init(&cgf->stream,
		       cfg,
		       &cg_sys_linux,
		       (uint64_t)fsp->fsp_name->st.st_ex_size);
	DBG_DEBUG("%s: tracking, size %ju\n",
		  fsp_str_dbg(fsp),
		  (uintmax_t)fsp->fsp_name->st.st_ex_size);
	return cgf;
}

static ssize_t cacheguard_pread(struct vfs_handle_struct *handle,
				struct files_struct *fsp,
				void *data,
				size_t n,
				off_t offset)
{
	struct cacheguard_file *cgf = cacheguard_file(handle, fsp);
	struct cg_io io;
	ssize_t ret;

	if (cgf == NULL) {
		return SMB_VFS_NEXT_PREAD(handle, fsp, data, n, offset);
	}
	cgf->n_pread++;
	io = cg_read_begin(&cgf->stream, fsp_get_io_fd(fsp), offset, n);
	ret = SMB_VFS_NEXT_PREAD(handle, fsp, data, n, offset);
	cg_read_end(&cgf->stream, fsp_get_io_fd(fsp), &io, ret);
	return ret;
}

struct cacheguard_pread_state {
	struct files_struct *fsp;
	struct cacheguard_file *cgf;
	struct cg_io io;
	ssize_t ret;
	struct vfs_aio_state vfs_aio_state;
};

static void cacheguard_pread_done(struct tevent_req *subreq);

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
	struct tevent_req *subreq = NULL;
	struct cacheguard_pread_state *state = NULL;

	req = tevent_req_create(mem_ctx, &state, struct cacheguard_pread_state);
	if (req == NULL) {
		return NULL;
	}
	state->fsp = fsp;
	state->cgf = cacheguard_file(handle, fsp);
	if (state->cgf != NULL) {
		state->cgf->n_pread_send++;
		state->io = cg_read_begin(&state->cgf->stream,
					  fsp_get_io_fd(fsp),
					  offset,
					  n);
	}

	subreq = SMB_VFS_NEXT_PREAD_SEND(state, ev, handle, fsp, data, n,
					 offset);
	if (tevent_req_nomem(subreq, req)) {
		if (state->cgf != NULL) {
			cg_read_end(&state->cgf->stream, -1, &state->io, -1);
		}
		return tevent_req_post(req, ev);
	}
	tevent_req_set_callback(subreq, cacheguard_pread_done, req);
	return req;
}

static void cacheguard_pread_done(struct tevent_req *subreq)
{
	struct tevent_req *req = tevent_req_callback_data(subreq,
							  struct tevent_req);
	struct cacheguard_pread_state *state =
		tevent_req_data(req, struct cacheguard_pread_state);

	state->ret = SMB_VFS_PREAD_RECV(subreq, &state->vfs_aio_state);
	TALLOC_FREE(subreq);
	if (state->cgf != NULL) {
		cg_read_end(&state->cgf->stream,
			    fsp_get_io_fd(state->fsp),
			    &state->io,
			    state->ret);
	}
	tevent_req_done(req);
}

static ssize_t cacheguard_pread_recv(struct tevent_req *req,
				     struct vfs_aio_state *vfs_aio_state)
{
	struct cacheguard_pread_state *state =
		tevent_req_data(req, struct cacheguard_pread_state);

	if (tevent_req_is_unix_error(req, &vfs_aio_state->error)) {
		return -1;
	}
	*vfs_aio_state = state->vfs_aio_state;
	return state->ret;
}

static ssize_t cacheguard_sendfile(struct vfs_handle_struct *handle,
				   int tofd,
				   files_struct *fromfsp,
				   const DATA_BLOB *hdr,
				   off_t offset,
				   size_t n)
{
	struct cacheguard_file *cgf = cacheguard_file(handle, fromfsp);
	struct cg_io io;
	ssize_t ret, data;

	if (cgf == NULL) {
		return SMB_VFS_NEXT_SENDFILE(handle, tofd, fromfsp, hdr, offset,
					     n);
	}
	cgf->n_sendfile++;
	io = cg_read_begin(&cgf->stream, fsp_get_io_fd(fromfsp), offset, n);
	ret = SMB_VFS_NEXT_SENDFILE(handle, tofd, fromfsp, hdr, offset, n);
	io.zerocopy = true;
	/* The count includes the header sent ahead of the file's bytes */
	data = ret;
	if (ret > 0 && hdr != NULL) {
		data = MAX(ret - (ssize_t)hdr->length, 0);
	}
	cg_read_end(&cgf->stream, fsp_get_io_fd(fromfsp), &io, data);
	return ret;
}

static int cacheguard_close(struct vfs_handle_struct *handle,
			    struct files_struct *fsp)
{
	struct cacheguard_file *cgf = VFS_FETCH_FSP_EXTENSION(handle, fsp);

	if (cgf != NULL) {
		const struct cg_stats *st = &cgf->stream.stats;

		cg_stream_close(&cgf->stream, fsp_get_io_fd(fsp));
		if (st->streams > 0 || st->hot > 0) {
			DBG_PREFIX(2,
				   ("%s: size %ju read %ju streamed %ju "
				    "dropped %ju in %ju calls, streams %ju, "
				    "hot %ju; reads: pread_send %ju, "
				    "pread %ju, sendfile %ju\n",
				    fsp_str_dbg(fsp),
				    (uintmax_t)cgf->stream.file_size,
				    (uintmax_t)st->bytes_read,
				    (uintmax_t)st->bytes_stream,
				    (uintmax_t)st->bytes_dropped,
				    (uintmax_t)st->drops,
				    (uintmax_t)st->streams,
				    (uintmax_t)st->hot,
				    (uintmax_t)cgf->n_pread_send,
				    (uintmax_t)cgf->n_pread,
				    (uintmax_t)cgf->n_sendfile));
		}
		VFS_REMOVE_FSP_EXTENSION(handle, fsp);
	}
	return SMB_VFS_NEXT_CLOSE(handle, fsp);
}

static struct vfs_fn_pointers vfs_cacheguard_fns = {
	.connect_fn = cacheguard_connect,
	.close_fn = cacheguard_close,
	.pread_fn = cacheguard_pread,
	.pread_send_fn = cacheguard_pread_send,
	.pread_recv_fn = cacheguard_pread_recv,
	.sendfile_fn = cacheguard_sendfile,
};

static_decl_vfs;
NTSTATUS vfs_cacheguard_init(TALLOC_CTX *ctx)
{
	NTSTATUS status;

	/*
	 * The VFS structures change between Samba builds: a module built
	 * against another tree must not run.
	 */
	if (strcmp(samba_version_string(), SAMBA_VERSION_STRING) != 0) {
		DBG_ERR("cacheguard was built for Samba %s, this is %s; "
			"rebuild it against this smbd\n",
			SAMBA_VERSION_STRING,
			samba_version_string());
		return NT_STATUS_REVISION_MISMATCH;
	}
	status = smb_register_vfs(SMB_VFS_INTERFACE_VERSION,
				  "cacheguard",
				  &vfs_cacheguard_fns);
	if (!NT_STATUS_IS_OK(status)) {
		return status;
	}
	vfs_cacheguard_debug_level = debug_add_class("cacheguard");
	if (vfs_cacheguard_debug_level == -1) {
		vfs_cacheguard_debug_level = DBGC_VFS;
		DBG_ERR("couldn't register the cacheguard debug class\n");
	}
	return NT_STATUS_OK;
}
