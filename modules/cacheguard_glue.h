/*
 * vfs_cacheguard: what the glue files share
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

#ifndef CACHEGUARD_GLUE_H
#define CACHEGUARD_GLUE_H

#include "../source/cg_file.h"

/* The module's debug class (cacheguard_state.c); DBGC_VFS before init */
extern int vfs_cacheguard_debug_level;

/*
 * Run fn(job) in pool with vfs_default's discipline (cacheguard_pool.c):
 * job, a talloc object fn alone touches, moves under the request. Flags:
 * count bytes in smbd's profile as a pread or pwrite; may be skipped
 * where no thread can be had. NULL: nothing started, job is the caller's.
 */
#define CACHEGUARD_POOL_PREAD 0x1
#define CACHEGUARD_POOL_PWRITE 0x2
#define CACHEGUARD_POOL_MAY_SKIP 0x4
struct pthreadpool_tevent;
struct tevent_req *cacheguard_pool_send(TALLOC_CTX *mem_ctx,
					struct tevent_context *ev,
					struct pthreadpool_tevent *pool,
					void (*fn)(void *job),
					void *job,
					size_t bytes,
					unsigned flags);
/* 0 once fn ran; else why it did not (the pool's error) */
int cacheguard_pool_recv(struct tevent_req *req);
/* The job given to cacheguard_pool_send: the request's until it is freed */
void *cacheguard_pool_job(struct tevent_req *req);

/* What an asynchronous read or write answers; its _recv hands it on */
struct cacheguard_aio {
	ssize_t ret;
	struct vfs_aio_state vfs_aio_state;
};
ssize_t cacheguard_aio_recv(struct tevent_req *req,
			    const struct cacheguard_aio *aio,
			    struct vfs_aio_state *vfs_aio_state);

/*
 * A read (or write) that leaves nothing cached, in smbd's pool: flags
 * CG_RWF_DONTCACHE or CG_READ_DROP (cg_pread_full). Failure is -1 with
 * vfs_aio_state->error set (EOPNOTSUPP: no RWF_DONTCACHE).
 */
struct tevent_req *cacheguard_uncached_send(TALLOC_CTX *mem_ctx,
					    struct tevent_context *ev,
					    struct vfs_handle_struct *handle,
					    bool write,
					    int fd,
					    void *data,
					    size_t n,
					    off_t offset,
					    int flags,
					    unsigned ioprio);
ssize_t cacheguard_uncached_recv(struct tevent_req *req,
				 struct vfs_aio_state *vfs_aio_state);

/*
 * A file's direct stream (cacheguard_direct.c), a talloc child of the
 * fsp. Freeing it closes its O_DIRECT descriptor and gives its buffer
 * back once no job holds them.
 */
struct cacheguard_direct;

/*
 * size: the file's as the engine knows it; kernel_oplock: smbd holds one
 * on fsp. NULL when direct reads cannot be set up; *fail says why.
 */
struct cacheguard_direct *
cacheguard_direct_open(TALLOC_CTX *mem_ctx,
		       struct vfs_handle_struct *handle,
		       struct files_struct *fsp,
		       const struct cg_config *cfg,
		       uint64_t size,
		       bool kernel_oplock,
		       enum cg_direct_fail *fail);
/*
 * Exactly the bytes pread() would return for [offset, offset + n); on
 * failure -1 and vfs_aio_state->error, and the caller reads the range
 * buffered. inflight: the file's reads in flight, this one included.
 */
struct tevent_req *cacheguard_direct_pread_send(TALLOC_CTX *mem_ctx,
						struct tevent_context *ev,
						struct cacheguard_direct *d,
						void *data,
						size_t n,
						off_t offset,
						unsigned inflight);
ssize_t cacheguard_direct_pread_recv(struct tevent_req *req,
				     struct vfs_aio_state *vfs_aio_state);
/*
 * This smbd changes [offset, offset + n) of file id (offset -1: anything
 * of it): its direct streams drop what overlaps. Returns their number.
 */
unsigned
cacheguard_direct_note_write(struct file_id id, off_t offset, size_t n);
/* cg_direct_finished() of d's scheduler */
bool cacheguard_direct_finished(const struct cacheguard_direct *d,
				bool still_direct);

/*
 * Per smbd process (cacheguard_state.c): what each device supports, what
 * it learns logged once (mode auto's probe at level 2), and the lock
 * file NAME in the module's state directory, opened as root (-1 and
 * errno on failure)
 */
extern struct cg_devs cacheguard_devs;
void cacheguard_fs_probe(struct files_struct *fsp, bool may_reopen);
/* fsp's device lacks flag (0: nothing learnt), as err showed */
void cacheguard_fs_lacks(struct files_struct *fsp,
			 unsigned flag,
			 const char *what,
			 int err);
int cacheguard_state_file_open(const char *name);

/* What the module keeps per share, from the tree connect on */
struct cacheguard_share {
	struct cg_config cfg;
	const char *name;
	bool foreign_logged;	/* the "lower module owns I/O" line */
	unsigned below;		/* CG_BELOW_*: what modules below see */
};

/* What the module keeps per open file, as an fsp extension */
struct cacheguard_file {
	enum cg_tracking track;	/* whether its reads are tracked */
	bool foreign;		/* its I/O descriptor is not the file's */
	bool done;			/* cacheguard_file_done ran */
	struct files_struct *fsp;	/* whose extension this is */
	struct cacheguard_wfile *writer; /* once a client wrote to it */
	struct cg_file file;	/* the engine's: stream, mode, paths */
	struct cacheguard_direct *direct; /* direct mode, once a stream runs */
};

/*
 * cacheguard_file.c: an open file's state. cacheguard_track gives the
 * state of fsp, created at its first read, or NULL for a file the module
 * leaves alone; cacheguard_setup what the first read or write of a file
 * sets up; cacheguard_file_done what a close does, once;
 * cacheguard_loop_took counts a call on smbd's event loop begun at
 * start_ns.
 */
void cacheguard_sys_init(void);
struct cacheguard_file *cacheguard_track(struct vfs_handle_struct *handle,
					 struct files_struct *fsp);
struct cacheguard_file *cacheguard_setup(struct vfs_handle_struct *handle,
					 struct files_struct *fsp,
					 struct cacheguard_file *cgf,
					 bool reader,
					 struct cacheguard_share **pshare);
bool cacheguard_kernel_oplock(struct files_struct *fsp);
void cacheguard_file_done(struct files_struct *fsp,
			  struct cacheguard_file *cgf);
void cacheguard_loop_took(struct cacheguard_file *cgf,
			  const char *where,
			  uint64_t start_ns);

/*
 * The hooks of cacheguard_read.c (reads) and cacheguard_write.c (every
 * path smbd changes a file's bytes through) put in the function table.
 * A file a client writes has a struct cacheguard_wfile, a talloc child
 * of the fsp, whose freeing drops the upload.
 */
void cacheguard_read_hooks(struct vfs_fn_pointers *fns);
void cacheguard_write_hooks(struct vfs_fn_pointers *fns);

#endif /* CACHEGUARD_GLUE_H */
