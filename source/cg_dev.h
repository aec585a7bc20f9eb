/*
 * vfs_cacheguard engine: what each device supports (cg_dev.c)
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

/* Beside the CG_FS_NO_* flags (cg_file.h, cg_write.h): probed already */
#define CG_DEV_PROBED 0x1

struct cg_dev {
	dev_t dev;
	unsigned flags;		/* CG_DEV_PROBED, CG_FS_* learnt */
	uint64_t readahead;	/* read_ahead_kb, in bytes; 0: unknown */
	uint64_t max_request;	/* max_sectors_kb, in bytes; 0: unknown */
	int stat_fd;		/* its disk's stat; -1: none, -2: not open */
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

/*
 * Who else reads a device (stream pacing, cg_pace.h). The kernel counts
 * the sectors each disk has read, in its stat (for a partition, its
 * disk's: a neighbour on another partition waits in the same queue); a
 * stream's read notes the count before and after, and what this
 * process's streams sent and got back meanwhile: the rest were others'
 * reads, other smbd processes' copies among them. Only this process's
 * reads can be told exactly: a read of its own still out when the count
 * is taken may or may not have been counted, so it is taken for counted
 * (others are never seen where there were none), and a copy in another
 * process has always come back when its bytes are counted (why the
 * counts are not shared between processes: there every other stream's
 * reads out would hide a neighbour's small ones). Devices without a
 * queue of their own (tmpfs, NFS, btrfs over several disks) have no
 * stat: -1.
 *
 * dev's stat, opened on first use and kept for the process's life;
 * -1: none
 */
int cg_dev_stat_fd(struct cg_devs *t, dev_t dev);

/*
 * The device's turn: a descriptor of its own on dev's stat (through
 * /proc/self/fd, so that each is an open file of its own and every
 * process can open it: the stat is everybody's to read), for one stream.
 * A paced stream that has met others' reads holds the turn (flock(),
 * LOCK_EX) while a piece is out (cg_djob.c): of all the paced streams on
 * a disk, in every smbd process, one piece is at the device at once, so
 * a neighbour's read waits for one, and while a stream holds it the
 * others' bytes are nobody's but the neighbours'. -1 and errno: none
 * (no stat; the caller reads without a turn).
 */
int cg_dev_turn_open(struct cg_devs *t, dev_t dev);

/*
 * Two counts of others' bytes as one (the pieces of a read, each counted
 * while it held the turn): -1 if either was not counted; the bytes seen;
 * CG_DEV_HIDDEN when none were seen and either could not tell; 0
 */
int64_t cg_dev_others_sum(int64_t a, int64_t b);

/* The bytes fd (a stat) says its disk has read; false: not readable */
bool cg_dev_stat_bytes(int fd, uint64_t *bytes);

/* This process's streams' reads of n bytes: sent to a device, and back */
void cg_dev_own_sent(uint64_t n);
void cg_dev_own_done(uint64_t n);

/*
 * Before a read: what to note (in this order: done first, so that no
 * read of ours that comes back after the first stat is missed)
 */
struct cg_dev_count {
	int fd;			/* -1: not counted */
	uint64_t done0;
	uint64_t dev0;
};
void cg_dev_count_start(struct cg_dev_count *c, int fd);

/*
 * After it: others' bytes the device read meanwhile, at least (this
 * process's reads sent by now count as its own, back or not); -1 when
 * not counted; CG_DEV_HIDDEN when none were seen but some of ours were
 * still out, which may have hidden them
 */
#define CG_DEV_HIDDEN (-2)
int64_t cg_dev_count_others(const struct cg_dev_count *c);
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
