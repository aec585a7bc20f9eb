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
#include "cacheguard_compat.h"

/* The module's debug class (cacheguard_state.c); DBGC_VFS before init */
extern int vfs_cacheguard_debug_level;

/*
 * Run fn(job) in pool (cacheguard_pool.c), with vfs_default's discipline:
 * job, a talloc object fn alone touches, is moved under the request and
 * outlives it while a thread may use it; without a thread (EAGAIN) fn
 * runs inline unless CACHEGUARD_POOL_MAY_SKIP; with CACHEGUARD_POOL_PREAD or
 * CACHEGUARD_POOL_PWRITE, smbd's profile counts bytes as vfs_default's. NULL
 * when nothing could be started: job is still the caller's.
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

/*
 * Reads that leave nothing cached, in 1 MiB pieces in smbd's thread pool
 * (cacheguard_uncached.c): flags CG_RWF_DONTCACHE, preadv2 with it, or
 * CG_READ_DROP, each piece dropped once read (cg_pread_full). Failure
 * comes back as -1 with vfs_aio_state->error set; EOPNOTSUPP means the
 * kernel or the filesystem has no RWF_DONTCACHE and the caller falls
 * back.
 */
struct tevent_req *
cacheguard_uncached_pread_send(TALLOC_CTX *mem_ctx,
			       struct tevent_context *ev,
			       struct vfs_handle_struct *handle,
			       int fd,
			       void *data,
			       size_t n,
			       off_t offset,
			       int flags,
			       unsigned ioprio);
ssize_t cacheguard_uncached_pread_recv(struct tevent_req *req,
				       struct vfs_aio_state *vfs_aio_state);
/*
 * The same, synchronously, for SMB_VFS_PREAD, on smbd's main thread at
 * ioprio for the read's time, as a job's thread is; -1 and errno on
 * failure
 */
ssize_t cacheguard_uncached_pread(int fd,
				  void *data,
				  size_t n,
				  off_t offset,
				  int flags,
				  unsigned ioprio);

/*
 * Direct reads (cacheguard_direct.c): aligned O_DIRECT reads on a second
 * descriptor reopened from the file's fd, with a private prefetch
 * buffer. One struct cacheguard_direct per file, a talloc child of the fsp
 * itself (an fsp extension's data area is no talloc context), so it is
 * freed with the fsp right after close; freeing it closes the
 * descriptor and returns its buffer to the per-process memory budget
 * once no read job holds them.
 */
struct cacheguard_direct;

/*
 * size is the file's as the engine knows it (from an fstat at its first
 * read; smbd's stat may be older); kernel_oplock: smbd holds one on fsp
 * (cacheguard_kernel_oplock).
 * NULL when O_DIRECT cannot be used on fsp; *fail says why, from the
 * engine (cg_direct_may_open, cg_direct_open_failure), for the engine
 * (cg_file_direct_unavailable). A spent direct-memory budget is no
 * failure: the stream reads direct without prefetch (cg_direct_buffer).
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
 * Exactly the bytes pread() would return for [offset, offset + n),
 * short at end of file. On failure -1 and vfs_aio_state->error; the
 * caller then reads the range buffered, so the client never sees it.
 * inflight: the file's reads in flight, this one included
 * (cg_stream_inflight); the prefetch grows to cover them.
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
/*
 * The paths smbd changes a file through (cacheguard_changes.c): each
 * tells direct streams before and after the change, via cacheguard_changes(),
 * what of their prefetch it drops being cg_file_change()'s answer.
 */
void cacheguard_changes(struct files_struct *fsp,
			enum cg_change how,
			const char *hook,
			off_t offset,
			uint64_t n);
ssize_t cacheguard_recvfile(struct vfs_handle_struct *handle,
			    int fromfd,
			    struct files_struct *tofsp,
			    off_t offset,
			    size_t n);
int cacheguard_fallocate(struct vfs_handle_struct *handle,
			 struct files_struct *fsp,
			 uint32_t mode,
			 off_t offset,
			 off_t len);
int cacheguard_ftruncate(struct vfs_handle_struct *handle,
			 struct files_struct *fsp,
			 off_t len);
