/*
 * vfs_cacheguard engine: what each device supports (cg_dev.h)
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
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/sysmacros.h>

#include "cg_dev.h"
#include "cg_file.h"
#include "cg_sys.h"
#include "cg_write.h"

void cg_devs_free(struct cg_devs *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		if (t->v[i].stat_fd >= 0) {
			close(t->v[i].stat_fd);
		}
	}
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

unsigned cg_dev_queue_value(const char *sysfs, dev_t dev, const char *name)
{
	static const char *const fmt[] = {
		"%s/dev/block/%u:%u/queue/%s",
		"%s/dev/block/%u:%u/../queue/%s",
	};
	unsigned v = 0;
	size_t i;

	for (i = 0; i < sizeof(fmt) / sizeof(fmt[0]) && v == 0; i++) {
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
		.stat_fd = -2,
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
	return d->flags & (CG_FS_NO_DONTCACHE | CG_FS_NO_DIRECT |
			   CG_FS_NO_DONTCACHE_WRITE | CG_FS_REMOTE);
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

	if (d == NULL || (d->flags & CG_DEV_PROBED)) {
		return false;
	}
	if (cg_sys_fs_type(sys, fd, &f_type) != 0) {
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

int cg_dev_stat_fd(struct cg_devs *t, dev_t dev)
{
	/* a partition's disk first: the partition has a stat of its own */
	static const char *const fmt[] = {
		"%s/dev/block/%u:%u/../stat",
		"%s/dev/block/%u:%u/stat",
	};
	struct cg_dev *d = cg_dev_get(t, dev);
	uint64_t bytes;
	size_t i;

	if (d == NULL) {
		return -1;
	}
	for (i = 0; i < sizeof(fmt) / sizeof(fmt[0]) && d->stat_fd == -2;
	     i++) {
		char path[256];
		int len, fd;

		len = snprintf(path, sizeof(path), fmt[i],
			       t->sysfs != NULL ? t->sysfs : "/sys",
			       major(dev), minor(dev));
		if (len < 0 || (size_t)len >= sizeof(path)) {
			break;
		}
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd == -1) {
			continue;
		}
		if (!cg_dev_stat_bytes(fd, &bytes)) {
			close(fd);
			continue;
		}
		d->stat_fd = fd;
	}
	if (d->stat_fd == -2) {
		d->stat_fd = -1;
	}
	return d->stat_fd;
}

int cg_dev_turn_open(struct cg_devs *t, dev_t dev)
{
	char path[64];
	int fd = cg_dev_stat_fd(t, dev);

	if (fd < 0) {
		errno = ENOENT;
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, O_RDONLY | O_CLOEXEC);
}

int64_t cg_dev_others_sum(int64_t a, int64_t b)
{
	if (a == -1 || b == -1) {
		return -1;
	}
	if (a > 0 || b > 0) {
		return (a > 0 ? a : 0) + (b > 0 ? b : 0);
	}
	return a == CG_DEV_HIDDEN || b == CG_DEV_HIDDEN ? CG_DEV_HIDDEN : 0;
}

bool cg_dev_stat_bytes(int fd, uint64_t *bytes)
{
	char buf[256];
	uint64_t ios, merges, sectors;
	ssize_t n;

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0) {
		return false;
	}
	buf[n] = '\0';
	/* read I/Os, read merges, read sectors (512 bytes), ... */
	if (sscanf(buf, "%" SCNu64 " %" SCNu64 " %" SCNu64,
		   &ios, &merges, &sectors) != 3) {
		return false;
	}
	*bytes = sectors * 512;
	return true;
}

/* What this process's streams sent and got back, bytes, all threads' */
static struct {
	uint64_t sent;
	uint64_t done;
} cg_dev_own;

void cg_dev_own_sent(uint64_t n)
{
	__atomic_add_fetch(&cg_dev_own.sent, n, __ATOMIC_SEQ_CST);
}

void cg_dev_own_done(uint64_t n)
{
	__atomic_add_fetch(&cg_dev_own.done, n, __ATOMIC_SEQ_CST);
}

void cg_dev_count_start(struct cg_dev_count *c, int fd)
{
	*c = (struct cg_dev_count){.fd = fd};
	if (fd < 0) {
		return;
	}
	c->done0 = __atomic_load_n(&cg_dev_own.done, __ATOMIC_SEQ_CST);
	if (!cg_dev_stat_bytes(fd, &c->dev0)) {
		c->fd = -1;
	}
}

int64_t cg_dev_count_others(const struct cg_dev_count *c)
{
	uint64_t dev1, sent1, done1, own;

	if (c->fd < 0 || !cg_dev_stat_bytes(c->fd, &dev1) || dev1 < c->dev0) {
		return -1;
	}
	sent1 = __atomic_load_n(&cg_dev_own.sent, __ATOMIC_SEQ_CST);
	done1 = __atomic_load_n(&cg_dev_own.done, __ATOMIC_SEQ_CST);
	own = sent1 - c->done0;
	if (dev1 - c->dev0 > own) {
		return (int64_t)(dev1 - c->dev0 - own);
	}
	/* ours still out may have hidden others' */
	return sent1 != done1 ? CG_DEV_HIDDEN : 0;
}
