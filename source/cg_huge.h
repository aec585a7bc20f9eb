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

#ifndef CG_HUGE_H
#define CG_HUGE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Direct mode's prefetch buffer asks for transparent huge pages
 * (MADV_HUGEPAGE): an O_DIRECT fill into one is one device request of up
 * to max_sectors_kb, into 4 KiB pages several (docs/benchmarks.md). The
 * kernel may give ordinary pages instead: THP "never", or no free huge
 * page and compaction did not make one. No call says which at the
 * fault; /proc/self/smaps does afterwards, per mapping (AnonHugePages),
 * to any process about itself, on every kernel. The glue looks once per
 * table size, after the first fill of its last segment, in the thread
 * pool.
 */

/* /sys/kernel/mm/transparent_hugepage/enabled: the choice in brackets */
enum cg_thp {
	CG_THP_UNKNOWN = 0,
	CG_THP_NEVER,
	CG_THP_MADVISE,
	CG_THP_ALWAYS,
};

enum cg_thp cg_thp_parse(const char *text);
const char *cg_thp_name(enum cg_thp thp);

/*
 * Bytes in huge pages of the mapping that holds addr, from smaps text
 * read from f: 0 and *bytes, or ENOENT (no mapping holds addr).
 */
int cg_smaps_huge(FILE *f, uintptr_t addr, uint64_t *bytes);

/*
 * What a process's buffers had: buffers released, those of them with
 * no huge page at all (ordinary pages only: the fallback), and bytes in
 * huge pages of the buffers it holds now. Updated in the main thread.
 */
struct cg_huge_stats {
	uint64_t buffers;
	uint64_t ordinary;
	uint64_t in_use;
};

/*
 * A buffer's probe saw huge bytes in huge pages: *seen, its most so
 * far, and stats->in_use follow (the kernel may have collapsed more)
 */
void cg_huge_seen(struct cg_huge_stats *stats, uint64_t *seen,
		  uint64_t huge);

/*
 * A buffer of len bytes (0: no prefetch buffer, not counted) is
 * released; seen is its cg_huge_seen() most, and probed whether any
 * probe ran (a buffer never filled says nothing)
 */
void cg_huge_release(struct cg_huge_stats *stats, uint64_t seen,
		     uint64_t len, bool probed);

#endif /* CG_HUGE_H */
