/*
 * vfs_cgtest: a test-only module stacked below cacheguard
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
 * It plays the lower layers cacheguard must cope with, for
 * testsuite/integration/t15_stack.sh. It is built by the testsuite and
 * never installed:
 *
 *	[stack]
 *		vfs objects = cacheguard cgtest
 *		cgtest:foreign fd = yes
 *		cgtest:decoy = /tmp/decoy.bin
 *		cgtest:eio offset = 50331648
 *
 * Options, per share:
 *
 *   foreign fd = yes	(default no) like vfs_ceph, the module owns the
 *			I/O of regular files: it opens the file for itself
 *			and gives smbd a descriptor of the decoy file
 *			instead, so fsp_get_io_fd() is not the file. Every
 *			hook smbd needs for get and put hands the real
 *			descriptor to the next module for the one call.
 *   decoy = PATH	the decoy, opened read-only as root; needed with
 *			foreign fd
 *   proc fds = no	clear conn->have_proc_fds at connect, as vfs_ceph's
 *			connection has it; default no with foreign fd,
 *			yes (left as it is) without. With yes an upper
 *			module can only tell the decoy by fstat(2).
 *   eio offset = N	a read whose range covers byte N fails with EIO
 *   short reads = yes	a read of 2 bytes or more asks the next module for
 *			half of it, so it comes back short before end of
 *			file
 *
 *   sendfile eintr offset = N
 *			a sendfile whose range covers byte N sends only the
 *			header and fails with EINTR: smbd's contract for
 *			"the header went out, send the data yourself"
 *			(smb2_sendfile_send_data, fake_sendfile)
 *
 * Otherwise sendfile and recvfile fail with ENOSYS (nothing sent), so
 * every read reaches pread or pread_send, where errors are injected.
 *
 * Only what get and put need is redirected to the real descriptor:
 * xattrs (smbd's DOS attributes), ACLs, locks and leases of a foreign fd
 * file still land on the decoy.
 */

#include "includes.h"
#include "smbd/smbd.h"
#include "lib/util/tevent_unix.h"

#define CGTEST_NO_OFFSET UINT64_MAX

struct cgtest_config {
	bool foreign_fd;
	const char *decoy;		/* talloc'd on the config */
	uint64_t eio_offset;		/* CGTEST_NO_OFFSET: no error */
	uint64_t eintr_offset;		/* sendfile; CGTEST_NO_OFFSET: none */
	bool short_reads;
};

/* A regular file opened with foreign fd: smbd holds the decoy's fd */
struct cgtest_file {
	int real_fd;
	int decoy_fd;
};

static int cgtest_connect(struct vfs_handle_struct *handle,
			  const char *service,
			  const char *user)
{
	struct cgtest_config *cfg = NULL;
	const char *decoy = NULL;
	int snum = SNUM(handle->conn);
	int ret;

	ret = SMB_VFS_NEXT_CONNECT(handle, service, user);
	if (ret < 0) {
		return ret;
	}
	cfg = talloc_zero(handle->conn, struct cgtest_config);
	if (cfg == NULL) {
		SMB_VFS_NEXT_DISCONNECT(handle);
		errno = ENOMEM;
		return -1;
	}
	cfg->foreign_fd = lp_parm_bool(snum, "cgtest", "foreign fd", false);
	decoy = lp_parm_const_string(snum, "cgtest", "decoy", "");
	cfg->decoy = talloc_strdup(cfg, decoy);
	cfg->eio_offset = lp_parm_ulonglong(snum, "cgtest", "eio offset",
					    CGTEST_NO_OFFSET);
	cfg->eintr_offset = lp_parm_ulonglong(snum,
					      "cgtest",
					      "sendfile eintr offset",
					      CGTEST_NO_OFFSET);
	cfg->short_reads = lp_parm_bool(snum, "cgtest", "short reads", false);
	if (cfg->foreign_fd && (cfg->decoy == NULL || cfg->decoy[0] == '\0')) {
		DBG_ERR("share [%s]: cgtest:foreign fd needs cgtest:decoy\n",
			service);
		TALLOC_FREE(cfg);
		SMB_VFS_NEXT_DISCONNECT(handle);
		errno = EINVAL;
		return -1;
	}
	if (!lp_parm_bool(snum, "cgtest", "proc fds", !cfg->foreign_fd)) {
		handle->conn->have_proc_fds = false;
	}
	SMB_VFS_HANDLE_SET_DATA(handle, cfg, NULL, struct cgtest_config, {
		SMB_VFS_NEXT_DISCONNECT(handle);
		return -1;
	});
	return 0;
}

