/*
 * vfs_cacheguard engine: the syscalls the policy makes, as a table that
 * the unit tests replace with a recording fake.
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

#ifndef CG_SYS_H
#define CG_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* 64-bit offsets: a build without _FILE_OFFSET_BITS=64 must not get through */
_Static_assert(sizeof(off_t) == 8,
	       "off_t must be 64 bits: compile with -D_FILE_OFFSET_BITS=64");

struct flock;

/* Uncached buffered I/O (Linux 6.14+), which older uapi headers lack */
#define CG_RWF_DONTCACHE 0x00000080

/* cg_pread_full()'s own flag: each piece is dropped (DONTNEED) once read */
#define CG_READ_DROP 0x40000000

/*
 * Each operation returns as the call it stands for does: an errno value,
 * or -1 and errno. Those reached through a cg_sys_* function may be
 * NULL, and are in cg_sys_linux: the real call is made then.
 */
struct cg_sys {
	int (*fadvise)(int fd, uint64_t off, uint64_t len, int advice);
	/* bytes of the range in the page cache: cachestat(2) or mincore(2) */
	int (*resident)(int fd, uint64_t off, uint64_t len, uint64_t *bytes);
	ssize_t (*preadv2)(int fd,
			   void *buf,
			   size_t n,
			   uint64_t off,
			   int flags);
	/* fstat()'s st_size; NULL: a short direct read is the end of file */
	int (*file_size)(int fd, uint64_t *size);
	int (*sync_file_range)(int fd, uint64_t off, uint64_t len,
			       unsigned flags);
	ssize_t (*pwritev2)(int fd,
			    const void *buf,
			    size_t n,
			    uint64_t off,
			    int flags);
	/* a new descriptor of the stream file; NULL: streams drop alone */
	int (*share_open)(void);
	/* ... of the readahead budget file; NULL: no stream keeps it */
	int (*ra_open)(void);
	/* copy as the kernel copies a read out (cg_sys_copy); NULL: memcpy */
	void (*copy)(void *dst, const void *src, size_t n);
	/* fcntl() for the lock files' F_OFD_GETLK and F_OFD_SETLK */
	int (*lock)(int fd, int cmd, struct flock *fl);
	int (*dup)(int fd);	/* fcntl(fd, F_DUPFD_CLOEXEC, 0) */
	int (*fs_type)(int fd, uint64_t *f_type);	/* fstatfs's f_type */
	/* O_DIRECT open via /proc/self/fd, as the user: permissions again */
	int (*reopen_direct)(int fd);
	void (*sleep)(uint64_t ns);
};

extern const struct cg_sys cg_sys_linux;

/* Copy from the module's buffer into smbd's, which the kernel sends next */
void cg_sys_copy(const struct cg_sys *sys,
		 void *dst,
		 const void *src,
		 size_t n);

/* cg_sys_lock retries EINTR */
int cg_sys_lock(const struct cg_sys *sys, int fd, int cmd, struct flock *fl);
int cg_sys_dup(const struct cg_sys *sys, int fd);
int cg_sys_fs_type(const struct cg_sys *sys, int fd, uint64_t *f_type);
int cg_sys_reopen_direct(const struct cg_sys *sys, int fd);
void cg_sys_sleep(const struct cg_sys *sys, uint64_t ns);

/*
 * A descriptor of fd's file that can be read (mincore maps the file):
 * CG_SYS_SAME_FD where fd can, else a read-only reopen, -1 and errno
 */
#define CG_SYS_SAME_FD (-2)
int cg_sys_readable(int fd);

/*
 * pread() semantics over sys->preadv2: read until n bytes or end of
 * file, retrying EINTR; with CG_RWF_DONTCACHE or CG_READ_DROP in pieces
 * of at most 1 MiB. An error after some bytes is still -1 and errno: a
 * short count would tell the client that the file ends there.
 */
ssize_t cg_pread_full(const struct cg_sys *sys,
		      int fd,
		      void *buf,
		      size_t n,
		      uint64_t off,
		      int flags);

/* pwrite() of all n bytes: n, or -1 and errno even after some bytes */
ssize_t cg_pwrite_full(const struct cg_sys *sys,
		       int fd,
		       const void *buf,
		       size_t n,
		       uint64_t off,
		       int flags);

/*
 * The calling thread's I/O priority set to prio until cg_ioprio_leave();
 * returns the priority to give back, or -1 when there is nothing to undo
 */
int cg_ioprio_enter(unsigned prio);
void cg_ioprio_leave(int saved);

#endif /* CG_SYS_H */
