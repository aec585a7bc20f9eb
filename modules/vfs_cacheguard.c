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
 * (the engine in ../source/ decides) and serves the stream without
 * leaving it in the cache:
 *
 *	[share]
 *		vfs objects = cacheguard
 *		cacheguard:mode = auto
 *
 * Modes, per share, resolved per file at its first read:
 *
 *   dontneed	the next module reads as usual; the engine drops the pages
 *		behind the stream a window at a time
 *   dontcache	stream reads are preadv2(RWF_DONTCACHE) in smbd's thread
 *		pool (cacheguard_uncached.c)
 *   direct	stream reads are aligned O_DIRECT reads with a private
 *		prefetch buffer (cacheguard_direct.c)
 *   auto	dontcache where the filesystem has it, else direct where
 *		O_DIRECT works, else dontneed; probed once per filesystem
 *		(cacheguard_fs.c)
 *
 * Per-process counters go to a status file (cacheguard_status.c).
 *
 * Every read path smbd uses for SMB2 READ comes through here: pread_send
 * (the default, "aio read size = 1"), sendfile ("use sendfile = yes") and
 * plain pread. Reads that are not part of a stream go to the next module
 * untouched. A fast path that fails (EOPNOTSUPP, EINVAL, anything) is
 * retried as a plain buffered read, so the client always gets the bytes
 * pread() would have returned:
 *
 *   pread_send --> choose path --+--> NEXT pread_send ----------+--> done
 *                                +--> uncached / direct --fail--+
 */

#include "includes.h"
#include "smbd/smbd.h"
#include "lib/util/tevent_unix.h"
#include "version.h"

#include "cacheguard_glue.h"
#include "../source/cg_sys.h"

#undef DBGC_CLASS
#define DBGC_CLASS vfs_cacheguard_debug_level

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
	 * The module leaves this open file's reads alone: its I/O
	 * descriptor is not a kernel descriptor of it (a lower module owns
	 * I/O, foreign: its writes too), or it was below min file size at
	 * its first read, or it has not been read yet (reads_pending: the
	 * extension came with a write).
	 */
	bool untracked;
	bool foreign;
	bool reads_pending;
	bool done;			/* cacheguard_file_done ran */
	struct files_struct *fsp;	/* whose extension this is */
	struct cg_wfile *writer;	/* once a client wrote to it */
	struct cg_file file;		/* the engine's: stream, mode, paths */
	struct cg_direct *direct;	/* direct mode, once a stream runs */
};

/* Now, in ns of CLOCK_MONOTONIC */
static uint64_t cacheguard_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A call on the event loop for cgf (where) began at start_ns, ends now */
static void cacheguard_loop_took(struct cacheguard_file *cgf,
				 const char *where,
				 uint64_t start_ns)
{
	if (cgf != NULL) {
		cg_calls_loop_took(&cgf->file.calls,
				   where,
				   cacheguard_now_ns() - start_ns);
	}
}

/*
 * The kernel tells page-cache residency (cachestat, mincore) only to a
 * caller that owns the file or could write it, and smbd reads as the
 * client's user: a share of root-owned 0644 files would look cold to
 * every client. So the question is asked as smbd itself; the answer
 * stays inside the module.
 */
static int cacheguard_resident(int fd,
			       uint64_t off,
			       uint64_t len,
			       uint64_t *bytes)
{
	int ret;

	become_root();
	ret = cg_sys_linux.resident(fd, off, len, bytes);
	unbecome_root();
	return ret;
}

/*
 * A new descriptor of one of the server's lock files in the state
 * directory; without it the engine does without, which is said at level
 * 0 once per process (*logged), with what it costs.
 */
static int cacheguard_lock_file_open(const char *name,
				     const char *what,
				     bool *logged,
				     const char *without)
{
	int fd = cg_state_file_open(name);

	if (fd == -1 && !*logged) {
		*logged = true;
		DBG_ERR("%s: %s; %s\n", what, strerror(errno), without);
	}
	return fd;
}

/*
 * The server's stream file (source/cg_share.c): streams of one file in
 * several smbd processes keep what the others still need. Without it each
 * stream drops as if alone.
 */
