/*
 * vfs_cacheguard engine: the direct-memory budget of the whole server
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
 * A budget bounds the buffers of all smbd processes together. It is a
 * lock file: byte i is the i-th unit, and a buffer's units are an OFD
 * write lock on a run of bytes, on a description of its own, so buffers
 * of one process exclude each other as those of two do. Closing gives
 * the units back, and the kernel drops a dead process's locks: nothing
 * leaks, no shared memory or daemon to trust. A share's limit admits
 * bytes [0, limit / unit), so shares with different limits share a pool.
 * A buffer takes the first free run that fits; a refusal only means a
 * stream does without, as when the budget is spent.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* F_OFD_GETLK, F_OFD_SETLK */
#endif
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "cg_budget.h"
#include "cg_sys.h"

/* A lock query or request of type F_WRLCK on [start, start + len) */
static int cg_budget_lock(const struct cg_sys *sys,
			  int fd,
			  int cmd,
			  struct flock *fl,
			  uint64_t start,
			  uint64_t len)
{
	*fl = (struct flock){
		.l_type = F_WRLCK,
		.l_whence = SEEK_SET,
		.l_start = (off_t)start,
		.l_len = (off_t)len,
	};
	return cg_sys_lock(sys, fd, cmd, fl);
}

int cg_budget_take(const struct cg_sys *sys,
		   int fd,
		   uint64_t bytes,
		   uint64_t limit)
{
	uint64_t want = bytes / CG_BUDGET_UNIT + (bytes % CG_BUDGET_UNIT != 0);
	uint64_t cap = limit / CG_BUDGET_UNIT;
	uint64_t pos = 0;
	unsigned races = 0;
	struct flock fl;

	if (want == 0) {
		return 0;
	}
	while (pos + want <= cap) {
		if (cg_budget_lock(sys, fd, F_OFD_GETLK, &fl, pos, want) != 0) {
			return -1;
		}
		if (fl.l_type != F_UNLCK) {
			/* every run of want starting before its end overlaps */
			if (fl.l_len == 0) {
				break;	/* to end of file: nothing further */
			}
			pos = (uint64_t)fl.l_start + (uint64_t)fl.l_len;
			continue;
		}
		if (cg_budget_lock(sys, fd, F_OFD_SETLK, &fl, pos, want) == 0) {
			return 0;
		}
		if (errno != EAGAIN && errno != EACCES) {
			return -1;
		}
		if (++races > 8) {
			errno = EAGAIN;	/* races lost, not a permission */
			return -1;
		}
		/* another buffer took some of it meanwhile: look again */
	}
	errno = ENOSPC;
	return -1;
}

/*
 * Unit by unit: F_OFD_GETLK reports one conflicting lock, not always the
 * lowest, so a wider query could step over a run
 */
uint64_t cg_budget_used(const struct cg_sys *sys, int fd, uint64_t limit)
{
	uint64_t cap = limit / CG_BUDGET_UNIT;
	uint64_t pos = 0;
	uint64_t used = 0;
	uint64_t end;
	struct flock fl;

	while (pos < cap) {
		if (cg_budget_lock(sys, fd, F_OFD_GETLK, &fl, pos, 1) != 0) {
			break;
		}
		if (fl.l_type == F_UNLCK) {
			pos++;
			continue;
		}
		end = fl.l_len == 0 ? cap
				    : (uint64_t)fl.l_start + (uint64_t)fl.l_len;
		end = end < cap ? end : cap;
		used += end - pos;
		pos = end;
	}
	return used * CG_BUDGET_UNIT;
}

bool cg_budget_absent(int err)
{
	switch (err) {
	case ENOENT:	/* no state directory */
	case ENOTDIR:
	case EACCES:	/* the open's: a lock conflict is EAGAIN here */
	case EPERM:
	case EROFS:
	case EINVAL:	/* no OFD locks in this kernel */
	case ENOSYS:
		return true;
	default:
		return false;
	}
}

bool cg_budget_local_room(uint64_t in_use,
			  uint64_t mem,
			  uint64_t limit,
			  bool counted)
{
	return !counted || (in_use <= limit && mem <= limit - in_use);
}

int cg_budget_room(const struct cg_sys *sys,
		   int (*open_file)(void),
		   uint64_t in_use,
		   uint64_t mem,
		   uint64_t limit,
		   bool counted,
		   bool *room,
		   int *err)
{
	int fd;

	*room = true;
	*err = 0;
	if (mem == 0) {
		return -1;
	}
	fd = open_file();
	if (fd != -1 && cg_budget_take(sys, fd, mem, limit) == 0) {
		return fd;
	}
	*err = errno;
	if (fd != -1) {
		close(fd);
	}
	*room = cg_budget_absent(*err) &&
		cg_budget_local_room(in_use, mem, limit, counted);
	return -1;
}
