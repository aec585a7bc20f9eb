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
#include <sys/vfs.h>

#include "cacheguard_glue.h"
#include "../source/cg_sys.h"

#undef DBGC_CLASS
#define DBGC_CLASS vfs_cacheguard_debug_level

/*
 * What each filesystem (st_dev) turned out to support, per smbd process:
 * found once by a probe (auto) or by the first failure, then remembered,
 * so a filesystem without RWF_DONTCACHE costs one failed read, not one
 * per request. The table grows with the filesystems a process meets
 * (btrfs subvolumes and snapshots each have a device of their own).
 */
struct cacheguard_fs {
	dev_t dev;
	unsigned flags;
	uint64_t readahead;	/* the device's read_ahead_kb, in bytes */
	uint64_t max_request;	/* its max_sectors_kb, in bytes */
};

static struct cacheguard_fs *cacheguard_fs_table;
static size_t cacheguard_fs_count;

/*
 * A number from dev's block queue in sysfs ("read_ahead_kb",
 * "max_sectors_kb", "logical_block_size"), for a disk or a partition; 0 when sysfs has
 * none (tmpfs, btrfs and other devices without a queue of their own).
 */
unsigned cg_fs_queue_value(dev_t dev, const char *name)
{
	static const char *const fmt[] = {
		"/sys/dev/block/%u:%u/queue/%s",
		"/sys/dev/block/%u:%u/../queue/%s",
	};
	unsigned v = 0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fmt) && v == 0; i++) {
		char path[128];
		FILE *f = NULL;

		snprintf(path, sizeof(path), fmt[i], major(dev), minor(dev),
			 name);
		f = fopen(path, "r");
		if (f == NULL) {
			continue;
		}
		if (fscanf(f, "%u", &v) != 1) {
			v = 0;
		}
		fclose(f);
	}
	return v;
}

/* The entry of dev, made on first use; NULL only without memory */
static struct cacheguard_fs *cacheguard_fs(dev_t dev)
{
	struct cacheguard_fs *t = NULL;
	size_t i;

	for (i = 0; i < cacheguard_fs_count; i++) {
		if (cacheguard_fs_table[i].dev == dev) {
			return &cacheguard_fs_table[i];
		}
	}
	t = talloc_realloc(NULL, cacheguard_fs_table, struct cacheguard_fs,
			   cacheguard_fs_count + 1);
	if (t == NULL) {
		return NULL;
	}
	cacheguard_fs_table = t;
	t[cacheguard_fs_count] = (struct cacheguard_fs){
		.dev = dev,
		.readahead = 1024ULL * cg_fs_queue_value(dev, "read_ahead_kb"),
		.max_request = 1024ULL * cg_fs_queue_value(dev,
							   "max_sectors_kb"),
	};
	return &t[cacheguard_fs_count++];
}

uint64_t cg_fs_readahead(dev_t dev)
{
	struct cacheguard_fs *fs = cacheguard_fs(dev);

	return fs != NULL ? fs->readahead : 0;
}

uint64_t cg_fs_max_request(dev_t dev)
{
	struct cacheguard_fs *fs = cacheguard_fs(dev);

	return fs != NULL ? fs->max_request : 0;
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

int cg_fs_reopen_direct(int fd)
{
	char buf[PATH_MAX];
	const char *path = cg_proc_fd_path(fd, buf, sizeof(buf));

	if (path == NULL) {
		errno = ENOSYS;	/* no /proc: no way to reopen the fd */
		return -1;
	}
	return open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
}

/*
 * auto: what the filesystem of fsp is (fstatfs: network or FUSE, see
 * CG_FS_REMOTE) and supports, found once per process with a one-byte
 * uncached read and, where the engine asks for it (cg_probe_uncached),
 * an O_DIRECT reopen (cg_probe_direct)
 */
void cg_fs_probe(struct files_struct *fsp, bool may_reopen)
{
	dev_t dev = fsp->fsp_name->st.st_ex_dev;
	struct cacheguard_fs *fs = cacheguard_fs(dev);
	int fd = fsp_get_io_fd(fsp);
	char byte = 0;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct statfs sfs;
	enum cg_probe probe;
	unsigned lacks;
	int dfd, err = 0;

	if (fs == NULL || (fs->flags & CG_FS_PROBED)) {
		return;
	}
	if (fstatfs(fd, &sfs) != 0) {
		return;		/* asked again at the next stream */
	}
	if (preadv2(fd, &iov, 1, 0, CG_RWF_DONTCACHE) == -1) {
		err = errno;
	}
	probe = cg_probe_uncached(err, may_reopen, (uint64_t)sfs.f_type,
				  &lacks);
	if (probe == CG_PROBE_NO_ANSWER) {
		return;
	}
	if (probe == CG_PROBE_REOPEN) {
		dfd = cg_fs_reopen_direct(fd);
		lacks |= cg_probe_direct(dfd == -1 ? errno : 0);
		if (dfd != -1) {
			close(dfd);
		}
	}
	fs->flags |= CG_FS_PROBED | lacks;
	DBG_PREFIX(2,
		   ("device %u:%u: mode auto serves streams with %s\n",
		    (unsigned)major(dev),
		    (unsigned)minor(dev),
		    cg_mode_name(cg_mode_resolve(CG_MODE_AUTO, fs->flags))));
}

/* What dev lacks; everything when the table has no room for it */
unsigned cg_fs_lacks_of(dev_t dev)
{
	struct cacheguard_fs *fs = cacheguard_fs(dev);

	return fs != NULL ? fs->flags & (CG_FS_NO_DONTCACHE | CG_FS_NO_DIRECT |
					 CG_FS_NO_DONTCACHE_WRITE |
					 CG_FS_REMOTE)
			  : CG_FS_NO_DONTCACHE | CG_FS_NO_DIRECT;
}
