/*
 * vfs_cacheguard: per-process counters and the status file
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

/*
 * Each smbd process that serves a cacheguard share keeps its counters in
 * "<state directory>/cacheguard/<pid>", rewritten at most once a second
 * while it streams and at every close of a tracked file, one "name value"
 * per line. Files of processes that have exited stay until smbd's state
 * directory is cleaned; cacheguard-status(8) tells live from dead:
 *
 *	cacheguard-status		# live smbd processes and their sum
 */

#include "includes.h"
#include "smbd/smbd.h"

#include "cacheguard.h"

#undef DBGC_CLASS
#define DBGC_CLASS vfs_cacheguard_debug_level

struct cg_status cg_status;

static time_t cg_status_written;

void cg_status_write(bool force)
{
	const struct cg_stats *t = &cg_status.totals;
	time_t now = time(NULL);
	TALLOC_CTX *frame = NULL;
	char *dir = NULL;
	char *path = NULL;
	char *tmp = NULL;
	FILE *f = NULL;

	if (!force && now == cg_status_written) {
		return;
	}
	cg_status_written = now;
	frame = talloc_stackframe();
	dir = talloc_asprintf(frame, "%s/cacheguard", lp_state_directory());
	path = talloc_asprintf(frame, "%s/%d", dir, (int)getpid());
	tmp = talloc_asprintf(frame, "%s.tmp", path);
	if (tmp == NULL) {
		goto out;
	}
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		DBG_DEBUG("mkdir %s: %s\n", dir, strerror(errno));
		goto out;
	}
	f = fopen(tmp, "w");
	if (f == NULL) {
		DBG_DEBUG("%s: %s\n", tmp, strerror(errno));
		goto out;
	}
	fprintf(f,
		"pid %d\nupdated %jd\nfiles %" PRIu64 "\nstreams %" PRIu64
		"\nhot %" PRIu64 "\nbytes_read %" PRIu64
		"\nbytes_stream %" PRIu64 "\nbytes_buffered %" PRIu64
		"\nbytes_dontcache %" PRIu64 "\nbytes_direct %" PRIu64
		"\nbytes_dropped %" PRIu64 "\ndrop_calls %" PRIu64
		"\nfallbacks %" PRIu64 "\ndirect_memory %zu\n",
		(int)getpid(),
		(intmax_t)now,
		cg_status.files,
		t->streams,
		t->hot,
		t->bytes_read,
		t->bytes_stream,
		cg_status.bytes_path[0],
		cg_status.bytes_path[1],
		cg_status.bytes_path[2],
		t->bytes_dropped,
		t->drops,
		cg_status.fallbacks,
		cg_direct_memory_in_use());
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		DBG_DEBUG("%s: %s\n", path, strerror(errno));
		unlink(tmp);
	}
out:
	TALLOC_FREE(frame);
}
