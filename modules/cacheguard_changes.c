/*
 * vfs_cacheguard: the paths smbd changes a file's bytes through, other
 * than pwrite, for direct mode's prefetch
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

#include "includes.h"
#include "smbd/smbd.h"
#include "lib/util/tevent_ntstatus.h"

#include "cacheguard_glue.h"

#undef DBGC_CLASS
#define DBGC_CLASS vfs_cacheguard_debug_level

/*
 * A direct stream's prefetch must never hand out bytes older than a
 * change this smbd has made. Every path smbd changes a file's bytes
 * through (pwrite, its async form, recvfile, fallocate, ftruncate,
 * server-side copy) tells it before the change and again after, so that
 * a fill racing the change is discarded too. errno is kept.
 */
void cacheguard_changes(struct files_struct *fsp,
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

ssize_t cacheguard_recvfile(struct vfs_handle_struct *handle,
			    int fromfd,
			    struct files_struct *tofsp,
			    off_t offset,
			    size_t n)
{
	ssize_t ret;

	cacheguard_changes(tofsp, CG_CHANGE_WRITE, "recvfile", offset, n);
	ret = SMB_VFS_NEXT_RECVFILE(handle, fromfd, tofsp, offset, n);
	cacheguard_changes(tofsp, CG_CHANGE_WRITE, "recvfile", offset, n);
	return ret;
}

int cacheguard_fallocate(struct vfs_handle_struct *handle,
			 struct files_struct *fsp,
			 uint32_t mode,
			 off_t offset,
			 off_t len)
{
	enum cg_change how = (mode & VFS_FALLOCATE_FL_KEEP_SIZE) != 0
				     ? CG_CHANGE_ALLOCATE
				     : CG_CHANGE_GROW;
	int ret;

	cacheguard_changes(fsp,
			   how,
			   "fallocate",
			   offset,
			   (uint64_t)MAX(len, 0));
	ret = SMB_VFS_NEXT_FALLOCATE(handle, fsp, mode, offset, len);
	cacheguard_changes(fsp,
			   how,
			   "fallocate",
			   offset,
			   (uint64_t)MAX(len, 0));
	return ret;
}

int cacheguard_ftruncate(struct vfs_handle_struct *handle,
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
	off_t num;
	off_t copied;
};

static void cacheguard_offload_write_done(struct tevent_req *subreq);

/* Server-side copy (copy-chunk): vfs_default uses copy_file_range() */
struct tevent_req *cacheguard_offload_write_send(
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
		.num = num,
	};
	cacheguard_changes(dest_fsp,
			   CG_CHANGE_COPY,
			   "server-side copy",
			   dest_off,
			   (uint64_t)MAX(num, 0));
	subreq = SMB_VFS_NEXT_OFFLOAD_WRITE_SEND(handle, state, ev, fsctl,
						 token, transfer_offset,
						 dest_fsp, dest_off, num);
	if (tevent_req_nomem(subreq, req)) {
		return tevent_req_post(req, ev);
	}
	tevent_req_set_callback(subreq, cacheguard_offload_write_done, req);
	return req;
}

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
	cacheguard_changes(state->dest_fsp,
			   CG_CHANGE_COPY,
			   "server-side copy",
			   state->dest_off,
			   (uint64_t)MAX(state->num, 0));
	if (tevent_req_nterror(req, status)) {
		return;
	}
	tevent_req_done(req);
}

NTSTATUS cacheguard_offload_write_recv(struct vfs_handle_struct *handle,
				       struct tevent_req *req,
				       off_t *copied)
{
	struct cacheguard_offload_write_state *state =
		tevent_req_data(req, struct cacheguard_offload_write_state);
	NTSTATUS status;

	*copied = state->copied;
	if (tevent_req_is_nterror(req, &status)) {
		tevent_req_received(req);
		return status;
	}
	tevent_req_received(req);
	return NT_STATUS_OK;
}

