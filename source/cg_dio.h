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
 * O_DIRECT wants offset, length and buffer aligned to the device: a
 * request is widened, read, and trimmed back, short at EOF as pread().
 */

/* Widened read for a request: [off, off + len) covers it, both aligned */
struct cg_dio_plan {
	uint64_t off;
	size_t len;
	size_t skip;	/* where the request starts in the widened read */
};

/*
 * statx's STATX_DIOALIGN when given (offset 0: no O_DIRECT, returns 0),
 * else the logical block size, else 4096; not powers of two are ignored
 */
size_t cg_dio_alignment(bool have_dioalign,
			uint32_t dio_mem_align,
			uint32_t dio_offset_align,
			uint32_t logical_block_size);

/* cg_dio_alignment for fd on dev: statx, else dev's logical block size */
size_t cg_dio_fd_alignment(int fd, dev_t dev);

/* Before an O_DIRECT open: a kernel oplock, no alignment, or CG_DIRECT_OK */
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
 * A request read with O_DIRECT into the caller's own buffer: the body,
 * [off, off + body), goes to buf + shift (aligned) and is moved down once
 * read; the tail goes through a bounce of tail.len bytes.
 */
struct cg_dio_inplace {
	size_t n;
	size_t shift;
	size_t body;
	struct cg_dio_plan tail;	/* [off + body, off + n), widened */
};

/* false when off is unaligned or no aligned block fits: use a bounce */
bool cg_dio_inplace(uint64_t off,
		    size_t n,
		    uintptr_t buf,
		    size_t align,
		    struct cg_dio_inplace *p);

/*
 * Whether this kernel release pins an O_DIRECT read's pages (FOLL_PIN,
 * 6.5+). smbd forks without waiting for its pool, and with plain
 * references a fork during the read leaves the parent a copy-on-write
 * page the device never wrote: only then may a read go into smbd's own
 * buffer. false for a release it cannot read.
 */
bool cg_dio_pins_pages(const char *release);

/* cg_dio_pins_pages of the running kernel, asked once */
bool cg_dio_kernel_pins_pages(void);

/* An aligned read of len bytes at off into buf: bytes, or -1 and errno */
typedef ssize_t (*cg_dio_read_fn)(void *ctx,
				  uint8_t *buf,
				  size_t len,
				  uint64_t off);

/* Carry out plan p: the request's bytes (fewer at EOF), or -1 and errno */
ssize_t cg_dio_read_inplace(const struct cg_dio_inplace *p,
			    uint8_t *buf,
			    uint64_t off,
			    uint8_t *bounce,
			    cg_dio_read_fn read,
			    void *ctx);

/*
 * An O_DIRECT read of n bytes at aligned off, to n or to end of file. A
 * short read before the end (FUSE direct_io) is EIO, so the read goes
 * again through the next module rather than look like the end.
 */
ssize_t cg_dio_read_full(const struct cg_sys *sys,
			 int fd,
			 void *buf,
			 size_t n,
			 uint64_t off,
			 size_t align);

#endif /* CG_DIO_H */
