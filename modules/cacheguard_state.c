/*
 * vfs_cacheguard: per smbd process: the debug class, the device table,
 * the module's files in smbd's state directory
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
 * The bottom of the glue: it uses no other glue file. The state
 * directory holds the lock files: the direct-memory budget
 * (cacheguard_direct.c), the stream and readahead files (cacheguard_file.c).
 */

#include "includes.h"
#include "smbd/smbd.h"

#include <sys/vfs.h>

#include "cacheguard_glue.h"
#include "../source/cg_sys.h"

int vfs_cacheguard_debug_level = DBGC_VFS;

#undef DBGC_CLASS
#define DBGC_CLASS vfs_cacheguard_debug_level

/*
 * The module's directory in the state directory, by cg_state_dir_name's
 * rule (logged once where it is per node); NULL without memory
 */
static const char *cacheguard_state_dir(void)
{
	static char *dir;
	const char *state = lp_state_directory();
	struct statfs sfs;
	bool shared = false;
	bool per_node;
	char name[32];

	if (dir != NULL) {
		return dir;
	}
	if (lp_clustering() && statfs(state, &sfs) == 0) {
		shared = cg_fs_type_shared((uint64_t)sfs.f_type);
	}
	per_node = cg_state_dir_name(lp_clustering(), shared,
				     shared ? (unsigned)get_my_vnn() : 0,
				     name, sizeof(name));
	dir = talloc_asprintf(NULL, "%s/%s", state, name);
	if (per_node) {
		DBG_ERR("state directory %s is on a filesystem other nodes "
			"mount too (f_type %#jx): every node would share "
			"cacheguard's lock files; it keeps this node's in %s. "
			"Put the state directory on a local disk.\n",
			state,
			(uintmax_t)sfs.f_type,
			dir != NULL ? dir : "?");
	}
	return dir;
}

int cacheguard_state_file_open(const char *name)
{
	static bool logged;
	const char *state = lp_state_directory();
	const char *dir = NULL;
	struct cg_untrusted bad = {0};
	int fd = -1, err = ENOMEM;

	become_root();
	dir = cacheguard_state_dir();
	if (dir != NULL) {
		fd = cg_state_file_open(state, strrchr(dir, '/') + 1, name,
					&bad);
		err = errno;
	}
	unbecome_root();
	if (bad.why != NULL && !logged) {
		logged = true;
		DBG_ERR("%s is %s (uid %u, mode %04o): cacheguard keeps no "
			"lock files there; make it root's and writable by "
			"root alone\n",
			bad.parent ? state : dir,
			bad.why,
			(unsigned)bad.uid,
			(unsigned)bad.mode);
	}
	errno = err;
	return fd;
}

struct cg_devs cacheguard_devs;

void cacheguard_fs_lacks(struct files_struct *fsp,
			 unsigned flag,
			 const char *what,
			 int err)
{
	dev_t dev = fsp->fsp_name->st.st_ex_dev;

	if (flag == 0 || !cg_dev_learn(&cacheguard_devs, dev, flag)) {
		return;
	}
	DBG_WARNING("device %u:%u has no %s (%s); its streams fall back\n",
		    (unsigned)major(dev),
		    (unsigned)minor(dev),
		    what,
		    strerror(err));
}

void cacheguard_fs_probe(struct files_struct *fsp, bool may_reopen)
{
	dev_t dev = fsp->fsp_name->st.st_ex_dev;
	unsigned lacks;

	if (!cg_dev_probe(&cacheguard_devs, &cg_sys_linux, dev,
			  fsp_get_io_fd(fsp), may_reopen)) {
		return;
	}
	lacks = cg_dev_lacks(&cacheguard_devs, dev);
	DBG_PREFIX(2,
		   ("device %u:%u: mode auto serves streams with %s\n",
		    (unsigned)major(dev),
		    (unsigned)minor(dev),
		    cg_mode_name(cg_mode_resolve(CG_MODE_AUTO, lacks))));
}
