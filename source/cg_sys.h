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

/*
 * The table takes 64-bit offsets, and the kernel must get them whole:
 * on a 32-bit build off_t is 32 bits unless _FILE_OFFSET_BITS=64 (wscript
 * defines it for everything it builds, as Samba does for the glue), and
 * pread(), preadv2(), mmap(), the lock files' struct flock and fstat()
 * then truncate every offset past 2 GiB. cg_sys.c includes this header,
 * so no build of the engine without the macro gets through.
 */
_Static_assert(sizeof(off_t) == 8,
	       "off_t must be 64 bits: compile with -D_FILE_OFFSET_BITS=64");

struct flock;

/*
 * Uncached buffered I/O (Linux 6.14+): the pages a read creates are
 * dropped when it completes. Older uapi headers lack the flag.
 */
#define CG_RWF_DONTCACHE 0x00000080

/*
 * Not a preadv2() flag, cg_pread_full()'s own: read in the same pieces,
 * each dropped (POSIX_FADV_DONTNEED) once read, whether it was cached
 * before or not: only for a stream the engine lets drop (drop_pieces)
 */
#define CG_READ_DROP 0x40000000

struct cg_sys {
	/* posix_fadvise(); returns 0 or an errno value, as it does */
	int (*fadvise)(int fd, uint64_t off, uint64_t len, int advice);
	/*
	 * Bytes of [off, off + len) in the page cache: cachestat(2), or
	 * mincore(2) on a mapping where the kernel lacks cachestat.
	 * Returns 0 or an errno value.
	 */
	int (*resident)(int fd, uint64_t off, uint64_t len, uint64_t *bytes);
	/* preadv2() into one buffer: bytes, or -1 and errno, as it does */
	ssize_t (*preadv2)(int fd,
			   void *buf,
			   size_t n,
			   uint64_t off,
			   int flags);
	/*
	 * The file's size (fstat()'s st_size): 0 or an errno value. NULL: a
	 * short direct read is taken for the end of the file.
	 */
	int (*file_size)(int fd, uint64_t *size);
	/* sync_file_range(); 0, or -1 and errno, as it does */
	int (*sync_file_range)(int fd, uint64_t off, uint64_t len,
			       unsigned flags);
	/* pwritev2() from one buffer: bytes, or -1 and errno */
	ssize_t (*pwritev2)(int fd,
			    const void *buf,
			    size_t n,
			    uint64_t off,
			    int flags);
	/*
	 * A new descriptor of the server's stream file (cg_share.c), or -1
	 * and errno. NULL: every stream drops as if alone.
	 */
	int (*share_open)(void);
	/*
	 * A new descriptor of the server's readahead budget file
	 * (cg_budget.c, cacheguard:readahead memory), or -1 and errno.
	 * NULL: every stream reads ahead on its own.
	 */
	int (*ra_open)(void);
	/*
	 * Copy n bytes within this process as the kernel copies a read
	 * out (cg_sys_copy). NULL: memcpy().
	 */
	void (*copy)(void *dst, const void *src, size_t n);
	/*
	 * fcntl(fd, cmd, fl) for the OFD lock commands of the server's lock
	 * files (F_OFD_GETLK, F_OFD_SETLK; cg_budget.c, cg_share.c): 0, or
	 * -1 and errno, as it does. NULL: fcntl(). Through cg_sys_lock.
	 */
	int (*lock)(int fd, int cmd, struct flock *fl);
	/* fcntl(fd, F_DUPFD_CLOEXEC, 0), as it does. NULL: fcntl(). */
	int (*dup)(int fd);
	/*
	 * The type of fd's filesystem (fstatfs()'s f_type): 0 or an errno
	 * value. NULL: fstatfs(). Through cg_sys_fs_type.
	 */
	int (*fs_type)(int fd, uint64_t *f_type);
	/*
	 * A second descriptor of fd's file opened with O_DIRECT, through
	 * /proc/self/fd: as the current user, so that permissions are
	 * checked again. -1 and errno. NULL: open() of /proc/self/fd/<fd>.
	 * Through cg_sys_reopen_direct.
	 */
	int (*reopen_direct)(int fd);
	/* Sleep ns nanoseconds. NULL: nanosleep(). Through cg_sys_sleep. */
	void (*sleep)(uint64_t ns);
};

extern const struct cg_sys cg_sys_linux;

/*
 * Copy n bytes of the module's own buffer into a caller's (smbd's) buffer
 * that the kernel sends next, through sys->copy or memcpy()
 */
void cg_sys_copy(const struct cg_sys *sys,
		 void *dst,
		 const void *src,
		 size_t n);

/*
 * sys's operation, or the real call where it is NULL; cg_sys_lock retries
 * EINTR (0, or -1 and errno)
 */
int cg_sys_lock(const struct cg_sys *sys, int fd, int cmd, struct flock *fl);
int cg_sys_dup(const struct cg_sys *sys, int fd);
int cg_sys_fs_type(const struct cg_sys *sys, int fd, uint64_t *f_type);
int cg_sys_reopen_direct(const struct cg_sys *sys, int fd);
void cg_sys_sleep(const struct cg_sys *sys, uint64_t ns);

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


/*
 * pwrite() of all n bytes over sys->pwritev2, retrying short writes and
 * EINTR: n, or -1 and errno, also after some bytes: the caller writes
 * the whole range again another way
 */
ssize_t cg_pwrite_full(const struct cg_sys *sys,
		       int fd,
		       const void *buf,
		       size_t n,
		       uint64_t off,
		       int flags);

/*
 * The calling thread's I/O priority set to prio (ioprio_set(2)'s
 * encoding) until cg_ioprio_leave(), for a job of smbd's thread pool,
 * whose threads serve every other request too. Returns the priority to
 * give back, or -1 when there is nothing to undo.
 */
int cg_ioprio_enter(unsigned prio);
void cg_ioprio_leave(int saved);

#endif /* CG_SYS_H */