static void cgtest_file_destroy(void *p)
{
	struct cgtest_file *f = p;

	if (f->real_fd != -1) {
		close(f->real_fd);
		f->real_fd = -1;
	}
}

/* Is this open one whose descriptor foreign fd replaces? */
static bool cgtest_takes_over(struct vfs_handle_struct *handle,
			      struct files_struct *fsp,
			      const struct vfs_open_how *how)
{
	const SMB_STRUCT_STAT *st = &fsp->fsp_name->st;
	struct cgtest_config *cfg = NULL;

	SMB_VFS_HANDLE_GET_DATA(handle, cfg, struct cgtest_config,
				return false);
	if (!cfg->foreign_fd || fsp->fsp_flags.is_pathref ||
	    fsp->fsp_flags.is_directory || fsp_is_alternate_stream(fsp) ||
	    (how->flags & (O_DIRECTORY | O_PATH)) != 0) {
		return false;
	}
	/* A file being created has no valid stat yet */
	return !VALID_STAT(*st) || S_ISREG(st->st_ex_mode);
}

/*
 * The next module opens the real file; smbd gets the decoy, opened as
 * root so the decoy's owner and mode do not matter.
 */
static int cgtest_openat(struct vfs_handle_struct *handle,
			 const struct files_struct *dirfsp,
			 const struct smb_filename *smb_fname,
			 struct files_struct *fsp,
			 const struct vfs_open_how *how)
{
	struct cgtest_config *cfg = NULL;
	struct cgtest_file *f = NULL;
	int real_fd;
	int decoy_fd;
	int err;

	real_fd = SMB_VFS_NEXT_OPENAT(handle, dirfsp, smb_fname, fsp, how);
	if (real_fd == -1 || !cgtest_takes_over(handle, fsp, how)) {
		return real_fd;
	}
	SMB_VFS_HANDLE_GET_DATA(handle, cfg, struct cgtest_config,
				goto fail_enomem);
	VFS_REMOVE_FSP_EXTENSION(handle, fsp);
	f = VFS_ADD_FSP_EXTENSION(handle, fsp, struct cgtest_file,
				  cgtest_file_destroy);
	if (f == NULL) {
		goto fail_enomem;
	}
	*f = (struct cgtest_file){.real_fd = real_fd, .decoy_fd = -1};

	become_root();
	decoy_fd = open(cfg->decoy, O_RDONLY | O_CLOEXEC);
	err = errno;
	unbecome_root();
	if (decoy_fd == -1) {
		DBG_ERR("%s: %s\n", cfg->decoy, strerror(err));
		VFS_REMOVE_FSP_EXTENSION(handle, fsp);	/* closes real_fd */
		errno = err;
		return -1;
	}
	f->decoy_fd = decoy_fd;
	DBG_DEBUG("%s: real fd %d, smbd gets decoy fd %d\n",
		  fsp_str_dbg(fsp), real_fd, decoy_fd);
	return decoy_fd;

fail_enomem:
	close(real_fd);
	errno = ENOMEM;
	return -1;
}

/*
 * Every hook below that acts on a taken-over file runs the next module
 * with the real descriptor in fsp for that one call and then puts the
 * decoy back: vfs_default then reads, writes and stats the file itself,
 * while smbd and the modules above only ever see the decoy. Async sends
 * are covered too, since vfs_default copies the fd into its job at send.
 */
static int cgtest_real_begin(struct vfs_handle_struct *handle,
			     struct files_struct *fsp)
{
	struct cgtest_file *f = VFS_FETCH_FSP_EXTENSION(handle, fsp);
	int decoy_fd = fsp_get_pathref_fd(fsp);

	if (f == NULL || f->decoy_fd != decoy_fd) {
		return -1;
	}
	fsp_set_fd(fsp, -1);	/* fsp_set_fd() refuses to overwrite an fd */
	fsp_set_fd(fsp, f->real_fd);
	return decoy_fd;
}