static int cacheguard_share_open(void)
{
	static bool logged;

	return cacheguard_lock_file_open("streams", "stream file", &logged,
					 "streams of one file in several smbd "
					 "processes drop each other's pages");
}

/*
 * The server's readahead budget file (cacheguard:readahead memory,
 * source/cg_stream.c). Without it every stream reads ahead on its own,
 * bounded: slower on a disk that counts requests, never a larger
 * footprint.
 */
static int cacheguard_ra_open(void)
{
	static bool logged;

	return cacheguard_lock_file_open("readahead",
					 "readahead budget file", &logged,
					 "no stream keeps the kernel's "
					 "readahead");
}

/* cg_sys_linux with the residency probe and the state files above */
static struct cg_sys cacheguard_sys;

/*
 * A misspelt option would otherwise be a silent default: name every
 * "cacheguard:" parameter of the share, or of [global], that is not one.
 */
static void cacheguard_log_unknown(const char *service, const char *key)
{
	char names[256];

	if (strncasecmp_m(key, "cacheguard:", 11) != 0 ||
	    cg_option_known(key + 11)) {
		return;
	}
	cg_option_names(names, sizeof(names));
	DBG_ERR("share [%s]: unknown option '%s' is ignored; cacheguard "
		"options are: %s\n",
		service,
		key,
		names);
}

static bool cacheguard_global_unknown(const char *key,
				      regmatch_t matches[],
				      void *private_data)
{
	cacheguard_log_unknown((const char *)private_data, key);
	return false;
}

static void cacheguard_check_names(int snum, const char *service)
{
	struct loadparm_service *svc = lp_servicebynum(snum);
	struct parmlist_entry *p = NULL;

	for (p = svc != NULL ? svc->param_opt : NULL; p != NULL; p = p->next) {
		cacheguard_log_unknown(service, p->key);
	}
	lp_wi_scan_global_parametrics("^cacheguard:",
				      1,
				      cacheguard_global_unknown,
				      discard_const_p(char, service));
}

static int cacheguard_connect(struct vfs_handle_struct *handle,
			      const char *service,
			      const char *user)
{
	const struct cg_option *o = NULL;
	struct cacheguard_share *share = NULL;
	struct cg_config *cfg = NULL;
	char err[256];
	char desc[512];
	int snum = SNUM(handle->conn);
	int ret;

	ret = SMB_VFS_NEXT_CONNECT(handle, service, user);
	if (ret < 0) {
		return ret;
	}

	share = talloc_zero(handle->conn, struct cacheguard_share);
	if (share == NULL) {
		SMB_VFS_NEXT_DISCONNECT(handle);
		errno = ENOMEM;
		return -1;
	}
	cfg = &share->cfg;
	cg_config_init(cfg);
	share->name = talloc_strdup(share, service);
	cacheguard_check_names(snum, service);

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

	cg_config_describe(cfg, desc, sizeof(desc));
	DBG_PREFIX(2, ("share [%s]: %s\n", service, desc));

	if (cg_config_watches(cfg)) {
		share->below = cg_stack_below(handle, service);
	}
	SMB_VFS_HANDLE_SET_DATA(handle, share, NULL, struct cacheguard_share, {
		SMB_VFS_NEXT_DISCONNECT(handle);
		return -1;
	});
	if (cg_config_watches(cfg)) {
		/* off: no state and no system calls, as documented */
		cg_status_write(true);
	}
	return 0;

bad_option:
	DBG_ERR("share [%s]: %s; refusing the connection\n", service, err);
	TALLOC_FREE(share);
	SMB_VFS_NEXT_DISCONNECT(handle);
	errno = EINVAL;
	return -1;
}


/*
 * Whether fsp's I/O descriptor is a kernel descriptor of the file itself.
 * A lower module may own I/O (vfs_ceph numbers its descriptors from 10,
 * vfs_glusterfs hands out a constant): preadv2, fadvise, cachestat or a
 * reopen on such a number would act on whatever else smbd has open
 * under it, a tdb, the log or a socket.
 */
static bool cacheguard_fd_is_file(struct vfs_handle_struct *handle,
				  struct files_struct *fsp,
				  struct stat *st)
{
	const SMB_STRUCT_STAT *sbuf = &fsp->fsp_name->st;
	int fd = fsp_get_io_fd(fsp);

