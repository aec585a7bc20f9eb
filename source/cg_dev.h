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
 * What each filesystem (st_dev) supports, per smbd process: found once by
 * a probe (mode auto) or the first failure, then remembered; and two
 * numbers of its block queue: the readahead and the largest request.
 */

/* What a filesystem lacks, learnt from a probe or a failure */
#define CG_FS_NO_DONTCACHE 0x2
#define CG_FS_NO_DIRECT 0x4
#define CG_FS_NO_DONTCACHE_WRITE 0x8
/* ... or from its type: network or FUSE, where auto never reads direct */
#define CG_FS_REMOTE 0x10

/* CG_FS_REMOTE for a statfs f_type that is one, else 0 */
unsigned cg_fs_type_lacks(uint64_t f_type);

/*
 * Mode auto's probe (cg_dev_probe): cg_probe_uncached takes the uncached
 * read's errno (0: it worked), sets the CG_FS_* flags learnt so far and
 * says what is next; NO_ANSWER: another error (EBADF on a write-only
 * descriptor), or a reopen not allowed now. cg_probe_direct takes the
 * reopen's errno and returns the flag it teaches.
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

/* Whether other machines may mount it too (network, FUSE, GPFS, ...) */
bool cg_fs_type_shared(uint64_t f_type);

/*
 * The module's directory in the state directory: "cacheguard", or where
 * smbd is clustered on a shared state directory "cacheguard.node<pnn>",
 * for which it returns true (the caller logs it)
 */
bool cg_state_dir_name(bool clustered,
		       bool shared_fs,
		       unsigned pnn,
		       char *name,
		       size_t len);

/*
 * Whether a lock directory may be used: root's and writable by nobody
 * else, who could make every smbd wait. NULL, or why not for the log.
 */
const char *cg_state_dir_untrusted(uint32_t uid, uint32_t mode);

/* A lock directory cg_state_dir_untrusted refused, for the log */
struct cg_untrusted {
	const char *why;	/* NULL: none was */
	bool parent;		/* the state directory, else dir in it */
	uint32_t uid;
	uint32_t mode;
};

/*
 * The lock file name (0600) in directory dir (made 0700) of the state
 * directory, both trusted (cg_state_dir_untrusted); -1 and errno, EPERM
 * with *bad filled for an untrusted one
 */
int cg_state_file_open(const char *state,
		       const char *dir,
		       const char *name,
		       struct cg_untrusted *bad);

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
	const char *sysfs;	/* NULL: "/sys"; a unit test's own tree */
};

/* A number of dev's (or its disk's) block queue; 0 when there is none */
unsigned cg_dev_queue_value(const char *sysfs, dev_t dev, const char *name);

/* The entry of dev, made on first use; NULL only without memory */
struct cg_dev *cg_dev_get(struct cg_devs *t, dev_t dev);

/* dev's CG_FS_* flags; without memory, that it lacks every fast path */
unsigned cg_dev_lacks(struct cg_devs *t, dev_t dev);

/* Remember dev lacks flag: true the first time (the caller logs it) */
bool cg_dev_learn(struct cg_devs *t, dev_t dev, unsigned flag);

/* read_ahead_kb and max_sectors_kb of dev in bytes, 0: unknown */
uint64_t cg_dev_readahead(struct cg_devs *t, dev_t dev);

uint64_t cg_dev_max_request(struct cg_devs *t, dev_t dev);

/*
 * Mode auto's probe of dev through fd, once per device and process: the
 * filesystem type, an uncached one-byte read, and an O_DIRECT reopen if
 * may_reopen (no lease to break). True when it found the answer now.
 */
bool cg_dev_probe(struct cg_devs *t,
		  const struct cg_sys *sys,
		  dev_t dev,
		  int fd,
		  bool may_reopen);

#endif /* CG_DEV_H */