static void cgtest_real_end(struct files_struct *fsp, int decoy_fd)
{
	if (decoy_fd == -1) {
		return;
	}
	fsp_set_fd(fsp, -1);
	fsp_set_fd(fsp, decoy_fd);
}

/*
 * Closing the decoy closes the real descriptor too; the next module
 * closes the decoy. A reopen through /proc/self/fd (have_proc_fds)
 * closes the old pathref descriptor only after the new open: that close
 * must leave the new real descriptor alone.
 */
static int cgtest_close(struct vfs_handle_struct *handle,
			struct files_struct *fsp)
{
	struct cgtest_file *f = VFS_FETCH_FSP_EXTENSION(handle, fsp);

	if (f != NULL && f->decoy_fd == fsp_get_pathref_fd(fsp)) {
		VFS_REMOVE_FSP_EXTENSION(handle, fsp);
	}
	return SMB_VFS_NEXT_CLOSE(handle, fsp);
}

/* Does the read [offset, offset + n) cover the byte that fails? */
static bool cgtest_covers(uint64_t at, size_t n, off_t offset)
{
	return at != CGTEST_NO_OFFSET && (uint64_t)offset <= at &&
	       at - (uint64_t)offset < n;
}

static bool cgtest_eio(struct vfs_handle_struct *handle,
		       size_t n,
		       off_t offset)
{
	struct cgtest_config *cfg = NULL;

	SMB_VFS_HANDLE_GET_DATA(handle, cfg, struct cgtest_config,
				return false);
	return cgtest_covers(cfg->eio_offset, n, offset);
}

/* How much of a read of n bytes to ask the next module for */
static size_t cgtest_read_size(struct vfs_handle_struct *handle, size_t n)
{
	struct cgtest_config *cfg = NULL;

	SMB_VFS_HANDLE_GET_DATA(handle, cfg, struct cgtest_config,
				return n);
	return cfg->short_reads && n >= 2 ? n / 2 : n;
}

static ssize_t cgtest_pread(struct vfs_handle_struct *handle,
			    struct files_struct *fsp,
			    void *data,
			    size_t n,
			    off_t offset)
{
	size_t len = cgtest_read_size(handle, n);
	ssize_t ret;
	int decoy_fd;

	if (cgtest_eio(handle, n, offset)) {
		DBG_NOTICE("%s: EIO for pread %zu at %jd\n",
			   fsp_str_dbg(fsp), n, (intmax_t)offset);
		errno = EIO;
		return -1;
	}
	decoy_fd = cgtest_real_begin(handle, fsp);
	ret = SMB_VFS_NEXT_PREAD(handle, fsp, data, len, offset);
	cgtest_real_end(fsp, decoy_fd);
	return ret;
}

struct cgtest_pread_state {
	ssize_t ret;
	struct vfs_aio_state vfs_aio_state;
};

static void cgtest_pread_done(struct tevent_req *subreq);

/*
 * An injected EIO is answered 200 ms late, as a device's error would
 * come: by then the client's other reads in flight have ended. Answered
 * at once, the client went away with them still running in smbd's pool,
 * and smbd's exit freed their buffers under vfs_default's jobs (Samba's
 * own race, which ASan reports in t12, with or without cacheguard).
 */
static void cgtest_eio_now(struct tevent_req *subreq)
{
	struct tevent_req *req = tevent_req_callback_data(subreq,
							  struct tevent_req);

	tevent_wakeup_recv(subreq);
	TALLOC_FREE(subreq);
	tevent_req_error(req, EIO);
}

