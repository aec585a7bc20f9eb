/*
 * asan_exit_wait: preloaded after the ASan runtime into smbd by t12 (which
 * compiles it). smbd may exit while ASan still writes a report from
 * another thread, and the report is then cut after its first lines: a
 * pool thread's read that ends after smbd freed its buffer reports only
 * once the read returns. So exit() here first gives a process that has
 * other threads 300 ms, then waits until its report file (ASAN_OPTIONS
 * log_path, ".PID"), if there is one, has not grown for a second, at
 * most 5 s.
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

#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether this process has a thread besides the caller */
static int other_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e = NULL;
	int n = 0;

	if (d == NULL) {
		return 1;
	}
	while ((e = readdir(d)) != NULL) {
		n += e->d_name[0] != '.';
	}
	closedir(d);
	return n > 1;
}

void exit(int status)
{
	void (*real)(int) = (void (*)(int))dlsym(RTLD_NEXT, "exit");
	const char *o = getenv("ASAN_OPTIONS");
	const char *p = o != NULL ? strstr(o, "log_path=") : NULL;
	char path[4096];
	struct stat st;
	off_t last = -1;
	int i, still = 0;

	if (p != NULL && other_threads()) {
		usleep(300000);
	}
	if (p != NULL) {
		p += strlen("log_path=");
		snprintf(path, sizeof(path), "%.*s.%d",
			 (int)strcspn(p, ":"), p, (int)getpid());
		for (i = 0; i < 50 && still < 10 && stat(path, &st) == 0;
		     i++) {
			still = st.st_size == last ? still + 1 : 0;
			last = st.st_size;
			usleep(100000);
		}
	}
	real(status);
	abort();
}
