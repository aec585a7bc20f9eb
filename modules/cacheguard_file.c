/*
 * vfs_cacheguard: an open file's state: the fsp extension, whether the module
 * tracks the file, its close
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
 * Also the engine's syscall table with the parts that need smbd:
 * residency asked as root, the server's lock files.
 */

#include "includes.h"
#include "smbd/smbd.h"

#include "cacheguard_glue.h"
#include "../source/cg_share.h"
#include "../source/cg_sys.h"
#include "../source/cg_util.h"

#undef DBGC_CLASS
#define DBGC_CLASS vfs_cacheguard_debug_level

void cacheguard_loop_took(struct cacheguard_file *cgf,
			  const char *where,
			  uint64_t start_ns)
{
	if (cgf != NULL) {
		cg_calls_loop_took(&cgf->file.calls,
				   where,
				   cg_now_ns() - start_ns);
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

/* A server lock file's new descriptor; if none, said once with the cost */
static int cacheguard_lock_file_open(const char *name,
				     const char *what,
				     bool *logged,
				     const char *without)
{
	int fd = cacheguard_state_file_open(name);

	if (fd == -1 && !*logged) {
		*logged = true;
		DBG_ERR("%s: %s; %s\n", what, strerror(errno), without);
	}
	return fd;
}

/* The server's stream file (source/cg_share.c) */
static int cacheguard_share_open(void)
{
	static bool logged;

	return cacheguard_lock_file_open("streams", "stream file", &logged,
					 "streams of one file in several smbd "
					 "processes drop each other's pages");
}

/* The server's readahead budget file (source/cg_stream.c) */
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

void cacheguard_sys_init(void)
{
	cacheguard_sys = cg_sys_linux;
	cacheguard_sys.resident = cacheguard_resident;
	cacheguard_sys.share_open = cacheguard_share_open;
	cacheguard_sys.ra_open = cacheguard_ra_open;
}

/* Whether fsp's I/O descriptor is the file's own (cg_file_fd_is_own) */
static bool cacheguard_fd_is_file(struct vfs_handle_struct *handle,
				  struct files_struct *fsp,
				  struct stat *st)
{
	const SMB_STRUCT_STAT *sbuf = &fsp->fsp_name->st;
	int fd = fsp_get_io_fd(fsp);
	bool stat_ok = fd >= 0 && fstat(fd, st) == 0;

	return cg_file_fd_is_own(handle->conn->have_proc_fds &&
					 fsp->fsp_flags.have_proc_fds,
				 stat_ok,
				 stat_ok && st->st_dev == sbuf->st_ex_dev &&
					 st->st_ino == sbuf->st_ex_ino);
}

static void cacheguard_log_summary(struct files_struct *fsp,
				   const struct cacheguard_file *cgf)
{
	char line[640];

	if (cg_file_summary(&cgf->file, line, sizeof(line))) {
		DBG_PREFIX(2, ("%s: %s\n", fsp_str_dbg(fsp), line));
	}
}

/*
 * What a file's close does, once: its upload dropped, its stream's last
 * drops and hints, its summary, its direct buffer back. From
 * SMB_VFS_CLOSE, or from the extension's destructor for a handle smbd
 * frees without it: SMB1 DOS and FCB opens of one file by one client
 * share a descriptor, and smbd calls SMB_VFS_CLOSE only for the last of
 * them (fd_close).
 */
void cacheguard_file_done(struct files_struct *fsp, struct cacheguard_file *cgf)
{
	if (cgf->done) {
		return;
	}
	cgf->done = true;
	TALLOC_FREE(cgf->writer);	/* its destructor drops the upload */
	if (cgf->track == CG_TRACKING_YES) {
		uint64_t start_ns = cg_now_ns();

		cg_stream_close(&cgf->file.stream, fsp_get_io_fd(fsp));
		TALLOC_FREE(cgf->direct);
		cacheguard_loop_took(cgf, "close", start_ns);
		cacheguard_log_summary(fsp, cgf);
	}
}

static void cacheguard_file_destroy(void *p)
{
	struct cacheguard_file *cgf = p;

	/* freed without SMB_VFS_CLOSE: a shared DOS or FCB handle */
	cacheguard_file_done(cgf->fsp, cgf);
}

/*
 * The state of fsp, a file the share watches, and the share's; NULL for a
 * file the module leaves alone. A reader's file gets state only when
 * smbd's stat from the open (small files cost nothing more) allows.
 */
struct cacheguard_file *cacheguard_setup(struct vfs_handle_struct *handle,
					 struct files_struct *fsp,
					 struct cacheguard_file *cgf,
					 bool reader,
					 struct cacheguard_share **pshare)
{
	struct cacheguard_share *share = NULL;
	struct stat st;
	bool is_file;

	SMB_VFS_HANDLE_GET_DATA(handle, share, struct cacheguard_share,
				return NULL);
	if (!cg_file_watches(&share->cfg,
			     fsp->fsp_flags.is_pathref,
			     fsp->fsp_flags.is_directory,
			     fsp_is_alternate_stream(fsp))) {
		return NULL;
	}
	*pshare = share;
	if (cgf != NULL) {
		return cgf;	/* its callers return a foreign file's early */
	}
	if (reader &&
	    !cg_file_may_track(&share->cfg,
			       (uint64_t)fsp->fsp_name->st.st_ex_size,
			       fsp->fsp_flags.modified)) {
		return NULL;
	}
	is_file = cacheguard_fd_is_file(handle, fsp, &st);
	cgf = VFS_ADD_FSP_EXTENSION(handle,
				    fsp,
				    struct cacheguard_file,
				    cacheguard_file_destroy);
	if (cgf == NULL) {
		return NULL;	/* no memory: serve the file untouched */
	}
	cgf->fsp = fsp;
	cgf->track = is_file ? CG_TRACKING_UNASKED : CG_TRACKING_NO;
	cgf->foreign = !is_file;
	if (is_file) {
		return cgf;
	}
	DBG_DEBUG("%s: the I/O descriptor is not the file's\n",
		  fsp_str_dbg(fsp));
	if (!share->foreign_logged) {
		/* it leaves the file alone for good: logged once per share */
		share->foreign_logged = true;
		DBG_WARNING("share [%s]: the file's I/O descriptor is not a "
			    "kernel descriptor of the file (a lower module "
			    "owns I/O); cacheguard leaves its files alone\n",
			    share->name);
	}
	return NULL;
}

/*
 * With kernel oplocks = yes, a client's batch or exclusive oplock is a
 * Linux lease on smbd's descriptor, which any other open of the file
 * breaks: direct reads, which need a second open, do without
 */
bool cacheguard_kernel_oplock(struct files_struct *fsp)
{
	return lp_kernel_oplocks(SNUM(fsp->conn)) &&
	       EXCLUSIVE_OPLOCK_TYPE(fsp->oplock_type);
}

struct cacheguard_file *cacheguard_track(struct vfs_handle_struct *handle,
					 struct files_struct *fsp)
{
	struct cacheguard_file *cgf = VFS_FETCH_FSP_EXTENSION(handle, fsp);
	struct cacheguard_share *share = NULL;
	dev_t dev = fsp->fsp_name->st.st_ex_dev;
	struct stat st;
	bool known;

	if (cgf != NULL && cgf->track != CG_TRACKING_UNASKED) {
		return cgf->track == CG_TRACKING_YES ? cgf : NULL;
	}
	cgf = cacheguard_setup(handle, fsp, cgf, true, &share);
	if (cgf == NULL) {
		return NULL;
	}
	known = fstat(fsp_get_io_fd(fsp), &st) == 0;
	if (!cg_file_track_read(&cgf->track, &share->cfg, known,
				known ? (uint64_t)st.st_size : 0)) {
		return NULL;
	}
	if (cg_config_probes(&share->cfg, share->below, CG_BELOW_READS)) {
		cacheguard_fs_probe(fsp, !cacheguard_kernel_oplock(fsp));
	}
	cg_file_init(&cgf->file,
		     &share->cfg,
		     &cacheguard_sys,
		     (uint64_t)st.st_size,
		     cg_dev_lacks(&cacheguard_devs, dev) | share->below,
		     fsp_get_io_fd(fsp));
	cgf->file.stream.kernel_ra = cg_dev_readahead(&cacheguard_devs, dev);
	cgf->file.stream.share.slot = cg_share_slot(st.st_dev, st.st_ino);
	/* one smbd process serves one client, whose cache serves its readers */
	cgf->file.stream.share.client = (uint64_t)getpid();
	DBG_DEBUG("%s: tracking, size %ju, mode %s\n",
		  fsp_str_dbg(fsp),
		  (uintmax_t)st.st_size,
		  cg_mode_name(cgf->file.mode));
	return cgf;
}
