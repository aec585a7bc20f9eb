/*
 * vfs_cacheguard tests: the model file of the prefetch harnesses
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
 * test_prefetch, test_direct and fuzz_prefetch play the file a direct
 * stream reads: its size and timestamps are this model, and a fill or a
 * copy takes its version (cg_pf_version) and reads what pread() would.
 * Timestamps are those of a kernel before 6.13: a change that moves
 * ctime stamps it with a coarse clock that only the test moves, so
 * changes within a tick share one; a write of this smbd's own, noted to
 * the engine, moves no ctime (only the note protects against it).
 *
 * The bytes each harness models its own way: test_direct keeps every
 * change, to tell a stale byte from one the file held at some moment
 * since a request came; fuzz_prefetch a generation per block, reset for
 * every input. No cmocka here: the fuzzers include it too.
 */

#ifndef CG_MODEL_FILE_H
#define CG_MODEL_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "cg_prefetch.h"

struct cg_model_file {
	uint64_t size;
	uint64_t ctime;		/* of the last change that moved it */
	uint64_t clock;		/* CLOCK_REALTIME_COARSE */
};

/* What fstat() and the clock give a fill or a copy now */
static inline struct cg_pf_version
cg_model_version(const struct cg_model_file *m)
{
	return (struct cg_pf_version){.ctime_ns = m->ctime,
				      .size = m->size,
				      .clock_ns = m->clock};
}

/* A change that moves ctime (any but this smbd's noted writes) */
static inline void cg_model_stamp(struct cg_model_file *m)
{
	m->ctime = m->clock;
}

/* pread()'s answer for [off, off + n) of a file of size bytes */
static inline size_t cg_model_pread_len(uint64_t size, uint64_t off, size_t n)
{
	if (off >= size) {
		return 0;
	}
	return size - off < n ? (size_t)(size - off) : n;
}

#endif
