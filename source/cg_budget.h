/*
 * vfs_cacheguard engine: the server-wide budgets of direct and readahead memory
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

#ifndef CG_BUDGET_H
#define CG_BUDGET_H

#include "cg_options.h"

struct cg_sys;

/* A budget file's byte i is its i-th unit of this many bytes (cg_budget.c) */
#define CG_BUDGET_UNIT (64 * 1024)

/*
 * Lock units for bytes on fd, all below limit: 0, or -1 with errno
 * (ENOSPC: not free; EAGAIN: races lost, no room this time)
 */
int cg_budget_take(const struct cg_sys *sys,
		   int fd,
		   uint64_t bytes,
		   uint64_t limit);

/* Bytes all holders have taken below limit: for status and tests */
uint64_t cg_budget_used(const struct cg_sys *sys, int fd, uint64_t limit);

/*
 * Whether a failure of cg_budget_room() means no budget file can be
 * had here: each process bounds itself. Anything else is no room now.
 */
bool cg_budget_absent(int err);

/* No budget file: whether mem fits beside in_use; a bounce (!counted) does */
bool cg_budget_local_room(uint64_t in_use,
			  uint64_t mem,
			  uint64_t limit,
			  bool counted);

/*
 * Room for mem more bytes of direct memory (counted: a prefetch buffer;
 * false: a bounce buffer): units of the budget file, or where none can be
 * had cg_budget_local_room. Returns the descriptor that holds the units,
 * or -1; *room whether mem fits (mem 0 always does); *err why the budget
 * file gave no units (0: it did, or mem is 0), for the caller's log.
 */
int cg_budget_room(const struct cg_sys *sys,
		   int (*open_file)(void),
		   uint64_t in_use,
		   uint64_t mem,
		   uint64_t limit,
		   bool counted,
		   bool *room,
		   int *err);

#endif /* CG_BUDGET_H */
