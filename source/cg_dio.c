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

#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* statx */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "cg_dio.h"
#include "cg_prefetch.h"
#include "cg_sys.h"
#include "cg_util.h"

size_t cg_dio_alignment(bool have_dioalign,
			uint32_t dio_mem_align,
			uint32_t dio_offset_align,
			uint32_t logical_block_size)
{
	if (have_dioalign && dio_offset_align == 0) {
		return 0;	/* the kernel says: no O_DIRECT for this file */
	}
	if (have_dioalign && cg_is_pow2(dio_offset_align)) {
		if (cg_is_pow2(dio_mem_align) &&
		    dio_mem_align > dio_offset_align) {
			return dio_mem_align;
		}
		return dio_offset_align;
	}
	if (cg_is_pow2(logical_block_size) && logical_block_size >= 512) {
		return logical_block_size;
	}
	return 4096;
}

#ifndef STATX_DIOALIGN
/*
 * Headers older than Linux 6.1 (RHEL 9, Ubuntu 22.04) know neither the
 * flag nor the fields; they follow stx_mnt_id, at 0x98 and 0x9c of the
 * kernel's struct.
 */
#define STATX_DIOALIGN 0x2000
#define CG_STATX_DIO_MEM(stx) (((const uint32_t *)(stx))[0x98 / 4])
#define CG_STATX_DIO_OFFSET(stx) (((const uint32_t *)(stx))[0x9c / 4])
#else
#define CG_STATX_DIO_MEM(stx) ((stx)->stx_dio_mem_align)
#define CG_STATX_DIO_OFFSET(stx) ((stx)->stx_dio_offset_align)
#endif

size_t cg_dio_fd_alignment(int fd, dev_t dev)
{
	struct statx stx = {0};
	unsigned lbs;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
	    (stx.stx_mask & STATX_DIOALIGN) != 0) {
		return cg_dio_alignment(true,
					CG_STATX_DIO_MEM(&stx),
					CG_STATX_DIO_OFFSET(&stx),
					0);
	}
	lbs = cg_dev_queue_value(NULL, dev, "logical_block_size");
	return cg_dio_alignment(false, 0, 0, lbs);
}

enum cg_direct_fail cg_direct_may_open(bool kernel_oplock, size_t align)
{
	if (kernel_oplock) {
		return CG_DIRECT_FAIL_LEASE;	/* this open only */
	}
	if (align == 0) {
		return CG_DIRECT_FAIL_FILE;	/* the kernel: not this file */
	}
	return CG_DIRECT_OK;
}

const char *cg_direct_fail_name(enum cg_direct_fail fail)
{
	switch (fail) {
	case CG_DIRECT_FAIL_FS:
		return "no O_DIRECT on the filesystem";
	case CG_DIRECT_FAIL_LEASE:
		return "smbd holds a kernel oplock on it, which a second "
		       "open would break";
	case CG_DIRECT_FAIL_ROOM:
		return "no room in direct memory for its prefetch";
	case CG_DIRECT_OK:
		return "set up";
	case CG_DIRECT_FAIL_FILE:
	default:
		return "no O_DIRECT for this file: no alignment, or no reopen";
	}
}

enum cg_direct_fail cg_direct_open_failure(int err)
{
	/* EINVAL: no O_DIRECT on the filesystem; the rest are the file's */
	return err == EINVAL ? CG_DIRECT_FAIL_FS : CG_DIRECT_FAIL_FILE;
}

bool cg_dio_plan(uint64_t off, size_t n, size_t align, struct cg_dio_plan *p)
{
	uint64_t mask = (uint64_t)align - 1;
	uint64_t end;

	if (!cg_is_pow2(align) || off > (uint64_t)INT64_MAX ||
	    n > (uint64_t)INT64_MAX - off) {
		return false;
	}
	if (n == 0) {
		*p = (struct cg_dio_plan){.off = off};
		return true;
	}
	end = off + n;
	if (end > (uint64_t)INT64_MAX - mask) {
		return false;	/* the widened end would not fit an off_t */
	}
	end = (end + mask) & ~mask;
	*p = (struct cg_dio_plan){
		.off = off & ~mask,
		.len = (size_t)(end - (off & ~mask)),
		.skip = (size_t)(off & mask),
	};
	return true;
}

size_t cg_dio_trim(const struct cg_dio_plan *p, size_t n, size_t got)
{
	/* none where the file ends before the request starts */
	return got <= p->skip ? 0 : CG_MIN(n, got - p->skip);
}

bool cg_dio_inplace(uint64_t off,
		    size_t n,
		    uintptr_t buf,
		    size_t align,
		    struct cg_dio_inplace *p)
{
	uint64_t mask = (uint64_t)align - 1;
	size_t shift;
	size_t body;

	if (!cg_is_pow2(align) || (off & mask) != 0 ||
	    off > (uint64_t)INT64_MAX || n > (uint64_t)INT64_MAX - off) {
		return false;
	}
	shift = (size_t)((align - (buf & mask)) & mask);
	if (n <= shift) {
		return false;
	}
	body = (size_t)((n - shift) & ~mask);
	if (body == 0) {
		return false;
	}
	*p = (struct cg_dio_inplace){
		.n = n,
		.shift = shift,
		.body = body,
	};
	return cg_dio_plan(off + body, n - body, align, &p->tail);
}

