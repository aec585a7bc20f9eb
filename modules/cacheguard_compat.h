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
 * Where the Samba releases the module builds against differ (4.17 to
 * 4.22), one helper with one signature for the glue. The choice keys on
 * what the prepared Samba tree provides (wscript's configure defines
 * HAVE_... when a snippet builds), not on its version number. Needs
 * includes.h first.
 */

#ifndef CACHEGUARD_COMPAT_H
#define CACHEGUARD_COMPAT_H

/*
 * "/proc/self/fd/<fd>" in buf, or NULL when there is no /proc or buf is
 * too small. Samba 4.20 and later take a struct sys_proc_fd_path_buf,
 * copied here into the caller's buffer.
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
