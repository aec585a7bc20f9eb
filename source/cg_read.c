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

#include "cg_sys.h"

ssize_t cg_pread_full(const struct cg_sys *sys,
		      int fd,
		      void *buf,
		      size_t n,
		      uint64_t off,
		      int flags)
{
	size_t done = 0;

	while (done < n) {
		ssize_t ret = sys->preadv2(fd,
					   (char *)buf + done,
					   n - done,
					   off + done,
					   flags);

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
