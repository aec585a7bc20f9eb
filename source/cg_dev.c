/*
 * vfs_cacheguard engine: devices and filesystems: what each supports
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

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "cg_dev.h"
#include "cg_dio.h"
#include "cg_sys.h"
#include "cg_util.h"

/* statfs f_types, from the kernel's <linux/magic.h> and the filesystems */
static const uint32_t cg_remote_fs_types[] = {
	0x6969,		/* NFS */
	0x517B,		/* SMB (smbfs) */
	0xFF534D42,	/* CIFS */
	0xFE534D42,	/* SMB2 (the cifs client) */
	0x65735546,	/* FUSE: fuse, fuseblk, virtiofs, glusterfs, sshfs */
	0x00C36400,	/* Ceph */
	0x01021997,	/* 9p */
	0x5346414F,	/* AFS */
	0x0BD00BD0,	/* Lustre */
};

/* Whether f_type, as statfs gives it (maybe sign-extended), is in types */
static bool cg_fs_type_in(uint64_t f_type, const uint32_t *types, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if ((uint32_t)f_type == types[i]) {
			return true;
		}
	}
	return false;
}

unsigned cg_fs_type_lacks(uint64_t f_type)
{
	size_t n = CG_ARRAY_SIZE(cg_remote_fs_types);

	return cg_fs_type_in(f_type, cg_remote_fs_types, n) ? CG_FS_REMOTE : 0;
}

enum cg_probe cg_probe_uncached(int err,
				bool may_reopen,
				uint64_t f_type,
				unsigned *lacks)
{
	*lacks = cg_fs_type_lacks(f_type);
	if (err != 0 && err != EOPNOTSUPP && err != EINVAL) {
		return CG_PROBE_NO_ANSWER;
	}
	if (err != 0) {
		*lacks |= CG_FS_NO_DONTCACHE;
	}
	if (*lacks & CG_FS_REMOTE) {
		return CG_PROBE_DONE;	/* never direct: no reopen needed */
	}
	return may_reopen ? CG_PROBE_REOPEN : CG_PROBE_NO_ANSWER;
}

unsigned cg_probe_direct(int err)
{
	if (err != 0 && cg_direct_open_failure(err) == CG_DIRECT_FAIL_FS) {
		return CG_FS_NO_DIRECT;
	}
	return 0;
}

/* ... and the cluster filesystems on shared block devices */
static const uint32_t cg_cluster_fs_types[] = {
	0x47504653,	/* GPFS */
	0x01161970,	/* GFS2 */
	0x7461636F,	/* OCFS2 */
};

bool cg_fs_type_shared(uint64_t f_type)
{
	return cg_fs_type_in(f_type, cg_cluster_fs_types,
			     CG_ARRAY_SIZE(cg_cluster_fs_types)) ||
	       cg_fs_type_lacks(f_type) == CG_FS_REMOTE;
}

bool cg_state_dir_name(bool clustered,
		       bool shared_fs,
		       unsigned pnn,
		       char *name,
		       size_t len)
{
	bool per_node = clustered && shared_fs;

	if (per_node) {
		snprintf(name, len, "cacheguard.node%u", pnn);
	} else {
		snprintf(name, len, "cacheguard");
	}
	return per_node;
}

const char *cg_state_dir_untrusted(uint32_t uid, uint32_t mode)
{
	if (uid != 0) {
		return "not owned by root";
	}
	if ((mode & 022) != 0) {
		return "writable by group or others";
	}
	return NULL;
}

