/*
 * vfs_cacheguard engine: each smbd process's status file, its text, when
 * it is rewritten and which files of exited processes are removed
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

#ifndef CG_STATUS_H
#define CG_STATUS_H

#include "cg_file.h"
#include "cg_huge.h"

/*
 * The glue (modules/cacheguard_status.c) writes "<pid>" in the module's
 * state directory as root, through "<pid>.tmp" and a rename, and removes
 * the files of exited processes once per process; cacheguard-status(8)
 * sums them. A file carries its process's start time (field 22 of
 * /proc/PID/stat), so a file whose pid now belongs to another process is
 * told from a live one's.
 */

/* Rewrite now? At most once a second unless force; *last: when it was */
bool cg_status_due(int64_t now, int64_t *last, bool force);

/* What one process's file says */
struct cg_status {
	int pid;
	unsigned long long start;	/* clock ticks since boot */
	int64_t updated;		/* seconds since the epoch */
	const struct cg_totals *totals;	/* closed files and open ones */
	uint64_t direct_memory;		/* prefetch and bounce buffers */
	const struct cg_huge_stats *huge;
};

/* The file's text into buf: its length, or -1 when it does not fit */
int cg_status_format(char *buf, size_t len, const struct cg_status *st);

/* A process's start from its /proc/PID/stat text; 0 if it has none */
unsigned long long cg_status_stat_start(const char *stat);

/* The start a status file's text records; 0 if it has none */
unsigned long long cg_status_text_start(const char *text);

/*
 * A name in the state directory that is a status file: "<pid>" or
 * "<pid>.tmp" (*tmp) of a pid other than self. False for anything else,
 * which the sweep leaves alone.
 */
bool cg_status_name(const char *name, long self, long *pid, bool *tmp);

/*
 * Whether the sweep removes such a file: running is the start of the
 * process with its pid now (0: there is none), recorded the start the
 * file records (read only where it matters: a "<pid>" whose pid runs).
 * A live process's file stays; so does a "<pid>.tmp" while its pid
 * runs, as it may be writing it.
 */
bool cg_status_stale(bool tmp,
		     unsigned long long running,
		     unsigned long long recorded);

#endif /* CG_STATUS_H */
