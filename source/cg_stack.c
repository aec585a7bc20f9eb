/*
 * vfs_cacheguard engine: the modules below cacheguard, and what they need
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
 * A module below that implements reads or writes sees the file's own,
 * unless it is one of Samba's known not to need them (the table: enum
 * cg_below_kind says why each kind does not). Everything else that reads
 * or writes, full_audit and time_audit (they log each call), commit (it
 * counts the bytes written to fdatasync), readahead, cacheprime, gpfs,
 * offline, error_inject and every module the table does not know, must
 * see them.
 */

#include <string.h>

#include "cg_stack.h"
#include "cg_util.h"

static const struct {
	const char *name;
	enum cg_below_kind kind;
} cg_below_known[] = {
	{"catia", CG_BELOW_NAMES},
	{"fruit", CG_BELOW_NAMES},
	{"streams_depot", CG_BELOW_NAMES},
	{"streams_xattr", CG_BELOW_NAMES},
	{"io_uring", CG_BELOW_ENGINE},
};

enum cg_below_kind cg_below_kind(const char *name, unsigned ops)
{
	size_t i;

	if ((ops & (CG_BELOW_READS | CG_BELOW_WRITES)) == 0) {
		return CG_BELOW_PLAIN;
	}
	for (i = 0; name != NULL && i < CG_ARRAY_SIZE(cg_below_known); i++) {
		if (strcmp(name, cg_below_known[i].name) == 0) {
			return cg_below_known[i].kind;
		}
	}
	return CG_BELOW_SEES;
}
