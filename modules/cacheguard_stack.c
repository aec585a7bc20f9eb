/*
 * vfs_cacheguard: the modules below it in a share's stack
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
 * smbd stacks a share's handles in the order of "vfs objects", the first
 * on top, then what it adds itself (widelinks), then vfs_default at the
 * bottom. A module implements an operation when its table has the
 * function (smbd skips the NULL ones); what it needs is the engine's
 * call (../source/cg_stack.c).
 */

#include "includes.h"
#include "smbd/smbd.h"

#include "cacheguard_glue.h"
#include "../source/cg_stack.h"

#undef DBGC_CLASS
#define DBGC_CLASS vfs_cacheguard_debug_level

/* The module name in a "vfs objects" entry, as vfs_init_custom finds it */
static char *cacheguard_stack_name(TALLOC_CTX *mem_ctx, const char *object)
{
	char *name = talloc_strdup(mem_ctx, object);
	char *p = NULL;

	if (name == NULL) {
		return NULL;
	}
	p = strchr(name, ':');
	if (p != NULL) {
		*p = '\0';
	}
	trim_char(name, ' ', ' ');
	if (name[0] == '/' && (p = strrchr(name, '/')) != NULL) {
		name = p + 1;
		p = strchr(name, '.');
		if (p != NULL) {
			*p = '\0';
		}
	}
	return name;
}

static unsigned cacheguard_stack_ops(const struct vfs_fn_pointers *fns)
{
	unsigned ops = 0;

	if (fns->pread_fn != NULL || fns->pread_send_fn != NULL ||
	    fns->sendfile_fn != NULL) {
		ops |= CG_BELOW_READS;
	}
	if (fns->pwrite_fn != NULL || fns->pwrite_send_fn != NULL ||
	    fns->recvfile_fn != NULL) {
		ops |= CG_BELOW_WRITES;
	}
	return ops;
}

unsigned cacheguard_stack_below(struct vfs_handle_struct *handle,
				const char *service)
{
	const char **objects = lp_vfs_objects(SNUM(handle->conn));
	size_t n = str_list_length(objects);
	struct vfs_handle_struct *h = NULL;
	bool below = false;
	unsigned needs = 0;
	size_t i;

	for (h = handle->conn->vfs_handles, i = 0; h != NULL;
	     h = h->next, i++) {
		const char *name = NULL;
		unsigned ops;

		if (h == handle) {
			below = true;
			continue;
		}
		if (!below || h->next == NULL) {
			continue;	/* above, or vfs_default */
		}
		name = i < n ? cacheguard_stack_name(talloc_tos(), objects[i])
			     : NULL;
		ops = cacheguard_stack_ops(h->fns);
		switch (cg_below_kind(name, ops)) {
		case CG_BELOW_SEES:
			needs |= ops;
			DBG_WARNING("share [%s]: %s below cacheguard must see "
				    "every %s: they go through it, dropped "
				    "behind in windows (as mode dontneed); "
				    "list it before cacheguard to keep "
				    "cacheguard's own I/O\n",
				    service,
				    name != NULL ? name : "a module",
				    ops == CG_BELOW_READS ? "read"
				    : ops == CG_BELOW_WRITES
					    ? "write"
					    : "read and write");
			break;
		case CG_BELOW_ENGINE:
			DBG_NOTICE("share [%s]: %s below cacheguard: the "
				   "streams cacheguard reads or writes "
				   "itself (uncached, direct) bypass it; all "
				   "other I/O goes through it\n",
				   service,
				   name);
			break;
		default:
			break;
		}
	}
	return needs;
}