struct tevent_req *cacheguard_offload_write_send(
	struct vfs_handle_struct *handle,
	TALLOC_CTX *mem_ctx,
	struct tevent_context *ev,
	uint32_t fsctl,
	DATA_BLOB *token,
	off_t transfer_offset,
	struct files_struct *dest_fsp,
	off_t dest_off,
	off_t num);
NTSTATUS cacheguard_offload_write_recv(struct vfs_handle_struct *handle,
				       struct tevent_req *req,
				       off_t *copied);

/*
 * The stream needs its buffer no more: no request waits on it, and it
 * has read to end of file or its file left direct mode (still_direct)
 */
bool cacheguard_direct_finished(const struct cacheguard_direct *d,
				bool still_direct);

/*
 * What each filesystem supports (cacheguard_fs.c over source/cg_dev.c),
 * per smbd process and st_dev: probed once for mode auto, or learnt from
 * the first failure.
 */
/*
 * auto: probe the filesystem of fsp once, log the choice at level 2;
 * may_reopen false (smbd holds a lease on fsp, which a second open would
 * break): what needs an O_DIRECT open is left to the next file
 */
void cacheguard_fs_probe(struct files_struct *fsp, bool may_reopen);
/*
 * A second descriptor of fd's file opened with O_DIRECT, through
 * /proc/self/fd: as the current user, so permissions are checked again.
 * -1 and errno on failure.
 */
int cacheguard_fs_reopen_direct(int fd);
/* The engine's CG_FS_NO_* flags of dev: what it is known to lack */
unsigned cacheguard_fs_lacks_of(dev_t dev);
/* Remember that dev lacks flag's feature; logged once per process */
void cacheguard_fs_lacks(dev_t dev, unsigned flag, const char *what, int err);
/* The kernel's readahead for dev in bytes, 0 when sysfs does not say */
uint64_t cacheguard_fs_readahead(dev_t dev);
/* The largest request dev takes in bytes (max_sectors_kb), 0: unknown */
uint64_t cacheguard_fs_max_request(dev_t dev);
/* A number from dev's block queue in sysfs, 0 when there is none */
unsigned cacheguard_fs_queue_value(dev_t dev, const char *name);

/*
 * The modules below handle in the share's stack (cacheguard_stack.c):
 * the CG_BELOW_* flags of those that must see the files' reads or
 * writes, each logged with what it means
 */
unsigned cacheguard_stack_below(struct vfs_handle_struct *handle,
				const char *service);

/*
 * cacheguard_state.c: the module's directory in smbd's state directory,
 * node-local (NULL without memory); a descriptor of it, made 0700 if it
 * is not there (as root: call it as root); and a new descriptor of
 * <that directory>/NAME, a file of the server's used only for its OFD
 * locks, opened as root (the directory is root's). -1 and errno on
 * failure.
 */
const char *cacheguard_state_dir(void);
int cacheguard_state_dir_open(void);
int cacheguard_state_file_open(const char *name);

/*
 * Uploads (cacheguard_write.c): one struct cacheguard_wfile per open file a
 * client writes, a talloc child of the fsp. Every write smbd makes for a
 * client goes through it.
 */
/* What the module keeps per share, from the tree connect on */
struct cacheguard_share {
	struct cg_config cfg;
	const char *name;
	bool foreign_logged;	/* the "lower module owns I/O" line */
	unsigned below;		/* CG_BELOW_*: what modules below see */
};

/* What the module keeps per open file, as an fsp extension */
struct cacheguard_file {
	/*
	 * Whether the module tracks this open file's reads (cg_file_track_read:
	 * not below min file size at its first read; not yet read: the
	 * extension came with a write). Never where its I/O descriptor is
	 * not a kernel descriptor of it (a lower module owns I/O, foreign:
	 * its writes too).
	 */
	enum cg_tracking track;
	bool foreign;
	bool done;			/* cacheguard_file_done ran */
	struct files_struct *fsp;	/* whose extension this is */
	struct cacheguard_wfile *writer; /* once a client wrote to it */
	struct cg_file file;	/* the engine's: stream, mode, paths */
	struct cacheguard_direct *direct; /* direct mode, once a stream runs */
};