	if (!handle->conn->have_proc_fds || !fsp->fsp_flags.have_proc_fds ||
	    fd < 0 || fstat(fd, st) != 0) {
		return false;
	}
	return st->st_dev == sbuf->st_ex_dev && st->st_ino == sbuf->st_ex_ino;
}

/* A file the module leaves alone for good: logged once per share */
static void cacheguard_foreign(struct cacheguard_share *share,
			       struct files_struct *fsp)
{
	DBG_DEBUG("%s: the I/O descriptor is not the file's\n",
		  fsp_str_dbg(fsp));
	if (share->foreign_logged) {
		return;
	}
	share->foreign_logged = true;
	DBG_WARNING("share [%s]: the file's I/O descriptor is not a kernel "
		    "descriptor of the file (a lower module owns I/O); "
		    "cacheguard leaves its files alone\n",
		    share->name);
}

/* The extension goes (close, or the fsp freed): its counters are kept */
static void cacheguard_log_summary(struct files_struct *fsp,
				   const struct cacheguard_file *cgf);

/*
 * What a tracked file's close does, once: its stream's last drops and
 * hints, its summary, its direct buffer back to the budget (once no read
 * job holds it). From SMB_VFS_CLOSE, or from the extension's destructor
 * for a handle smbd frees without it: SMB1 DOS and FCB opens of one
 * file by one client share a descriptor, and smbd calls SMB_VFS_CLOSE
 * only for the last of them (fd_close).
 */
static void cacheguard_file_done(struct files_struct *fsp,
				 struct cacheguard_file *cgf)
{
	if (cgf->done) {
		return;
	}
	cgf->done = true;
	if (!cgf->untracked) {
		uint64_t start_ns = cacheguard_now_ns();

		cg_stream_close(&cgf->file.stream, fsp_get_io_fd(fsp));
		TALLOC_FREE(cgf->direct);
		cacheguard_loop_took(cgf, "close", start_ns);
		cacheguard_log_summary(fsp, cgf);
	}
}

static void cacheguard_file_destroy(void *p)
{
	struct cacheguard_file *cgf = p;
	bool closed = cgf->done;

	if (!closed) {
		/* freed without SMB_VFS_CLOSE: a shared DOS or FCB handle */
		if (cgf->writer != NULL) {
			(void)cg_wfile_close(cgf->writer);
			TALLOC_FREE(cgf->writer);
		}
		cacheguard_file_done(cgf->fsp, cgf);
	}
	if (!cgf->untracked) {
		cg_status_file_close(&cgf->file);
		if (!closed) {
			cg_status_write(true);
		}
	}
}

/* Streams of what smbd opens as a plain file, in a mode that is not off */
static bool cacheguard_watched(const struct cg_config *cfg,
			       struct files_struct *fsp)
{
	return cg_config_watches(cfg) && !fsp->fsp_flags.is_pathref &&
	       !fsp->fsp_flags.is_directory && !fsp_is_alternate_stream(fsp);
}

/*
 * The extension of fsp, its reads and writes undecided; NULL on no
 * memory. A file whose descriptor is not its own is foreign for good.
 */
static struct cacheguard_file *cacheguard_add(
	struct vfs_handle_struct *handle,
	struct cacheguard_share *share,
	struct files_struct *fsp)
{
	struct cacheguard_file *cgf = NULL;
	struct stat st;
	bool is_file = cacheguard_fd_is_file(handle, fsp, &st);

	cgf = VFS_ADD_FSP_EXTENSION(handle,
				    fsp,
				    struct cacheguard_file,
				    cacheguard_file_destroy);
	if (cgf == NULL) {
		return NULL;	/* no memory: serve the file untouched */
	}
	cgf->fsp = fsp;
	cgf->untracked = true;
	cgf->reads_pending = is_file;
	cgf->foreign = !is_file;
	if (!is_file) {
		cacheguard_foreign(share, fsp);
	}
	return cgf;
}

/*
 * Whether smbd holds a kernel oplock on fsp: with kernel oplocks = yes, a
 * client's batch or exclusive oplock is a Linux write lease on smbd's
 * descriptor, which any other open of the file breaks (the lease break
 * reaches smbd, which breaks the client's oplock). Direct reads need a
 * second open, O_DIRECT, so such a file is read without them.
 */
