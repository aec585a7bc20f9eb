/*
 * vfs_cacheguard engine: the modules below cacheguard in a share's stack
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

#ifndef CG_STACK_H
#define CG_STACK_H

#include "cg_options.h"

/*
 * The modules below cacheguard: the fast paths act on the descriptor,
 * past them, so a module that must see a file's reads or writes gets
 * them as dontneed. These flags go with the file's CG_FS_* flags into
 * cg_file_init() and cg_writer_init(), never into its filesystem's.
 */
#define CG_BELOW_READS 0x100	/* it reads: pread, pread_send, sendfile */
#define CG_BELOW_WRITES 0x200	/* it writes: pwrite, pwrite_send, recvfile */

enum cg_below_kind {
	CG_BELOW_PLAIN = 0,	/* no read or write of its own */
	CG_BELOW_NAMES,		/* streams or names: bytes pass unchanged */
	CG_BELOW_ENGINE,	/* I/O engine: a stream's own I/O replaces it */
	CG_BELOW_SEES,		/* it must see them: audits, commits, unknown */
};

/* The kind of module name (NULL: unknown) implementing ops (CG_BELOW_*) */
enum cg_below_kind cg_below_kind(const char *name, unsigned ops);

#endif /* CG_STACK_H */
