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
 * Devices (cg_dev.c)
 * ==================
 *
 * What each filesystem (st_dev) turned out to support, per smbd process:
 * found once by a probe (mode auto) or by the first failure, then
 * remembered, so that a filesystem without RWF_DONTCACHE costs one failed
 * read, not one per request. The table grows with the filesystems a
 * process meets (btrfs subvolumes and snapshots each have a device of
 * their own). With each device, two numbers of its block queue, read
 * once: the kernel's readahead and the largest request it takes.
 */

/* What a filesystem lacks, learnt from a probe or a failure */
#define CG_FS_NO_DONTCACHE 0x2
#define CG_FS_NO_DIRECT 0x4
/* What the filesystem lacks for writes; beside the CG_FS_NO_* flags */
#define CG_FS_NO_DONTCACHE_WRITE 0x8
/*
 * ... or from its type: a network or FUSE filesystem, whose files change
 * beyond the kernel's sight and whose ctime may come from a cache (NFS
 * answers fstat from its attribute cache, up to acregmax, 60 s by
 * default), so that direct mode's prefetch could serve bytes another
 * client has overwritten. auto serves its streams with dontneed there.
 */
#define CG_FS_REMOTE 0x10

/* CG_FS_REMOTE for a statfs f_type that is one, else 0 */
unsigned cg_fs_type_lacks(uint64_t f_type);

/*
 * Mode auto's probe of a filesystem, once per device and process: one
 * uncached read of a byte, then, where it is refused, an O_DIRECT reopen.
 * cg_probe_uncached takes the read's errno (0: it worked) and says what
 * comes next; *lacks gets the CG_FS_* flags learnt so far (with
 * cg_fs_type_lacks(f_type)). NO_ANSWER: the read failed for another
 * reason (EBADF: a descriptor opened for writing only), or a reopen is
 * needed but not allowed now (may_reopen false: smbd holds a lease on the
 * file, which a second open would break); the next file asks again.
 * cg_probe_direct takes the reopen's errno (0: it opened) and returns
 * the flag it teaches.
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
 * Whether a filesystem of f_type may be mounted by other machines too: a
 * network or FUSE one, or a cluster filesystem (GPFS, GFS2, OCFS2). The
 * module's lock files must not be on one (every node of a
 * cluster would share them).
 */
bool cg_fs_type_shared(uint64_t f_type);

/*
 * The module's directory in smbd's state directory, into name (len
 * bytes): "cacheguard", which is the node's own; where smbd is clustered
 * and the state directory is on a filesystem other nodes mount too
 * (shared_fs: cg_fs_type_shared; a mistake in a CTDB cluster, which would
 * make every node share one direct memory budget and take the other
 * nodes' streams for its own), "cacheguard.node<pnn>", so that its files
 * stay per node. true for the second, which the caller logs.
 */
bool cg_state_dir_name(bool clustered,
		       bool shared_fs,
		       unsigned pnn,
		       char *name,
		       size_t len);

/*
 * Whether a directory of the module's lock files, or the state directory
 * above it, may be used: root's (uid), and writable by nobody else
 * (mode). Another user who could create, replace or hold a lock file
 * there could make every smbd process wait for it, or lie to it about
 * what memory the others hold. NULL, or why not in words for the log.
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
 * A number from dev's block queue under sysfs ("read_ahead_kb",
 * "max_sectors_kb", "logical_block_size"), for a disk or a partition (whose
 * queue is its disk's); 0 when there is none (tmpfs, btrfs and others
 * without a queue of their own). sysfs NULL: "/sys".
 */
unsigned cg_dev_queue_value(const char *sysfs, dev_t dev, const char *name);

/* The entry of dev, made on first use; NULL only without memory */
struct cg_dev *cg_dev_get(struct cg_devs *t, dev_t dev);

/*
 * The CG_FS_NO_* and CG_FS_REMOTE flags dev is known to have; without
 * memory for its entry, that it lacks every fast path (its streams read
 * through the next module)
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
 * Mode auto's probe of dev, through the descriptor fd of one of its files,
 * once per device and process (cg_probe_uncached, cg_probe_direct):
 * the filesystem's type (sys->fs_type: network and FUSE ones are
 * CG_FS_REMOTE), one uncached read of a byte, then, where that is
 * refused, an O_DIRECT reopen (sys->reopen_direct) when may_reopen.
 * True when it found the answer now (the caller logs the mode auto
 * resolves to); false when it was known already or there is no answer
 * yet (the type unknown, a read that failed for another reason, a reopen
 * not allowed now): the next file asks again.
 */
bool cg_dev_probe(struct cg_devs *t,
		  const struct cg_sys *sys,
		  dev_t dev,
		  int fd,
		  bool may_reopen);

#endif /* CG_DEV_H */