unsigned cg_dev_queue_value(const char *sysfs, dev_t dev, const char *name)
{
	static const char *const fmt[] = {
		"%s/dev/block/%u:%u/queue/%s",
		"%s/dev/block/%u:%u/../queue/%s",
	};
	unsigned v = 0;
	size_t i;

	for (i = 0; i < CG_ARRAY_SIZE(fmt) && v == 0; i++) {
		char path[256];
		FILE *f = NULL;
		int len;

		len = snprintf(path, sizeof(path), fmt[i],
			       sysfs != NULL ? sysfs : "/sys",
			       major(dev), minor(dev), name);
		if (len < 0 || (size_t)len >= sizeof(path)) {
			return 0;
		}
		f = fopen(path, "re");
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

struct cg_dev *cg_dev_get(struct cg_devs *t, dev_t dev)
{
	struct cg_dev *v = NULL;
	size_t i;

	for (i = 0; i < t->n; i++) {
		if (t->v[i].dev == dev) {
			return &t->v[i];
		}
	}
	v = realloc(t->v, (t->n + 1) * sizeof(*v));
	if (v == NULL) {
		return NULL;
	}
	t->v = v;
	v[t->n] = (struct cg_dev){
		.dev = dev,
		.readahead = 1024ULL * cg_dev_queue_value(t->sysfs, dev,
							  "read_ahead_kb"),
		.max_request = 1024ULL * cg_dev_queue_value(t->sysfs, dev,
							    "max_sectors_kb"),
	};
	return &v[t->n++];
}

unsigned cg_dev_lacks(struct cg_devs *t, dev_t dev)
{
	struct cg_dev *d = cg_dev_get(t, dev);

	if (d == NULL) {
		return CG_FS_NO_DONTCACHE | CG_FS_NO_DIRECT |
		       CG_FS_NO_DONTCACHE_WRITE;
	}
	return d->flags & ~CG_DEV_PROBED;
}

bool cg_dev_learn(struct cg_devs *t, dev_t dev, unsigned flag)
{
	struct cg_dev *d = cg_dev_get(t, dev);

	if (d == NULL || (d->flags & flag) == flag) {
		return false;
	}
	d->flags |= flag;
	return true;
}

uint64_t cg_dev_readahead(struct cg_devs *t, dev_t dev)
{
	struct cg_dev *d = cg_dev_get(t, dev);

	return d != NULL ? d->readahead : 0;
}

uint64_t cg_dev_max_request(struct cg_devs *t, dev_t dev)
{
	struct cg_dev *d = cg_dev_get(t, dev);

	return d != NULL ? d->max_request : 0;
}

bool cg_dev_probe(struct cg_devs *t,
		  const struct cg_sys *sys,
		  dev_t dev,
		  int fd,
		  bool may_reopen)
{
	struct cg_dev *d = cg_dev_get(t, dev);
	char byte = 0;
	uint64_t f_type = 0;
	enum cg_probe probe;
	unsigned lacks = 0;
	int dfd, err = 0;

	if (d == NULL || (d->flags & CG_DEV_PROBED) ||
	    cg_sys_fs_type(sys, fd, &f_type) != 0) {
		return false;
	}
	if (sys->preadv2(fd, &byte, 1, 0, CG_RWF_DONTCACHE) == -1) {
		err = errno;
	}
	probe = cg_probe_uncached(err, may_reopen, f_type, &lacks);
	if (probe == CG_PROBE_NO_ANSWER) {
		return false;
	}
	if (probe == CG_PROBE_REOPEN) {
		dfd = cg_sys_reopen_direct(sys, fd);
		lacks |= cg_probe_direct(dfd == -1 ? errno : 0);
		if (dfd != -1) {
			close(dfd);
		}
	}
	d->flags |= CG_DEV_PROBED | lacks;
	return true;
}

/* Whether dirfd may hold lock files; if not, why in *bad */
static bool cg_state_dir_trusted(int dirfd,
				 bool parent,
				 struct cg_untrusted *bad)
{
	struct stat st;

	if (fstat(dirfd, &st) != 0) {
		return false;
	}
	bad->why = cg_state_dir_untrusted((uint32_t)st.st_uid,
					  (uint32_t)st.st_mode);
	if (bad->why == NULL) {
		return true;
	}
	bad->parent = parent;
	bad->uid = (uint32_t)st.st_uid;
	bad->mode = (uint32_t)st.st_mode & 07777;
	errno = EPERM;
	return false;
}

int cg_state_file_open(const char *state,
		       const char *dir,
		       const char *name,
		       struct cg_untrusted *bad)
{
	int parentfd, dirfd, fd = -1;
	int err;

	bad->why = NULL;
	parentfd = open(state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (parentfd == -1) {
		return -1;
	}
	if (!cg_state_dir_trusted(parentfd, true, bad) ||
	    (mkdirat(parentfd, dir, 0700) != 0 && errno != EEXIST)) {
		close(parentfd);
		return -1;
	}
	dirfd = openat(parentfd, dir,
		       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(parentfd);
	if (dirfd == -1) {
		return -1;
	}
	if (cg_state_dir_trusted(dirfd, false, bad)) {
		/* 0700: the lock files are nobody else's business */
		(void)fchmod(dirfd, 0700);
		fd = openat(dirfd, name,
			    O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	err = errno;
	close(dirfd);
	errno = err;
	return fd;
}