/*
 * cacheguard_file.c: an open file's state. cacheguard_sys_init sets the
 * engine's syscall table (vfs_cacheguard_init); cacheguard_track gives
 * the state of fsp, created at its first read, or NULL for a file the
 * module leaves alone; cacheguard_add the extension of fsp, its reads and
 * writes undecided; cacheguard_watched whether a share's module looks at
 * fsp at all; cacheguard_kernel_oplock whether smbd holds a kernel oplock
 * on it (no second open then); cacheguard_file_done what a close does,
 * once. cacheguard_loop_took counts a call on smbd's event loop that
 * began at start_ns (cg_now_ns).
 */
void cacheguard_sys_init(void);
struct cacheguard_file *cacheguard_track(struct vfs_handle_struct *handle,
					 struct files_struct *fsp);
struct cacheguard_file *cacheguard_add(struct vfs_handle_struct *handle,
				       struct cacheguard_share *share,
				       struct files_struct *fsp);
bool cacheguard_watched(const struct cg_config *cfg,
			struct files_struct *fsp);
bool cacheguard_kernel_oplock(struct files_struct *fsp);
void cacheguard_file_done(struct files_struct *fsp,
			  struct cacheguard_file *cgf);
void cacheguard_loop_took(struct cacheguard_file *cgf,
			  const char *where,
			  uint64_t start_ns);

/* cacheguard_read.c: the read hooks of the function table */
ssize_t cacheguard_pread(struct vfs_handle_struct *handle,
			 struct files_struct *fsp,
			 void *data,
			 size_t n,
			 off_t offset);
struct tevent_req *cacheguard_pread_send(struct vfs_handle_struct *handle,
					 TALLOC_CTX *mem_ctx,
					 struct tevent_context *ev,
					 struct files_struct *fsp,
					 void *data,
					 size_t n,
					 off_t offset);
ssize_t cacheguard_pread_recv(struct tevent_req *req,
			      struct vfs_aio_state *vfs_aio_state);
ssize_t cacheguard_sendfile(struct vfs_handle_struct *handle,
			    int tofd,
			    files_struct *fromfsp,
			    const DATA_BLOB *hdr,
			    off_t offset,
			    size_t n);

struct cacheguard_wfile;

struct cacheguard_wfile *cacheguard_wfile_new(TALLOC_CTX *mem_ctx,
					      struct vfs_handle_struct *handle,
					      struct files_struct *fsp,
					      const struct cg_config *cfg,
					      unsigned fs_lacks);
ssize_t cacheguard_wfile_pwrite(struct cacheguard_wfile *wf,
				const void *data,
				size_t n,
				off_t offset);
ssize_t cacheguard_wfile_recvfile(struct cacheguard_wfile *wf,
				  int fromfd,
				  off_t offset,
				  size_t n);
/* wf NULL: the next module's pwrite_send, unwatched */
struct tevent_req *
cacheguard_wfile_pwrite_send(TALLOC_CTX *mem_ctx,
			     struct tevent_context *ev,
			     struct vfs_handle_struct *handle,
			     struct files_struct *fsp,
			     struct cacheguard_wfile *wf,
			     const void *data,
			     size_t n,
			     off_t offset);
ssize_t cacheguard_wfile_pwrite_recv(struct tevent_req *req,
				     struct vfs_aio_state *vfs_aio_state);
/* Before the close: drops the upload */
void cacheguard_wfile_close(struct cacheguard_wfile *wf);

/*
 * The write hooks (cacheguard_write.c), given fsp's writer wf, which
 * vfs_cacheguard.c finds or creates; wf NULL: fsp is left alone
 */
ssize_t cacheguard_upload_pwrite(struct vfs_handle_struct *handle,
				 struct files_struct *fsp,
				 struct cacheguard_wfile *wf,
				 const void *data,
				 size_t n,
				 off_t offset);
struct tevent_req *
cacheguard_upload_pwrite_send(struct vfs_handle_struct *handle,
			      TALLOC_CTX *mem_ctx,
			      struct tevent_context *ev,
			      struct files_struct *fsp,
			      struct cacheguard_wfile *wf,
			      const void *data,
			      size_t n,
			      off_t offset);
ssize_t cacheguard_upload_pwrite_recv(struct tevent_req *req,
				      struct vfs_aio_state *vfs_aio_state);
ssize_t cacheguard_upload_recvfile(struct vfs_handle_struct *handle,
				   int fromfd,
				   struct files_struct *tofsp,
				   struct cacheguard_wfile *wf,
				   off_t offset,
				   size_t n);

#endif /* CACHEGUARD_GLUE_H */
