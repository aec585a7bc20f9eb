/*
 * vfs_cacheguard engine: each smbd process's status file
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

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_status.h"

bool cg_status_due(int64_t now, int64_t *last, bool force)
{
	if (!force && now == *last) {
		return false;
	}
	*last = now;
	return true;
}

int cg_status_format(char *buf, size_t len, const struct cg_status *st)
{
	const struct cg_totals *sum = st->totals;
	const struct cg_stats *t = &sum->stats;
	int n;

	n = snprintf(buf, len,
		     "pid %d\nstart %llu\nupdated %" PRId64 "\nfiles %" PRIu64
		     "\nstreams %" PRIu64 "\nhot %" PRIu64
		     "\nbytes_read %" PRIu64 "\nbytes_stream %" PRIu64
		     "\nbytes_buffered %" PRIu64 "\nbytes_dontcache %" PRIu64
		     "\nbytes_direct %" PRIu64 "\nbytes_dropped %" PRIu64
		     "\ndrop_calls %" PRIu64 "\nfallbacks %" PRIu64
		     "\ndirect_memory %" PRIu64 "\ndirect_huge %" PRIu64
		     "\ndirect_buffers %" PRIu64
		     "\ndirect_buffers_ordinary %" PRIu64 "\n",
		     st->pid,
		     st->start,
		     st->updated,
		     sum->files,
		     t->streams,
		     t->hot,
		     t->bytes_read,
		     t->bytes_stream,
		     sum->bytes[CG_PATH_NEXT],
		     sum->bytes[CG_PATH_UNCACHED],
		     sum->bytes[CG_PATH_DIRECT],
		     t->bytes_dropped,
		     t->drops,
		     sum->fallbacks,
		     st->direct_memory,
		     st->huge->in_use,
		     st->huge->buffers,
		     st->huge->ordinary);
	if (n < 0 || (size_t)n >= len) {
		return -1;
	}
	return n;
}

unsigned long long cg_status_stat_start(const char *stat)
{
	/* The command name may hold spaces: count from its closing paren */
	const char *p = strrchr(stat, ')');
	int field;

	for (field = 2; p != NULL && field < 22; field++) {
		p = strchr(p + 1, ' ');
	}
	return p != NULL ? strtoull(p + 1, NULL, 10) : 0;
}

unsigned long long cg_status_text_start(const char *text)
{
	const char *p = strstr(text, "\nstart ");

	return p != NULL ? strtoull(p + 7, NULL, 10) : 0;
}

bool cg_status_name(const char *name, long self, long *pid, bool *tmp)
{
	char *end = NULL;

	*pid = strtol(name, &end, 10);
	if (end == name || *pid <= 0 || *pid == self) {
		return false;
	}
	*tmp = strcmp(end, ".tmp") == 0;
	return *end == '\0' || *tmp;
}

bool cg_status_stale(bool tmp,
		     unsigned long long running,
		     unsigned long long recorded)
{
	if (running == 0) {
		return true;
	}
	return !tmp && running != recorded;
}
