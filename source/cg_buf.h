/*
 * vfs_cacheguard engine: transparent huge pages under direct mode's
 * buffers, as the kernel reports them
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

#ifndef CG_BUF_H
#define CG_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A transparent huge page. The prefetch buffer starts on one and its
 * segments are one at least: an O_DIRECT fill into it is one device
 * request, where into 4 KiB pages it splits at the queue's max_segments.
 */
#define CG_HUGE_PAGE (2 * 1024 * 1024)

/*
 * A buffer for O_DIRECT of len bytes straight from mmap, page-aligned,
 * never inherited by a child process (MADV_DONTFORK: a fork while a
 * read is in flight must not leave its pages copy-on-write), given back
 * to the kernel by cg_buf_unmap; NULL when there is no memory. Not from
 * malloc: freed megabyte buffers raise glibc's mmap threshold, and later
 * ones come from the heap, which it does not give back.
 */
void *cg_buf_map(size_t len);
void cg_buf_unmap(void *p, size_t len);

/*
 * The prefetch buffer: reserve bytes of address space on a huge page
 * boundary, transparent huge pages asked for (where the kernel gives
 * 4 KiB pages the reads are only smaller), never inherited, of which
 * [0, used) is usable; NULL when that fails. cg_buf_commit makes
 * [off, off + len) usable too (false: refused, as under strict
 * overcommit).
 */
void *cg_buf_reserve(size_t reserve, size_t used);
bool cg_buf_commit(void *p, size_t off, size_t len);

#endif /* CG_BUF_H */
