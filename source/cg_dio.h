/*
 * vfs_cacheguard engine: direct I/O: alignment, reads, a job's work
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

#ifndef CG_DIO_H
#define CG_DIO_H

#include "cg_file.h"

/*
 * O_DIRECT wants the file offset, the length and the buffer aligned to
 * the device (512 or 4096 bytes). A request is widened to the alignment,
 * read, and trimmed back to exactly the bytes asked for, short at end of
 * file as pread() would be.
 */

/* Widened read for a request: [off, off + len) covers it, both aligned */
struct cg_dio_plan {
	uint64_t off;
	size_t len;
	size_t skip;	/* where the request starts in the widened read */
};

/*
 * The alignment to use: the statx STATX_DIOALIGN answer when the kernel
 * gave one (0 there means no O_DIRECT for the file: returns 0), else the
 * device's logical block size, else 4096. Values that are not powers of
 * two are ignored.
 */
size_t cg_dio_alignment(bool have_dioalign,
			uint32_t dio_mem_align,
			uint32_t dio_offset_align,
			uint32_t logical_block_size);

/*
 * Whether direct reads of a file may be set up, before its O_DIRECT open:
 * smbd holds a kernel oplock on it (kernel_oplock: the open would break
 * it), or the kernel gives it no direct-I/O alignment (align 0,
 * cg_dio_alignment), or CG_DIRECT_OK
 */
enum cg_direct_fail cg_direct_may_open(bool kernel_oplock, size_t align);

/* Why, in words for the log */
const char *cg_direct_fail_name(enum cg_direct_fail fail);

/* open(O_DIRECT) of a file failed with err: the file, or its filesystem? */
enum cg_direct_fail cg_direct_open_failure(int err);

/* false when align is not a power of two or the range overflows */
bool cg_dio_plan(uint64_t off, size_t n, size_t align, struct cg_dio_plan *p);

/* Bytes of the request in a widened read that returned got bytes */
size_t cg_dio_trim(const struct cg_dio_plan *p, size_t n, size_t got);

/*
 * A request read with O_DIRECT into the caller's own buffer, so that it
 * costs no bounce buffer: the body, [off, off + body), goes to buf +
 * shift, the first aligned address in buf, and is moved down by shift
 * once read; the rest of the request, the tail, is read through a bounce
 * of tail.len bytes (less than three alignment units).
 */
struct cg_dio_inplace {
	size_t n;
	size_t shift;
	size_t body;
	struct cg_dio_plan tail;	/* [off + body, off + n), widened */
};

/*
 * The in-place plan for n bytes at off into the buffer at address buf;
 * false when off is not aligned or n leaves no aligned block after the
 * shift: read the request through a bounce buffer (cg_dio_plan).
 */
bool cg_dio_inplace(uint64_t off,
		    size_t n,
		    uintptr_t buf,
		    size_t align,
		    struct cg_dio_inplace *p);

/*
 * Whether a kernel of this release (uname's, "6.1.0-28-amd64") pins the
 * pages of an O_DIRECT read's buffer (FOLL_PIN, block I/O since 6.5).
 * smbd forks (dfree, quota, print commands) without waiting for its
 * thread pool, and with plain page references a fork during the read
 * leaves the parent a copy-on-write page the device never wrote. Only
 * then may a read go into smbd's own buffer (cg_dio_inplace); the
 * module's own buffers are never inherited (cg_buf.c). false for a
 * release it cannot read.
 */
bool cg_dio_pins_pages(const char *release);

/*
 * The bounce buffer a request read on its own needs, in bytes, and
 * whether direct memory must have room for it (*charge): in place, its
 * tail's few blocks, charged nothing, so that a MISS stays direct when
 * the prefetch of a few streams holds all of the budget; else the
 * widened read of plan, charged.
 */
size_t cg_dio_read_bounce(bool inplace,
			  const struct cg_dio_inplace *in,
			  const struct cg_dio_plan *plan,
			  bool *charge);

/* An aligned read of len bytes at off into buf: bytes, or -1 and errno */
typedef ssize_t (*cg_dio_read_fn)(void *ctx,
				  uint8_t *buf,
				  size_t len,
				  uint64_t off);

/*
 * Carry out plan p for the request at off into buf, bounce holding
 * p->tail.len bytes: the request's bytes (fewer at end of file), or -1
 * and errno as read left it
 */
ssize_t cg_dio_read_inplace(const struct cg_dio_inplace *p,
			    uint8_t *buf,
			    uint64_t off,
			    uint8_t *bounce,
			    cg_dio_read_fn read,
			    void *ctx);

/*
 * An O_DIRECT read of n bytes at an aligned off into buf, to n or to the
 * end of the file, which a partial block or nothing marks. A short read
 * before the file's end (FUSE with direct_io) fails with EIO, so that
 * the read goes again through the next module and the client never
 * takes it for the end of the file.
 */
ssize_t cg_dio_read_full(const struct cg_sys *sys,
			 int fd,
			 void *buf,
			 size_t n,
			 uint64_t off,
			 size_t align);

#endif /* CG_DIO_H */
