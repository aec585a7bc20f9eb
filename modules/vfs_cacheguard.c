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
 * reads and writes of every large open file, recognises a large
 * sequential stream (the engine in ../source/ decides) and serves the
 * stream without leaving it in the cache, as the share's cacheguard:mode
 * says (vfs_cacheguard.8). Other reads go to the next module untouched;
 * a fast path that fails is retried as a plain buffered read, so the
 * client always gets the bytes pread() would have returned (README.md
 * draws a read's path).
 *
 * This file holds the tree connect (the share's options and the modules
 * below in its stack), the close and the function table; an open file's
 * state is in cacheguard_file.c.
 */

#include "includes.h"
#include "smbd/smbd.h"
#include "version.h"

#include "cacheguard_glue.h"
#include "../source/cg_sys.h"

#undef DBGC_CLASS
#define DBGC_CLASS vfs_cacheguard_debug_level

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

static unsigned cacheguard_stack_ops(const struct vfs_fn_pointers *fns)
{
	unsigned ops = 0;

	if (fns->pread_fn != NULL || fns->pread_send_fn != NULL ||
	    fns->sendfile_fn != NULL) {
		ops |= CG_BELOW_READS;
	}
	if (fns->pwrite_fn != NULL || fns->pwrite_send_fn != NULL ||
	    fns->recvfile_fn != NULL) {
		ops |= CG_BELOW_WRITES;
	}
	return ops;
}

/*
 * The CG_BELOW_* flags of the modules below handle that must see the
 * files' reads or writes, each logged. smbd stacks a share's handles in
 * the order of "vfs objects", then what it adds itself (widelinks), then
 * vfs_default; a module implements an operation when its table has the
 * function; what that means is the engine's call (cg_below_kind).
 */
static unsigned cacheguard_stack_below(struct vfs_handle_struct *handle,
					const char *service)
{
	const char **objects = lp_vfs_objects(SNUM(handle->conn));
	size_t n = str_list_length(objects);
	struct vfs_handle_struct *h = NULL;
	bool below = false;
	unsigned needs = 0;
	size_t i;

	for (h = handle->conn->vfs_handles, i = 0; h != NULL;
	     h = h->next, i++) {
		char *name = NULL;
		unsigned ops;

		if (h == handle) {
			below = true;
			continue;
		}
		if (!below || h->next == NULL) {
			continue;	/* above, or vfs_default */
		}
		name = i < n ? talloc_strdup(talloc_tos(), objects[i]) : NULL;
		name = name != NULL ? cg_stack_name(name) : NULL;
		ops = cacheguard_stack_ops(h->fns);
		switch (cg_below_kind(name, ops)) {
		case CG_BELOW_SEES:
			needs |= ops;
			DBG_WARNING("share [%s]: %s below cacheguard must see "
				    "every %s: they go through it, dropped "
				    "behind in windows (as mode dontneed); "
				    "list it before cacheguard to keep "
				    "cacheguard's own I/O\n",
				    service,
				    name != NULL ? name : "a module",
				    ops == CG_BELOW_READS ? "read"
				    : ops == CG_BELOW_WRITES
					    ? "write"
					    : "read and write");
			break;
		case CG_BELOW_ENGINE:
			DBG_NOTICE("share [%s]: %s below cacheguard: the "
				   "streams cacheguard reads or writes "
				   "itself (uncached, direct) bypass it; all "
				   "other I/O goes through it\n",
				   service,
				   name);
			break;
		default:
			break;
		}
	}
	return needs;
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
	int ret = SMB_VFS_NEXT_CONNECT(handle, service, user);

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
		const char *v = lp_parm_const_string(snum, "cacheguard",
						     o->name, NULL);

		if (v != NULL &&
		    cg_config_set(cfg, o->name, v, err, sizeof(err)) != 0) {
			goto bad_option;
		}
	}
	if (cg_config_check(cfg, err, sizeof(err)) != 0) {
		goto bad_option;
	}

	cg_config_describe(cfg, desc, sizeof(desc));
	DBG_PREFIX(2, ("share [%s]: %s\n", service, desc));

	if (cg_config_watches(cfg)) {
		share->below = cacheguard_stack_below(handle, service);
	}
	SMB_VFS_HANDLE_SET_DATA(handle, share, NULL, struct cacheguard_share, {
		SMB_VFS_NEXT_DISCONNECT(handle);
		return -1;
	});
	return 0;

bad_option:
	DBG_ERR("share [%s]: %s; refusing the connection\n", service, err);
	TALLOC_FREE(share);
	SMB_VFS_NEXT_DISCONNECT(handle);
	errno = EINVAL;
	return -1;
}

static int cacheguard_close(struct vfs_handle_struct *handle,
			    struct files_struct *fsp)
{
	struct cacheguard_file *cgf = VFS_FETCH_FSP_EXTENSION(handle, fsp);

	if (cgf != NULL) {
		cacheguard_file_done(fsp, cgf);
		VFS_REMOVE_FSP_EXTENSION(handle, fsp);
	}
	return SMB_VFS_NEXT_CLOSE(handle, fsp);
}

static struct vfs_fn_pointers vfs_cacheguard_fns = {
	.connect_fn = cacheguard_connect,
	.close_fn = cacheguard_close,
	/* and the hooks of the read and write files, at init */
};

/*
 * In an smbd of another release than the one it was built for
 * (cg_samba_compatible), the module registers no operation at all and
 * says so, so that a share does not go down with it and samba's point
 * releases are never held back. smbd reads the table as its own struct
 * vfs_fn_pointers, which a later Samba may have made larger: it is zeros
 * well past this build's size.
 */
static const void *cacheguard_passthrough[4 * sizeof(struct vfs_fn_pointers) /
					  sizeof(void *)];

static_decl_vfs;
NTSTATUS vfs_cacheguard_init(TALLOC_CTX *ctx)
{
	NTSTATUS status;

	if (!cg_samba_compatible(SAMBA_VERSION_STRING,
				 samba_version_string())) {
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
	cacheguard_sys_init();
	cacheguard_read_hooks(&vfs_cacheguard_fns);
	cacheguard_write_hooks(&vfs_cacheguard_fns);
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