static bool cacheguard_kernel_oplock(struct files_struct *fsp)
{
	return lp_kernel_oplocks(SNUM(fsp->conn)) &&
	       EXCLUSIVE_OPLOCK_TYPE(fsp->oplock_type);
}

/*
 * The state of fsp, created on the first read of a file that is at least
 * min file size long. NULL for everything the module leaves alone.
 */
static struct cacheguard_file *cacheguard_track(
	struct vfs_handle_struct *handle,
	struct files_struct *fsp)
{
	struct cacheguard_file *cgf = NULL;
	struct cacheguard_share *share = NULL;
	struct cg_config *cfg = NULL;
	dev_t dev = fsp->fsp_name->st.st_ex_dev;
	struct stat st;

	cgf = VFS_FETCH_FSP_EXTENSION(handle, fsp);
	if (cgf != NULL && !cgf->reads_pending) {
		return cgf->untracked ? NULL : cgf;
	}
	SMB_VFS_HANDLE_GET_DATA(handle, share, struct cacheguard_share,
				return NULL);
	cfg = &share->cfg;
	if (!cacheguard_watched(cfg, fsp)) {
		return NULL;
	}
	/*
	 * smbd's stat is from the open: a file written through this handle
	 * may have grown since, and then only the kernel knows its size.
	 * Other small files cost nothing.
	 */
	if (cgf == NULL &&
	    !cg_file_may_track(cfg,
			       (uint64_t)fsp->fsp_name->st.st_ex_size,
			       fsp->fsp_flags.modified)) {
		return NULL;
	}
	if (cgf == NULL) {
		cgf = cacheguard_add(handle, share, fsp);
	}
	if (cgf == NULL || cgf->foreign) {
		return NULL;
	}
	cgf->reads_pending = false;
	if (fstat(fsp_get_io_fd(fsp), &st) != 0 ||
	    !cg_file_tracks(cfg, (uint64_t)st.st_size)) {
		/* decided once: later reads of this open cost no fstat */
		return NULL;
	}
	cgf->untracked = false;
	if (cg_config_probes(cfg, share->below, CG_BELOW_READS)) {
		cg_fs_probe(fsp, !cacheguard_kernel_oplock(fsp));
	}
	cg_file_init(&cgf->file,
		     cfg,
		     &cacheguard_sys,
		     (uint64_t)st.st_size,
		     cg_fs_lacks_of(dev) | share->below,
		     fsp_get_io_fd(fsp));
	cgf->file.stream.kernel_ra = cg_fs_readahead(dev);
	cgf->file.stream.share.slot = cg_share_slot(st.st_dev, st.st_ino);
	/* one smbd process serves one client, whose cache serves its readers */
	cgf->file.stream.share.client = (uint64_t)getpid();
	cg_status_file_open(&cgf->file);
	DBG_DEBUG("%s: tracking, size %ju, mode %s\n",
		  fsp_str_dbg(fsp),
		  (uintmax_t)st.st_size,
		  cg_mode_name(cgf->file.mode));
	return cgf;
}

/* A fast path will not be used: count it, and remember what fs lacks */
static void cacheguard_fs_learnt(struct files_struct *fsp,
				 unsigned lacks,
				 const char *what,
				 int err)
{
	if (lacks != 0) {
		cg_fs_lacks(fsp->fsp_name->st.st_ex_dev, lacks, what, err);
	}
}

