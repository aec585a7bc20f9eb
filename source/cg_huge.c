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
