/*
 * vfs_cacheguard: what each filesystem supports, logged (source/cg_dev.c)
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

#include "cacheguard_glue.h"
#include "../source/cg_dev.h"
#include "../source/cg_sys.h"

#undef DBGC_CLASS
#define DBGC_CLASS vfs_cacheguard_debug_level

/* What each device supports, per smbd process (source/cg_dev.h) */
static struct cg_devs cacheguard_devs;

unsigned cacheguard_fs_queue_value(dev_t dev, const char *name)
{
	return cg_dev_queue_value(NULL, dev, name);
}

uint64_t cacheguard_fs_readahead(dev_t dev)
{
	return cg_dev_readahead(&cacheguard_devs, dev);
}

uint64_t cacheguard_fs_max_request(dev_t dev)
{
	return cg_dev_max_request(&cacheguard_devs, dev);
}

unsigned cacheguard_fs_lacks_of(dev_t dev)
{
	return cg_dev_lacks(&cacheguard_devs, dev);
}

void cacheguard_fs_lacks(dev_t dev, unsigned flag, const char *what, int err)
{
	if (!cg_dev_learn(&cacheguard_devs, dev, flag)) {
		return;
	}
	DBG_WARNING("device %u:%u has no %s (%s); its streams fall back\n",
		    (unsigned)major(dev),
		    (unsigned)minor(dev),
		    what,
		    strerror(err));
}

int cacheguard_fs_reopen_direct(int fd)
{
	char buf[PATH_MAX];
	const char *path = cacheguard_proc_fd_path(fd, buf, sizeof(buf));

	if (path == NULL) {
		errno = ENOSYS;	/* no /proc: no way to reopen the fd */
		return -1;
	}
	return open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
}

void cacheguard_fs_probe(struct files_struct *fsp, bool may_reopen)
{
	dev_t dev = fsp->fsp_name->st.st_ex_dev;
	struct cg_sys sys = cg_sys_linux;
	enum cg_mode auto_mode;
	unsigned lacks;

	sys.reopen_direct = cacheguard_fs_reopen_direct;
	if (!cg_dev_probe(&cacheguard_devs, &sys, dev, fsp_get_io_fd(fsp),
			  may_reopen)) {
		return;
	}
	lacks = cg_dev_lacks(&cacheguard_devs, dev);
	auto_mode = cg_mode_resolve(CG_MODE_AUTO, lacks);
	DBG_PREFIX(2,
		   ("device %u:%u: mode auto serves streams with %s\n",
		    (unsigned)major(dev),
		    (unsigned)minor(dev),
		    cg_mode_name(auto_mode)));
}