/* The path for one read, the engine's choice; sets up direct reads */
static enum cg_path cacheguard_choose(struct vfs_handle_struct *handle,
				      struct files_struct *fsp,
				      struct cacheguard_file *cgf,
				      const struct cg_io *io,
				      size_t n)
{
	enum cg_direct_fail fail = CG_DIRECT_FAIL_FILE;
	enum cg_path path;
	unsigned lacks;

	path = cg_file_choose(&cgf->file, io, n);
	if (path != CG_PATH_DIRECT || cgf->direct != NULL) {
		return path;
	}
	/*
	 * On fsp, not cgf: an fsp extension's data area is not a talloc
	 * context. fsp is freed right after the close.
	 */
	if (cacheguard_kernel_oplock(fsp)) {
		fail = CG_DIRECT_FAIL_LEASE;
	} else {
		cgf->direct = cg_direct_open(fsp,
					     handle,
					     fsp,
					     cgf->file.stream.cfg,
					     cgf->file.stream.file_size,
					     &fail);
	}
	if (cgf->direct != NULL) {
		return CG_PATH_DIRECT;
	}
	lacks = cg_fs_lacks_of(fsp->fsp_name->st.st_ex_dev);
	lacks = cg_file_direct_unavailable(&cgf->file,
					   fsp_get_io_fd(fsp),
					   fail,
					   lacks);
	cacheguard_fs_learnt(fsp, lacks, "O_DIRECT", EINVAL);
	DBG_INFO("%s: no direct reads (%s), mode %s\n",
		 fsp_str_dbg(fsp),
		 fail == CG_DIRECT_FAIL_MEMORY ? "over direct memory"
		 : fail == CG_DIRECT_FAIL_FS   ? "no O_DIRECT on the filesystem"
		 : fail == CG_DIRECT_FAIL_LEASE ? "smbd holds a kernel oplock"
					       : "this file cannot be reopened",
		 cg_mode_name(cgf->file.mode));
	return CG_PATH_NEXT;
}

/*
 * A read carried out as cg_file_call said ended with ret (-1: err): what
 * the engine makes of it (cg_file_read_after). True when the range is to
 * be read again, through the next module (*path, io say how).
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
	unsigned lacks = 0;
	unsigned learnt;
	enum cg_after after;

	if (ret == -1) {
		/* only a failure may need what the device is known to lack */
		lacks = cg_fs_lacks_of(fsp->fsp_name->st.st_ex_dev);
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
	cacheguard_fs_learnt(fsp, learnt, "RWF_DONTCACHE", err);
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
 * Count a read's bytes by path; while a stream runs, refresh the status.
 * A direct stream that is finished gives its buffer, and its share of the
 * server's budget, back now rather than at close: clients keep files
 * open. A later direct read starts a new one.
 */
static void cacheguard_served(struct cacheguard_file *cgf,
			      enum cg_path path,
			      ssize_t nread)
{
	cg_file_served(&cgf->file, path, nread);
	if (cgf->direct != NULL &&
	    cg_direct_finished(cgf->direct,
			       cgf->file.mode == CG_MODE_DIRECT)) {
		TALLOC_FREE(cgf->direct);
	}
	if (cgf->file.stream.state == CG_ACTIVE) {
		cg_status_write(false);
	}
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
	struct cg_io io;
	ssize_t ret = -1;
	int err;

	if (cgf == NULL) {
		return SMB_VFS_NEXT_PREAD(handle, fsp, data, n, offset);
	}
	cgf->file.calls.pread++;
	io = cg_read_begin(&cgf->file.stream, fd, offset, n);
	path = cacheguard_choose(handle, fsp, cgf, &io, n);
	do {
		switch (cg_file_call(&io, path)) {
		case CG_CALL_DONTCACHE:
			ret = cg_uncached_pread(fd, data, n, offset,
						CG_RWF_DONTCACHE);
			break;
		case CG_CALL_PIECES:
			ret = cg_uncached_pread(fd, data, n, offset,
						CG_READ_DROP);
			break;
		case CG_CALL_DIRECT:
			ret = cg_direct_pread(
				cgf->direct,
				data,
				n,
				offset,
				cg_stream_inflight(&cgf->file.stream));
			break;
		case CG_CALL_NEXT:
			ret = SMB_VFS_NEXT_PREAD(handle, fsp, data, n, offset);
			break;
		}
		/* smbd maps the read's errno to the client's NTSTATUS */
		err = errno;
	} while (cacheguard_read_again(fsp, cgf, &io, &path, ret, err));
	cacheguard_served(cgf, path, ret);
	cg_read_end(&cgf->file.stream, fd, &io, ret);
	errno = err;
	return ret;
}

struct cacheguard_pread_state {
	struct vfs_handle_struct *handle;
	struct tevent_context *ev;
	struct files_struct *fsp;
	struct cacheguard_file *cgf;
	struct cg_io io;
	enum cg_path path;
	void *data;
	size_t n;
	off_t offset;
	ssize_t ret;
	struct vfs_aio_state vfs_aio_state;
};

