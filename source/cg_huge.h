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
#include <stddef.h>
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

/*
 * A transparent huge page. The prefetch buffer starts on one and its
 * segments are one at least: a fill is then one bio segment and one
 * device request of 2 MiB, where in 4 KiB pages a 1 MiB fill was two
 * requests (the queue's max_segments, 254 on virtio): 4x the requests
 * on storage that counts them (docs/benchmarks.md).
 */
#define CG_HUGE_PAGE (2 * 1024 * 1024)

/*
 * A buffer for O_DIRECT of len bytes straight from mmap, page-aligned,
 * given back to the kernel by cg_huge_unmap; NULL when there is no
 * memory. From malloc, megabyte buffers raise glibc's mmap threshold
 * once freed, and later ones then come from the heap, which it does not
 * give back: an idle smbd process that had served a dozen direct copies
 * was seen holding 155 MiB.
 */
void *cg_huge_map(size_t len);
void cg_huge_unmap(void *p, size_t len);

/*
 * The prefetch buffer: reserve bytes of address space on a huge page
 * boundary, with transparent huge pages asked for, of which [0, used) is
 * usable; NULL when either fails. cg_huge_commit makes [off, off + len)
 * usable too (false: the kernel refused, as under strict overcommit).
 */
void *cg_huge_reserve(size_t reserve, size_t used);
bool cg_huge_commit(void *p, size_t off, size_t len);

/*
 * Bytes in huge pages of this process's mapping that holds mem, from
 * /proc/self/smaps (cg_smaps_huge); false when the kernel says nothing.
 * It reads a few hundred KiB of text: in the thread pool.
 */
bool cg_huge_probe(const void *mem, uint64_t *bytes);

/*
 * Whether the fill of segment slot of a table of nseg looks for huge
 * pages after it (cg_huge_probe): the first fill of the last segment has
 * touched the whole buffer (fills go in order), and a look costs about
 * 6 ms (smbd has ~800 mappings), so once per table size; probed_nseg is
 * the size last looked at, 0 for none
 */
bool cg_huge_probe_due(unsigned slot, unsigned nseg, unsigned probed_nseg);

/* /sys/kernel/mm/transparent_hugepage/enabled: the choice in brackets */
enum cg_thp {
	CG_THP_UNKNOWN = 0,
	CG_THP_NEVER,
	CG_THP_MADVISE,
	CG_THP_ALWAYS,
};

enum cg_thp cg_thp_parse(const char *text);
const char *cg_thp_name(enum cg_thp thp);
/* The setting now, read once per process (for the log) */
enum cg_thp cg_thp_now(void);

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
