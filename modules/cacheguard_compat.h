/*
 * vfs_cacheguard: what differs between the Samba versions it builds for
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
 * One source tree builds against Debian 12's Samba 4.17 and Debian 13's
 * Samba 4.22. Where their interfaces differ, this header gives the glue
 * one helper with one signature, and the hooks call only the helper.
 *
 * The choice keys on what the prepared Samba tree provides, not on its
 * version number: wscript compiles a snippet with the tree's own flags
 * and defines HAVE_... when it builds (see "configure" there). A Samba
 * that backports a change is then handled without touching this file.
 *
 * Needs includes.h first. Included by cacheguard_glue.h.
 */

#ifndef CACHEGUARD_COMPAT_H
#define CACHEGUARD_COMPAT_H

/*
 * cacheguard_proc_fd_path(fd, buf, bufsize): "/proc/self/fd/<fd>" in buf, or
 *NULL when there is no /proc or buf is too small; the path reopens the file of
 *fd (direct mode's O_DIRECT descriptor, the capability probe).
 *
 * Samba 4.17: sys_proc_fd_path(int fd, char *buf, size_t bufsize).
 * Samba 4.20 and later: sys_proc_fd_path(int fd,
 *	struct sys_proc_fd_path_buf *buf), the path in a buffer of its own
 *	type; here it is copied into the caller's, so call sites stay the
 *	same for both.
 */
#ifdef HAVE_SYS_PROC_FD_PATH_BUF
static inline const char *
cacheguard_proc_fd_path(int fd, char *buf, size_t bufsize)
{
	struct sys_proc_fd_path_buf pbuf;
	const char *path = NULL;
	int len;

	path = sys_proc_fd_path(fd, &pbuf);
	if (path == NULL) {
		return NULL;
	}
	len = snprintf(buf, bufsize, "%s", path);
	if (len < 0 || (size_t)len >= bufsize) {
		return NULL;
	}
	return buf;
}
#else
static inline const char *
cacheguard_proc_fd_path(int fd, char *buf, size_t bufsize)
{
	return sys_proc_fd_path(fd, buf, bufsize);
}
#endif

#endif /* CACHEGUARD_COMPAT_H */