static void cacheguard_pread_done(struct tevent_req *subreq);

static struct tevent_req *cacheguard_pread_issue(
	struct cacheguard_pread_state *state)
{
	struct cg_stream *s = NULL;
	enum cg_call call = CG_CALL_NEXT;

	if (state->cgf != NULL) {
		s = &state->cgf->file.stream;
		call = cg_file_call(&state->io, state->path);
	}
	switch (call) {
	case CG_CALL_DONTCACHE:
	case CG_CALL_PIECES:
		return cg_uncached_pread_send(state,
					      state->ev,
					      state->handle,
					      fsp_get_io_fd(state->fsp),
					      state->data,
					      state->n,
					      state->offset,
					      state->io.drop_pieces
						      ? CG_READ_DROP
						      : CG_RWF_DONTCACHE,
					      s->cfg->stream_ioprio);
	case CG_CALL_DIRECT:
		return cg_direct_pread_send(state,
					    state->ev,
					    state->cgf->direct,
					    state->data,
					    state->n,
					    state->offset,
					    cg_stream_inflight(s));
	case CG_CALL_NEXT:
		break;
	}
	return SMB_VFS_NEXT_PREAD_SEND(state,
				       state->ev,
				       state->handle,
				       state->fsp,
				       state->data,
				       state->n,
				       state->offset);
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
	struct tevent_req *subreq = NULL;
	struct cacheguard_pread_state *state = NULL;
	uint64_t start_ns = cacheguard_now_ns();

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
		.ret = -1,
	};
	if (state->cgf != NULL) {
		state->cgf->file.calls.pread_send++;
		state->io = cg_read_begin(&state->cgf->file.stream,
					  fsp_get_io_fd(fsp),
					  offset,
					  n);
		state->path = cacheguard_choose(handle, fsp, state->cgf,
						&state->io, n);
	}

	subreq = cacheguard_pread_issue(state);
	if (tevent_req_nomem(subreq, req)) {
		if (state->cgf != NULL) {
			cg_read_end(&state->cgf->file.stream,
				    fsp_get_io_fd(state->fsp),
				    &state->io,
				    -1);
		}
		cacheguard_loop_took(state->cgf, "send", start_ns);
		return tevent_req_post(req, ev);
	}
	tevent_req_set_callback(subreq, cacheguard_pread_done, req);
	cacheguard_loop_took(state->cgf, "send", start_ns);
	return req;
}

static void cacheguard_pread_done(struct tevent_req *subreq)
{
	struct tevent_req *req = tevent_req_callback_data(subreq,
							  struct tevent_req);
	struct cacheguard_pread_state *state =
		tevent_req_data(req, struct cacheguard_pread_state);
	uint64_t start_ns = cacheguard_now_ns();
	enum cg_call call = CG_CALL_NEXT;

	if (state->cgf != NULL) {
		call = cg_file_call(&state->io, state->path);
	}
	switch (call) {
	case CG_CALL_DONTCACHE:
	case CG_CALL_PIECES:
		state->ret = cg_uncached_pread_recv(subreq,
						    &state->vfs_aio_state);
		break;
	case CG_CALL_DIRECT:
		state->ret = cg_direct_pread_recv(subreq,
						  &state->vfs_aio_state);
		break;
	case CG_CALL_NEXT:
		state->ret = SMB_VFS_PREAD_RECV(subreq, &state->vfs_aio_state);
		break;
	}
	TALLOC_FREE(subreq);
	if (state->cgf == NULL) {
		tevent_req_done(req);
		return;
	}
	if (cacheguard_read_again(state->fsp,
				  state->cgf,
				  &state->io,
				  &state->path,
				  state->ret,
				  state->vfs_aio_state.error)) {
		state->vfs_aio_state = (struct vfs_aio_state){0};
		subreq = cacheguard_pread_issue(state);
		if (tevent_req_nomem(subreq, req)) {
			cg_read_end(&state->cgf->file.stream,
				    fsp_get_io_fd(state->fsp),
				    &state->io,
				    -1);
			cacheguard_loop_took(state->cgf, "done", start_ns);
			return;
		}
		tevent_req_set_callback(subreq, cacheguard_pread_done, req);
		cacheguard_loop_took(state->cgf, "done", start_ns);
		return;
	}
	cacheguard_served(state->cgf, state->path, state->ret);
	cg_read_end(&state->cgf->file.stream,
		    fsp_get_io_fd(state->fsp),
		    &state->io,
		    state->ret);
	cacheguard_loop_took(state->cgf, "done", start_ns);
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
	data = ret;
	if (ret > 0 && hdr != NULL) {
		data = MAX(ret - (ssize_t)hdr->length, 0);
	}
	cacheguard_served(cgf, CG_PATH_NEXT, data);
	cg_read_end(&cgf->file.stream, fsp_get_io_fd(fromfsp), &io, data);
	errno = err;
	return ret;
}

