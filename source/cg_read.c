/*
 * vfs_cacheguard engine: reads with pread() semantics
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
#include <string.h>

#include "cg_sys.h"

/*
 * An uncached read goes to the kernel in pieces of at most this much,
 * and so does a read of a stream through the cache that drops as it goes.
 * With the kernel's readahead off on the descriptor (cg_stream.c), the
 * kernel allocates and reads every missing page of one call at once, and
 * RWF_DONTCACHE frees them only as the call copies them out: a client
 * read of 8 MiB would hold 8 MiB of page cache while it waits for the
 * device, two in flight per copy 16 MiB. In pieces, a stream holds at
 * most a piece per read in flight, and its device requests stay small,
 * so a hot read that misses queues behind less.
 */
#define CG_UNCACHED_PIECE (1024 * 1024)

void cg_sys_copy(const struct cg_sys *sys,
		 void *dst,
		 const void *src,
		 size_t n)
{
	if (sys->copy != NULL) {
		sys->copy(dst, src, n);
		return;
	}
	memcpy(dst, src, n);
}

ssize_t cg_pread_full(const struct cg_sys *sys,
		      int fd,
		      void *buf,
		      size_t n,
		      uint64_t off,
		      int flags)
{
	size_t done = 0;

	while (done < n) {
		size_t want = n - done;
		ssize_t ret;

		if ((flags & (CG_RWF_DONTCACHE | CG_READ_DROP)) &&
		    want > CG_UNCACHED_PIECE) {
			want = CG_UNCACHED_PIECE;
		}
		ret = sys->preadv2(fd, (char *)buf + done, want, off + done,
				   flags & ~CG_READ_DROP);
		if (ret > 0 && (flags & CG_READ_DROP)) {
			sys->fadvise(fd, off + done, (uint64_t)ret,
				     POSIX_FADV_DONTNEED);
		}

		if (ret == -1 && errno == EINTR) {
			continue;
		}
		if (ret == -1) {
			return -1;
		}
		if (ret == 0) {
			break;	/* end of file */
		}
		done += (size_t)ret;
	}
	return (ssize_t)done;
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
