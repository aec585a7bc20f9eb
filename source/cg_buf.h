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

/* Prefetch segments are huge pages at least: one device request a fill */
#define CG_HUGE_PAGE (2 * 1024 * 1024)

/*
 * An O_DIRECT buffer from mmap, never inherited (MADV_DONTFORK: a fork
 * during a read must not leave its pages copy-on-write); NULL without
 * memory. Not malloc: freed large buffers raise glibc's mmap threshold
 * and later ones stay on the heap.
 */
void *cg_buf_map(size_t len);
void cg_buf_unmap(void *p, size_t len);

/*
 * The prefetch buffer: reserve bytes of address space on a huge page
 * boundary, huge pages asked for, never inherited, [0, used) usable;
 * cg_buf_commit makes more usable (false: refused, strict overcommit)
 */
void *cg_buf_reserve(size_t reserve, size_t used);
bool cg_buf_commit(void *p, size_t off, size_t len);

#endif /* CG_BUF_H */