/*
 * The writer of fsp (cacheguard_write.c), created at its first write;
 * NULL for everything the module leaves alone
 */
static struct cg_wfile *cacheguard_writer(struct vfs_handle_struct *handle,
					  struct files_struct *fsp)
{
	struct cacheguard_file *cgf = VFS_FETCH_FSP_EXTENSION(handle, fsp);
	struct cacheguard_share *share = NULL;
	struct cg_config *cfg = NULL;

	if (cgf != NULL && (cgf->writer != NULL || cgf->foreign)) {
		return cgf->writer;
	}
	SMB_VFS_HANDLE_GET_DATA(handle, share, struct cacheguard_share,
				return NULL);
	cfg = &share->cfg;
	if (!cacheguard_watched(cfg, fsp)) {
		return NULL;
	}
	if (cgf == NULL) {
		cgf = cacheguard_add(handle, share, fsp);
	}
	if (cgf == NULL || cgf->foreign) {
		return NULL;
	}
	if (cg_config_probes(cfg, share->below, CG_BELOW_WRITES)) {
		cg_fs_probe(fsp, !cacheguard_kernel_oplock(fsp));
	}
	/* On fsp, not cgf: an fsp extension's data area is no talloc ctx */
	cgf->writer = cg_wfile_new(fsp,
				   handle,
				   fsp,
				   cfg,
				   cg_fs_lacks_of(fsp->fsp_name->st.st_ex_dev) |
					   share->below);
	return cgf->writer;
}

/* A flush gets the writeback error the writer's jobs consumed, once */
static struct tevent_req *cacheguard_fsync_send(
	struct vfs_handle_struct *handle,
	TALLOC_CTX *mem_ctx,
	struct tevent_context *ev,
	struct files_struct *fsp)
{
	struct cacheguard_file *cgf = VFS_FETCH_FSP_EXTENSION(handle, fsp);

	return cg_wfile_fsync_send(mem_ctx,
				   ev,
				   handle,
				   fsp,
				   cgf != NULL ? cgf->writer : NULL);
}

static ssize_t cacheguard_pwrite(struct vfs_handle_struct *handle,
				 struct files_struct *fsp,
				 const void *data,
				 size_t n,
				 off_t offset)
{
	return cg_write_pwrite(handle,
			       fsp,
			       cacheguard_writer(handle, fsp),
			       data,
			       n,
			       offset);
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
	return cg_write_pwrite_send(handle,
				    mem_ctx,
				    ev,
				    fsp,
				    cacheguard_writer(handle, fsp),
				    data,
				    n,
				    offset);
}

static ssize_t cacheguard_write_recvfile(struct vfs_handle_struct *handle,
					 int fromfd,
					 struct files_struct *tofsp,
					 off_t offset,
					 size_t n)
{
	return cg_write_recvfile(handle,
				 fromfd,
				 tofsp,
				 cacheguard_writer(handle, tofsp),
				 offset,
				 n);
}

static void cacheguard_log_summary(struct files_struct *fsp,
				   const struct cacheguard_file *cgf)
{
	char line[640];

	if (cg_file_summary(&cgf->file, line, sizeof(line))) {
		DBG_PREFIX(2, ("%s: %s\n", fsp_str_dbg(fsp), line));
	}
}

static int cacheguard_close(struct vfs_handle_struct *handle,
			    struct files_struct *fsp)
{
	struct cacheguard_file *cgf = VFS_FETCH_FSP_EXTENSION(handle, fsp);
	int werr = 0;
	int ret;

