/*
 * vfs_cacheguard engine: transparent huge pages under direct mode's
 * buffers (cg_huge.h)
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
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cg_huge.h"

enum cg_thp cg_thp_parse(const char *text)
{
	static const struct {
		const char *word;
		enum cg_thp thp;
	} words[] = {
		{"[always]", CG_THP_ALWAYS},
		{"[madvise]", CG_THP_MADVISE},
		{"[never]", CG_THP_NEVER},
	};
	size_t i;

	for (i = 0; text != NULL && i < sizeof(words) / sizeof(words[0]);
	     i++) {
		if (strstr(text, words[i].word) != NULL) {
			return words[i].thp;
		}
	}
	return CG_THP_UNKNOWN;
}

const char *cg_thp_name(enum cg_thp thp)
{
	switch (thp) {
	case CG_THP_NEVER:
		return "never";
	case CG_THP_MADVISE:
		return "madvise";
	case CG_THP_ALWAYS:
		return "always";
	case CG_THP_UNKNOWN:
		break;
	}
	return "unknown";
}

/* A mapping's first line, "start-end perms ...": true and its range */
static bool cg_smaps_header(const char *line, uintptr_t *start,
			    uintptr_t *end)
{
	char *p = NULL;

	*start = (uintptr_t)strtoull(line, &p, 16);
	if (p == line || *p != '-') {
		return false;
	}
	line = p + 1;
	*end = (uintptr_t)strtoull(line, &p, 16);
	return p != line && *p == ' ';
}

int cg_smaps_huge(FILE *f, uintptr_t addr, uint64_t *bytes)
{
	static const char field[] = "AnonHugePages:";
	char *line = NULL;
	size_t cap = 0;
	bool inside = false;
	int ret = ENOENT;

	*bytes = 0;
	while (getline(&line, &cap, f) != -1) {
		uintptr_t start, end;

		if (cg_smaps_header(line, &start, &end)) {
			if (inside) {
				break;	/* its fields are over */
			}
			inside = start <= addr && addr < end;
			if (inside) {
				ret = 0;	/* a kernel without the field */
			}
		} else if (inside &&
			   strncmp(line, field, sizeof(field) - 1) == 0) {
			*bytes = strtoull(line + sizeof(field) - 1, NULL, 10) *
				 1024;
			break;
		}
	}
	free(line);
	return ret;
}

void cg_huge_seen(struct cg_huge_stats *stats, uint64_t *seen,
		  uint64_t huge)
{
	if (huge > *seen) {
		stats->in_use += huge - *seen;
		*seen = huge;
	}
}

void cg_huge_release(struct cg_huge_stats *stats, uint64_t seen,
		     uint64_t len, bool probed)
{
	stats->in_use -= seen;
	if (len == 0 || !probed) {
		return;
	}
	stats->buffers++;
	if (seen == 0) {
		stats->ordinary++;
	}
}

/*
 * Buffers for O_DIRECT come straight from mmap, page-aligned, and go
 * back to the kernel when freed. From malloc, megabyte buffers raise
 * glibc's mmap threshold once freed, and later ones then come from the
 * heap, which it does not give back: an idle smbd process that had
 * served a dozen direct copies was seen holding 155 MiB.
 */
void *cg_huge_map(size_t len)
{
	void *p = mmap(NULL, (len > 0 ? len : 1), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * The prefetch buffer: address space for the largest table, of which
 * only [0, used) is usable (and, with strict overcommit, committed);
 * cg_huge_commit makes more of it usable when the table grows.
 * It starts on a huge-page boundary and asks for transparent huge
 * pages (CG_HUGE_PAGE): where THP is "never", or none is free, the
 * kernel gives 4 KiB pages and the reads are only smaller. The pages
 * are faulted in by the fills' O_DIRECT reads, in the thread pool.
 */
void *cg_huge_reserve(size_t reserve, size_t used)
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
	if (p + len > a + reserve) {
		munmap(a + reserve, (size_t)(p + len - (a + reserve)));
	}
#ifdef MADV_HUGEPAGE
	(void)madvise(a, reserve, MADV_HUGEPAGE);
#endif
	if (mprotect(a, used, PROT_READ | PROT_WRITE) != 0) {
		munmap(a, reserve);
		return NULL;
	}
	return a;
}

bool cg_huge_commit(void *p, size_t off, size_t len)
{
	return mprotect((uint8_t *)p + off, len, PROT_READ | PROT_WRITE) == 0;
}

void cg_huge_unmap(void *p, size_t len)
{
	if (p != NULL) {
		munmap(p, (len > 0 ? len : 1));
	}
}

/* THP's setting, read once per process: for the log */
enum cg_thp cg_thp_now(void)
{
	static enum cg_thp thp = CG_THP_UNKNOWN;
	static bool read;
	char text[128] = "";
	FILE *f = NULL;

	if (!read) {
		read = true;
		f = fopen("/sys/kernel/mm/transparent_hugepage/enabled",
			  "re");
		if (f != NULL && fgets(text, sizeof(text), f) != NULL) {
			thp = cg_thp_parse(text);
		}
		if (f != NULL) {
			fclose(f);
		}
	}
	return thp;
}

/*
 * Bytes in huge pages of the mapping that holds mem (the buffer's usable
 * part), from /proc/self/smaps; in the thread pool: it reads a few
 * hundred KiB of text. false when the kernel says nothing.
 */
bool cg_huge_probe(const void *mem, uint64_t *bytes)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	int ret;

	if (f == NULL) {
		return false;
	}
	ret = cg_smaps_huge(f, (uintptr_t)mem, bytes);
	fclose(f);
	return ret == 0;
}

bool cg_huge_probe_due(unsigned slot, unsigned nseg, unsigned probed_nseg)
{
	return nseg > 0 && slot + 1 == nseg && probed_nseg != nseg;
}
