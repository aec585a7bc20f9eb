/*
 * vfs_cacheguard engine: transparent huge pages under direct mode's
 * buffers (cg_buf.h)
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

#define _GNU_SOURCE
#include <sys/mman.h>

#include "cg_buf.h"

void *cg_buf_map(size_t len)
{
	void *p = mmap(NULL, (len > 0 ? len : 1), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		return NULL;
	}
	/* never in a child of smbd: an O_DIRECT read may be in flight */
	(void)madvise(p, (len > 0 ? len : 1), MADV_DONTFORK);
	return p;
}

/* The pages are faulted in by the fills' O_DIRECT reads, in the pool */
void *cg_buf_reserve(size_t reserve, size_t used)
{
	size_t len = reserve + CG_HUGE_PAGE;
	uint8_t *p = mmap(NULL, len, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uint8_t *a = NULL;

	if (p == MAP_FAILED) {
		return NULL;
	}
	a = (uint8_t *)(((uintptr_t)p + CG_HUGE_PAGE - 1) &
			~((uintptr_t)CG_HUGE_PAGE - 1));
	if (a > p) {
		munmap(p, (size_t)(a - p));
	}
	/* a - p < CG_HUGE_PAGE: some of the mapping lies past the reserve */
	munmap(a + reserve, (size_t)(p + len - (a + reserve)));
#ifdef MADV_HUGEPAGE
	(void)madvise(a, reserve, MADV_HUGEPAGE);
#endif
	(void)madvise(a, reserve, MADV_DONTFORK);
	if (mprotect(a, used, PROT_READ | PROT_WRITE) != 0) {
		munmap(a, reserve);
		return NULL;
	}
	return a;
}

bool cg_buf_commit(void *p, size_t off, size_t len)
{
	return mprotect((uint8_t *)p + off, len, PROT_READ | PROT_WRITE) == 0;
}

void cg_buf_unmap(void *p, size_t len)
{
	if (p != NULL) {
		munmap(p, (len > 0 ? len : 1));
	}
}