	if (cgf != NULL && cgf->writer != NULL) {
		werr = cg_wfile_close(cgf->writer);
		TALLOC_FREE(cgf->writer);
	}
	if (cgf != NULL) {
		bool tracked = !cgf->untracked;

		/* the direct buffer goes back first: the status won't count it */
		cacheguard_file_done(fsp, cgf);
		VFS_REMOVE_FSP_EXTENSION(handle, fsp);
		if (tracked) {
			cg_status_write(true);
		}
	}
	ret = SMB_VFS_NEXT_CLOSE(handle, fsp);
	if (ret == 0 && werr != 0) {
		/* A writeback error no flush reported: smbd reports it */
		errno = werr;
		ret = -1;
	}
	return ret;
}

static struct vfs_fn_pointers vfs_cacheguard_fns = {
	.connect_fn = cacheguard_connect,
	.close_fn = cacheguard_close,
	.pread_fn = cacheguard_pread,
	.pread_send_fn = cacheguard_pread_send,
	.pread_recv_fn = cacheguard_pread_recv,
	.sendfile_fn = cacheguard_sendfile,
	.pwrite_fn = cacheguard_pwrite,
	.pwrite_send_fn = cacheguard_pwrite_send,
	.pwrite_recv_fn = cg_write_pwrite_recv,
	.recvfile_fn = cacheguard_write_recvfile,
	.fallocate_fn = cacheguard_fallocate,
	.ftruncate_fn = cacheguard_ftruncate,
	.offload_write_send_fn = cacheguard_offload_write_send,
	.offload_write_recv_fn = cacheguard_offload_write_recv,
	.fsync_send_fn = cacheguard_fsync_send,
	.fsync_recv_fn = cg_wfile_fsync_recv,
};

/*
 * What a module registers when this smbd is not the Samba it was built
 * for: no operation at all, so every call goes to the next module and
 * nothing of this build's idea of Samba's structures is ever used. smbd
 * reads the table by its own struct vfs_fn_pointers, which a later Samba
 * may have made larger than this build's: the table is zeros well past
 * that size.
 */
static const void *cacheguard_passthrough[4 * sizeof(struct vfs_fn_pointers) /
					  sizeof(void *)];

/*
 * The VFS structures this module uses (files_struct, connection_struct,
 * vfs_handle_struct) may change with any upstream release, point releases
 * included, and smbd checks only SMB_VFS_INTERFACE_VERSION. The module
 * runs in the smbd of the upstream release it was built for (its
 * SAMBA_VERSION_STRING, such as "4.17.12-Debian", which Debian's security
 * updates of that release keep), the rule the package's dependency
 * states: samba (>= the build's), samba (<< the next upstream release).
 * In any other smbd it passes everything through and says so, so that a
 * share does not go down with it.
 */
static_decl_vfs;
NTSTATUS vfs_cacheguard_init(TALLOC_CTX *ctx)
{
	NTSTATUS status;

	if (strcmp(samba_version_string(), SAMBA_VERSION_STRING) != 0) {
		DBG_ERR("cacheguard was built for Samba %s (package %s), "
			"this smbd is %s: it passes every call through and "
			"protects nothing; rebuild it against this samba "
			"(make deb) or remove cacheguard from "
			"\"vfs objects\"\n",
			SAMBA_VERSION_STRING,
			CG_SAMBA_PACKAGE,
			samba_version_string());
		status = smb_register_vfs(
			SMB_VFS_INTERFACE_VERSION,
			"cacheguard",
			(const struct vfs_fn_pointers *)cacheguard_passthrough);
		if (!NT_STATUS_IS_OK(status)) {
			DBG_ERR("cacheguard: smbd refused even the "
				"pass-through (%s): remove cacheguard from "
				"\"vfs objects\" of every share until it is "
				"rebuilt\n",
				nt_errstr(status));
		}
		return status;
	}
	cacheguard_sys = cg_sys_linux;
	cacheguard_sys.resident = cacheguard_resident;
	cacheguard_sys.share_open = cacheguard_share_open;
	cacheguard_sys.ra_open = cacheguard_ra_open;
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
