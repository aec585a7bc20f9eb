/*
 * vfs_cacheguard: direct reads (placeholder until the direct path lands)
 *
 * Copyright (C) 2026 The vfs_cacheguard authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "includes.h"
#include "smbd/smbd.h"

#include "cacheguard.h"

struct cg_direct *cg_direct_open(TALLOC_CTX *mem_ctx,
				 struct vfs_handle_struct *handle,
				 struct files_struct *fsp,
				 const struct cg_config *cfg)
{
	errno = EOPNOTSUPP;
	return NULL;
}

struct tevent_req *cg_direct_pread_send(TALLOC_CTX *mem_ctx,
					struct tevent_context *ev,
					struct cg_direct *d,
					void *data,
					size_t n,
					off_t offset)
{
	return NULL;
}

ssize_t cg_direct_pread_recv(struct tevent_req *req,
			     struct vfs_aio_state *vfs_aio_state)
{
	vfs_aio_state->error = EOPNOTSUPP;
	return -1;
}

ssize_t cg_direct_pread(struct cg_direct *d, void *data, size_t n, off_t offset)
{
	errno = EOPNOTSUPP;
	return -1;
}

void cg_direct_note_write(struct file_id id, off_t offset, size_t n)
{
}

size_t cg_direct_memory_in_use(void)
{
	return 0;
}