static struct tevent_req *cgtest_pread_send(struct vfs_handle_struct *handle,
					    TALLOC_CTX *mem_ctx,
					    struct tevent_context *ev,
					    struct files_struct *fsp,
					    void *data,
					    size_t n,
					    off_t offset)
{
	struct tevent_req *req = NULL;
	struct tevent_req *subreq = NULL;
	struct cgtest_pread_state *state = NULL;
	size_t len = cgtest_read_size(handle, n);
	int decoy_fd;

	req = tevent_req_create(mem_ctx, &state, struct cgtest_pread_state);
	if (req == NULL) {
		return NULL;
	}
	if (cgtest_eio(handle, n, offset)) {
		DBG_NOTICE("%s: EIO for pread_send %zu at %jd\n",
			   fsp_str_dbg(fsp), n, (intmax_t)offset);
		subreq = tevent_wakeup_send(state, ev,
					    timeval_current_ofs_msec(200));
		if (tevent_req_nomem(subreq, req)) {
			return tevent_req_post(req, ev);
		}
		tevent_req_set_callback(subreq, cgtest_eio_now, req);
		return req;
	}
	decoy_fd = cgtest_real_begin(handle, fsp);
	subreq = SMB_VFS_NEXT_PREAD_SEND(state, ev, handle, fsp, data, len,
					 offset);
	cgtest_real_end(fsp, decoy_fd);
	if (tevent_req_nomem(subreq, req)) {
		return tevent_req_post(req, ev);
	}
	tevent_req_set_callback(subreq, cgtest_pread_done, req);
	return req;
}

static void cgtest_pread_done(struct tevent_req *subreq)
{
	struct tevent_req *req = tevent_req_callback_data(subreq,
							  struct tevent_req);
	struct cgtest_pread_state *state =
		tevent_req_data(req, struct cgtest_pread_state);

	state->ret = SMB_VFS_PREAD_RECV(subreq, &state->vfs_aio_state);
	TALLOC_FREE(subreq);
	tevent_req_done(req);
}

static ssize_t cgtest_pread_recv(struct tevent_req *req,
				 struct vfs_aio_state *vfs_aio_state)
{
	struct cgtest_pread_state *state =
		tevent_req_data(req, struct cgtest_pread_state);

	if (tevent_req_is_unix_error(req, &vfs_aio_state->error)) {
		return -1;
	}
	*vfs_aio_state = state->vfs_aio_state;
	return state->ret;
}

static ssize_t cgtest_pwrite(struct vfs_handle_struct *handle,
			     struct files_struct *fsp,
			     const void *data,
			     size_t n,
			     off_t offset)
{
	int decoy_fd = cgtest_real_begin(handle, fsp);
	ssize_t ret;

	ret = SMB_VFS_NEXT_PWRITE(handle, fsp, data, n, offset);
	cgtest_real_end(fsp, decoy_fd);
	return ret;
}

/*
 * pwrite and fsync need no state of their own: the request the next
 * layer returns is handed up as ours, and its result read with the
 * next layer's own recv.
 */
static struct tevent_req *cgtest_pwrite_send(struct vfs_handle_struct *handle,
					     TALLOC_CTX *mem_ctx,
					     struct tevent_context *ev,
					     struct files_struct *fsp,
					     const void *data,
					     size_t n,
					     off_t offset)
{
	int decoy_fd = cgtest_real_begin(handle, fsp);
	struct tevent_req *req = NULL;

	req = SMB_VFS_NEXT_PWRITE_SEND(mem_ctx, ev, handle, fsp, data, n,
				       offset);
	cgtest_real_end(fsp, decoy_fd);
	return req;
}

static ssize_t cgtest_pwrite_recv(struct tevent_req *req,
				  struct vfs_aio_state *vfs_aio_state)
{
	return SMB_VFS_PWRITE_RECV(req, vfs_aio_state);
}

static struct tevent_req *cgtest_fsync_send(struct vfs_handle_struct *handle,
					    TALLOC_CTX *mem_ctx,
					    struct tevent_context *ev,
					    struct files_struct *fsp)
{
	int decoy_fd = cgtest_real_begin(handle, fsp);
	struct tevent_req *req = NULL;

	req = SMB_VFS_NEXT_FSYNC_SEND(mem_ctx, ev, handle, fsp);
	cgtest_real_end(fsp, decoy_fd);
	return req;
}

static int cgtest_fsync_recv(struct tevent_req *req,
			     struct vfs_aio_state *vfs_aio_state)
{
	return SMB_VFS_FSYNC_RECV(req, vfs_aio_state);
}

static off_t cgtest_lseek(struct vfs_handle_struct *handle,
			  struct files_struct *fsp,
			  off_t offset,
			  int whence)
{
	int decoy_fd = cgtest_real_begin(handle, fsp);
	off_t ret;

	ret = SMB_VFS_NEXT_LSEEK(handle, fsp, offset, whence);
	cgtest_real_end(fsp, decoy_fd);
	return ret;
}