bool cg_dio_pins_pages(const char *release)
{
	unsigned major = 0, minor = 0;

	if (release == NULL || sscanf(release, "%u.%u", &major, &minor) != 2) {
		return false;
	}
	return major > 6 || (major == 6 && minor >= 5);
}

bool cg_dio_kernel_pins_pages(void)
{
	static int pins = -1;
	struct utsname u;

	if (pins == -1) {
		pins = uname(&u) == 0 && cg_dio_pins_pages(u.release);
	}
	return pins == 1;
}

bool cg_dio_read_plan(struct cg_dio_job *j,
		      bool pins,
		      struct cg_dio_plan *p,
		      size_t *bounce,
		      bool *charge)
{
	if (!cg_dio_plan(j->offset, j->count, j->align, p)) {
		return false;
	}
	j->inplace = pins && cg_dio_inplace(j->offset,
					    j->count,
					    (uintptr_t)j->buf,
					    j->align,
					    &j->plan);
	*charge = !j->inplace;
	*bounce = j->inplace ? j->plan.tail.len : p->len;
	return true;
}

ssize_t cg_dio_read_inplace(const struct cg_dio_inplace *p,
			    uint8_t *buf,
			    uint64_t off,
			    uint8_t *bounce,
			    cg_dio_read_fn read,
			    void *ctx)
{
	ssize_t got = read(ctx, buf + p->shift, p->body, off);
	size_t tail;

	if (got == -1) {
		return -1;
	}
	if (p->shift != 0 && got > 0) {
		memmove(buf, buf + p->shift, (size_t)got);
	}
	if ((size_t)got < p->body || p->tail.len == 0) {
		return got;	/* end of file, or nothing after the body */
	}
	got = read(ctx, bounce, p->tail.len, p->tail.off);
	if (got == -1) {
		return -1;
	}
	tail = cg_dio_trim(&p->tail, p->n - p->body, (size_t)got);
	memcpy(buf + p->body, bounce + p->tail.skip, tail);
	return (ssize_t)(p->body + tail);
}

ssize_t cg_dio_read_full(const struct cg_sys *sys,
			 int fd,
			 void *buf,
			 size_t n,
			 uint64_t off,
			 size_t align)
{
	uint64_t size = 0;
	size_t done = 0;

	while (done < n) {
		ssize_t ret = sys->preadv2(fd, (char *)buf + done, n - done,
					   off + done, 0);

		if (ret == -1 && errno == EINTR) {
			continue;
		}
		if (ret == -1) {
			return -1;
		}
		if (ret == 0) {
			break;
		}
		done += (size_t)ret;
		if (done % align != 0) {
			break;	/* no aligned read can follow */
		}
	}
	if (done < n && sys->file_size != NULL &&
	    sys->file_size(fd, &size) == 0 && off + done < size) {
		errno = EIO;
		return -1;
	}
	return (ssize_t)done;
}

/* cg_dio_read_inplace's read: ctx is the job */
static ssize_t cg_dio_read_aligned(void *ctx,
				    uint8_t *buf,
				    size_t len,
				    uint64_t off)
{
	const struct cg_dio_job *j = ctx;

	return cg_dio_read_full(j->sys, j->fd, buf, len, off, j->align);
}

void cg_dio_job_run(struct cg_dio_job *j)
{
	uint64_t start = cg_now_ns();
	int saved = cg_ioprio_enter(j->ioprio);

	j->ret = -1;
	j->err = 0;
	j->version_ok = cg_pf_version_now(j->fd, &j->ver) == 0;
	if (!j->version_ok) {
		j->err = errno;
	} else if (j->kind == CG_JOB_COPY) {
		j->stale = !cg_prefetch_pieces_current(j->pieces, j->npieces,
						       &j->ver);
		if (!j->stale) {
			j->ret = (ssize_t)cg_prefetch_copy_pieces(
				j->sys, j->mem, j->pieces, j->npieces, j->buf);
		}
	} else if (j->inplace) {
		j->ret = cg_dio_read_inplace(&j->plan, j->buf, j->offset,
					     j->bounce, cg_dio_read_aligned, j);
		j->err = j->ret == -1 ? errno : 0;
	} else {
		j->ret = cg_dio_read_aligned(j, j->buf, j->count, j->offset);
		j->err = j->ret == -1 ? errno : 0;
	}
	cg_ioprio_leave(saved);
	j->duration = cg_now_ns() - start;
}

size_t cg_dio_job_result(const struct cg_dio_job *j,
			 const struct cg_dio_plan *p,
			 size_t n,
			 uint8_t *dst)
{
	size_t got = (size_t)j->ret;

	if (j->kind == CG_JOB_READ && !j->inplace) {
		got = cg_dio_trim(p, n, got);
		cg_sys_copy(j->sys, dst, j->buf + p->skip, got);
	}
	return got;
}
