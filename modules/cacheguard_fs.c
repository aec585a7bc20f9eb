/*
 * vfs_cacheguard: what each filesystem supports
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

#include <sys/uio.h>

#include "cacheguard.h"

#undef DBGC_CLASS
#define DBGC_CLASS vfs_cacheguard_debug_level

/*
 * What each filesystem (st_dev) turned out to support, per smbd process:
 * found once by a probe (auto) or by the first failure, then remembered,
 * so a filesystem without RWF_DONTCACHE costs one failed read, not one
 * per request. Devices past the table's end are simply probed again.
 */
#define CG_FS_MAX 32

struct cacheguard_fs {
	dev_t dev;
	unsigned flags;
};

static struct cacheguard_fs cacheguard_fs_table[CG_FS_MAX];
static unsigned cacheguard_fs_count;

static struct cacheguard_fs *cacheguard_fs(dev_t dev)
{
	unsigned i;

	for (i = 0; i < cacheguard_fs_count; i++) {
		if (cacheguard_fs_table[i].dev == dev) {
			return &cacheguard_fs_table[i];
		}
	}
	if (cacheguard_fs_count == CG_FS_MAX) {
		return NULL;
	}
	cacheguard_fs_table[cacheguard_fs_count] =
		(struct cacheguard_fs){.dev = dev};
	return &cacheguard_fs_table[cacheguard_fs_count++];
}

/* Remember that dev lacks a feature; log it once per process */
void cg_fs_lacks(dev_t dev, unsigned flag, const char *what, int err)
{
	struct cacheguard_fs *fs = cacheguard_fs(dev);

	if (fs == NULL || (fs->flags & flag)) {
		return;
	}
	fs->flags |= flag;
	DBG_WARNING("device %u:%u has no %s (%s); its streams fall back\n",
		    (unsigned)major(dev),
		    (unsigned)minor(dev),
		    what,
		    strerror(err));
}

#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080
#endif

/*
 * auto: what the filesystem of fsp supports, found once per process with
 * a one-byte uncached read and, where that fails, an O_DIRECT reopen.
 */
void cg_fs_probe(struct files_struct *fsp)
{
	dev_t dev = fsp->fsp_name->st.st_ex_dev;
	struct cacheguard_fs *fs = cacheguard_fs(dev);
	int fd = fsp_get_io_fd(fsp);
	char byte = 0;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	char buf[PATH_MAX];
	const char *path = NULL;
	int dfd;

	if (fs == NULL || (fs->flags & CG_FS_PROBED)) {
		return;
	}
	fs->flags |= CG_FS_PROBED;
	if (preadv2(fd, &iov, 1, 0, RWF_DONTCACHE) == -1 &&
	    (errno == EOPNOTSUPP || errno == EINVAL)) {
		fs->flags |= CG_FS_NO_DONTCACHE;
		path = cg_proc_fd_path(fd, buf, sizeof(buf));
		dfd = path != NULL ? open(path, O_RDONLY | O_DIRECT | O_CLOEXEC)
				   : -1;
		if (dfd == -1) {
			fs->flags |= CG_FS_NO_DIRECT;
		} else {
			close(dfd);
		}
	}
	DBG_PREFIX(2,
		   ("device %u:%u: mode auto serves streams with %s\n",
		    (unsigned)major(dev),
		    (unsigned)minor(dev),
		    (fs->flags & CG_FS_NO_DONTCACHE) == 0 ? "dontcache"
		    : (fs->flags & CG_FS_NO_DIRECT) == 0  ? "direct"
							  : "dontneed"));
}

/* The mode a file's streams get, given what its filesystem supports */
enum cg_mode cg_fs_resolve(enum cg_mode want, dev_t dev)
{
	struct cacheguard_fs *fs = cacheguard_fs(dev);
	unsigned flags = fs != NULL ? fs->flags : 0;

	if (want == CG_MODE_AUTO) {
		if ((flags & CG_FS_NO_DONTCACHE) == 0) {
			return CG_MODE_DONTCACHE;
		}
		want = CG_MODE_DIRECT;
	}
	if (want == CG_MODE_DONTCACHE && (flags & CG_FS_NO_DONTCACHE)) {
		return CG_MODE_DONTNEED;
	}
	if (want == CG_MODE_DIRECT && (flags & CG_FS_NO_DIRECT)) {
		return CG_MODE_DONTNEED;
	}
	return want;
}