static int cgtest_fstat(struct vfs_handle_struct *handle,
			struct files_struct *fsp,
			SMB_STRUCT_STAT *sbuf)
{
	int decoy_fd = cgtest_real_begin(handle, fsp);
	int ret;

	ret = SMB_VFS_NEXT_FSTAT(handle, fsp, sbuf);
	cgtest_real_end(fsp, decoy_fd);
	return ret;
}

static int cgtest_ftruncate(struct vfs_handle_struct *handle,
			    struct files_struct *fsp,
			    off_t len)
{
	int decoy_fd = cgtest_real_begin(handle, fsp);
	int ret;

	ret = SMB_VFS_NEXT_FTRUNCATE(handle, fsp, len);
	cgtest_real_end(fsp, decoy_fd);
	return ret;
}

static int cgtest_fallocate(struct vfs_handle_struct *handle,
			    struct files_struct *fsp,
			    uint32_t mode,
			    off_t offset,
			    off_t len)
{
	int decoy_fd = cgtest_real_begin(handle, fsp);
	int ret;

	ret = SMB_VFS_NEXT_FALLOCATE(handle, fsp, mode, offset, len);
	cgtest_real_end(fsp, decoy_fd);
	return ret;
}

static int cgtest_fntimes(struct vfs_handle_struct *handle,
			  struct files_struct *fsp,
			  struct smb_file_time *ft)
{
	int decoy_fd = cgtest_real_begin(handle, fsp);
	int ret;

	ret = SMB_VFS_NEXT_FNTIMES(handle, fsp, ft);
	cgtest_real_end(fsp, decoy_fd);
	return ret;
}

/*
 * Nothing sent: smbd reads through pread or pread_send instead. Or, at
 * the eintr offset, the header alone and EINTR: smbd sends the data.
 */
static ssize_t cgtest_sendfile(struct vfs_handle_struct *handle,
			       int tofd,
			       files_struct *fromfsp,
			       const DATA_BLOB *hdr,
			       off_t offset,
			       size_t n)
{
	struct cgtest_config *cfg = NULL;
	size_t sent = 0;

	SMB_VFS_HANDLE_GET_DATA(handle, cfg, struct cgtest_config,
				return -1);
	if (!cgtest_covers(cfg->eintr_offset, n, offset)) {
		errno = ENOSYS;
		return -1;
	}
	while (hdr != NULL && sent < hdr->length) {
		ssize_t ret = write(tofd, hdr->data + sent, hdr->length - sent);

		if (ret == -1 && errno != EINTR && errno != EAGAIN) {
			return -1;
		}
		sent += ret > 0 ? (size_t)ret : 0;
	}
	errno = EINTR;
	return -1;
}

static ssize_t cgtest_recvfile(struct vfs_handle_struct *handle,
			       int fromfd,
			       files_struct *tofsp,
			       off_t offset,
			       size_t n)
{
	errno = ENOSYS;
	return -1;
}

static struct vfs_fn_pointers vfs_cgtest_fns = {
	.connect_fn = cgtest_connect,
	.openat_fn = cgtest_openat,
	.close_fn = cgtest_close,
	.pread_fn = cgtest_pread,
	.pread_send_fn = cgtest_pread_send,
	.pread_recv_fn = cgtest_pread_recv,
	.pwrite_fn = cgtest_pwrite,
	.pwrite_send_fn = cgtest_pwrite_send,
	.pwrite_recv_fn = cgtest_pwrite_recv,
	.fsync_send_fn = cgtest_fsync_send,
	.fsync_recv_fn = cgtest_fsync_recv,
	.lseek_fn = cgtest_lseek,
	.fstat_fn = cgtest_fstat,
	.ftruncate_fn = cgtest_ftruncate,
	.fallocate_fn = cgtest_fallocate,
	.fntimes_fn = cgtest_fntimes,
	.sendfile_fn = cgtest_sendfile,
	.recvfile_fn = cgtest_recvfile,
};

static_decl_vfs;
NTSTATUS vfs_cgtest_init(TALLOC_CTX *ctx)
{
	return smb_register_vfs(SMB_VFS_INTERFACE_VERSION,
				"cgtest",
				&vfs_cgtest_fns);
}
