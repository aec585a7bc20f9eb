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

#ifndef CG_DEV_H
#define CG_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cg_sys;

/*
 * What each filesystem (st_dev) turned out to support, per smbd process:
 * found once by a probe (mode auto) or by the first failure, then
 * remembered, so that a filesystem without RWF_DONTCACHE costs one failed
 * read, not one per request. With each device, two numbers of its block
 * queue, read once: the kernel's readahead and the largest request.
 */

/* What a filesystem lacks, learnt from a probe or a failure */
#define CG_FS_NO_DONTCACHE 0x2
#define CG_FS_NO_DIRECT 0x4
#define CG_FS_NO_DONTCACHE_WRITE 0x8
/*
 * ... or from its type: a network or FUSE filesystem, whose files change
 * beyond the kernel's sight and whose ctime may come from a cache (NFS's
 * attribute cache), so that direct mode's prefetch could serve bytes
 * another client has overwritten: auto never reads direct there
 */
#define CG_FS_REMOTE 0x10

/* CG_FS_REMOTE for a statfs f_type that is one, else 0 */
unsigned cg_fs_type_lacks(uint64_t f_type);

/*
 * The verdicts of mode auto's probe (cg_dev_probe). cg_probe_uncached
 * takes the uncached read's errno (0: it worked) and says what comes
 * next; *lacks gets the CG_FS_* flags learnt so far. NO_ANSWER: the read
 * failed for another reason (EBADF: a write-only descriptor), or a
 * reopen is needed but not allowed now (may_reopen false). cg_probe_direct
 * takes the reopen's errno (0: it opened) and returns the flag it teaches.
 */
enum cg_probe {
	CG_PROBE_NO_ANSWER = 0,
	CG_PROBE_DONE,		/* *lacks is the answer */
	CG_PROBE_REOPEN,	/* try an O_DIRECT reopen (cg_probe_direct) */
};

enum cg_probe cg_probe_uncached(int err,
				bool may_reopen,
				uint64_t f_type,
				unsigned *lacks);
unsigned cg_probe_direct(int err);

/*
 * Whether a filesystem of f_type may be mounted by other machines too
 * (network, FUSE, GPFS, GFS2, OCFS2), where every node of a cluster would
 * share the module's lock files
 */
bool cg_fs_type_shared(uint64_t f_type);

/*
 * The module's directory in smbd's state directory, into name (len
 * bytes): "cacheguard"; or, where smbd is clustered and the state
 * directory is on a filesystem other nodes mount too (shared_fs),
 * "cacheguard.node<pnn>", so that its lock files stay per node. true
 * for the second, which the caller logs.
 */
bool cg_state_dir_name(bool clustered,
		       bool shared_fs,
		       unsigned pnn,
		       char *name,
		       size_t len);

/*
 * Whether a directory of the module's lock files, or the state directory
 * above it, may be used: root's (uid), and writable by nobody else
 * (mode), since whoever can create or hold a lock file there can make
 * every smbd process wait. NULL, or why not in words for the log.
 */
const char *cg_state_dir_untrusted(uint32_t uid, uint32_t mode);

/* Beside the CG_FS_* flags: probed already */
#define CG_DEV_PROBED 0x1

struct cg_dev {
	dev_t dev;
	unsigned flags;		/* CG_DEV_PROBED, CG_FS_* learnt */
	uint64_t readahead;	/* read_ahead_kb, in bytes; 0: unknown */
	uint64_t max_request;	/* max_sectors_kb, in bytes; 0: unknown */
};

struct cg_devs {
	struct cg_dev *v;
	size_t n;
	/* where sysfs is: NULL for "/sys"; a unit test's own tree */
	const char *sysfs;
};

/* Free the table's entries; it can be used again */
void cg_devs_free(struct cg_devs *t);

/*
 * A number from dev's block queue under sysfs (NULL: "/sys"), for a disk
 * or a partition (whose queue is its disk's); 0 when there is none
 * (tmpfs, btrfs and others without a queue of their own)
 */
unsigned cg_dev_queue_value(const char *sysfs, dev_t dev, const char *name);

/* The entry of dev, made on first use; NULL only without memory */
struct cg_dev *cg_dev_get(struct cg_devs *t, dev_t dev);

/*
 * The CG_FS_* flags dev is known to have; without memory for its entry,
 * that it lacks every fast path
 */
unsigned cg_dev_lacks(struct cg_devs *t, dev_t dev);

/*
 * Remember that dev lacks flag's feature: true the first time, when the
 * caller logs it (once per process)
 */
bool cg_dev_learn(struct cg_devs *t, dev_t dev, unsigned flag);

/* read_ahead_kb and max_sectors_kb of dev in bytes, 0: unknown */
uint64_t cg_dev_readahead(struct cg_devs *t, dev_t dev);

uint64_t cg_dev_max_request(struct cg_devs *t, dev_t dev);

/*
 * Mode auto's probe of dev through fd, one of its files, once per device
 * and process: the filesystem's type, one uncached read of a byte, and an
 * O_DIRECT reopen when may_reopen (smbd holds no lease a second open
 * would break). True when it found the answer now (the caller logs it);
 * false when it was known already or there is no answer yet: the next
 * file asks again.
 */
bool cg_dev_probe(struct cg_devs *t,
		  const struct cg_sys *sys,
		  dev_t dev,
		  int fd,
		  bool may_reopen);

#endif /* CG_DEV_H */
