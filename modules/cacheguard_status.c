/*
 * vfs_cacheguard: per-process counters and the status file
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
 * Each smbd process that serves a cacheguard share keeps its counters in
 * "<state directory>/cacheguard/<pid>", rewritten at most once a second
 * while it streams and at every close of a tracked file, one "name value"
 * per line; cacheguard-status(8) sums them:
 *
 *	cacheguard-status		# live smbd processes and their sum
 *
 * After the tree connect smbd runs as the client's user, and its umask
 * is 0. So the files are written as smbd itself (become_root), with an
 * explicit 0600, through a temporary name made with O_EXCL|O_NOFOLLOW in
 * a directory opened with O_NOFOLLOW, then renamed into place. They are
 * root's alone, in a directory of mode 0700 (one an older version made
 * 0755 is tightened): a process serves one client's connection, and its
 * "hot" counter says how many of the files that user read were in the
 * page cache, which the kernel tells only their owners and writers
 * (cachestat, mincore), and the module asks as root. Each file
 * carries its process's start time: a file whose pid is gone, or now
 * belongs to a process started at another time, is of an exited process
 * and is removed by the next process that starts writing, so the
 * directory holds about one file per live process.
 */

#include "includes.h"
#include "smbd/smbd.h"

#include "cacheguard_glue.h"
#include "../source/cg_status.h"

#undef DBGC_CLASS
#define DBGC_CLASS vfs_cacheguard_debug_level

/* The files open now, and the sum of those closed */
struct cg_status_file {
	struct cg_status_file *prev, *next;
	struct cg_file *f;
};

static struct cg_status_file *cg_status_open;
static struct cg_totals cg_status_closed;

void cg_status_file_open(struct cg_file *f)
{
	struct cg_status_file *e = talloc_zero(NULL, struct cg_status_file);

	if (e == NULL) {
		return;	/* not shown until closed */
	}
	e->f = f;
	DLIST_ADD(cg_status_open, e);
}

void cg_status_file_close(struct cg_file *f)
{
	struct cg_status_file *e = NULL;

	for (e = cg_status_open; e != NULL; e = e->next) {
		if (e->f == f) {
			DLIST_REMOVE(cg_status_open, e);
			TALLOC_FREE(e);
			break;
		}
	}
	cg_totals_add(&cg_status_closed, f);
}

static int64_t cg_status_written;
static bool cg_status_swept;
static int cg_status_last_err;	/* logged once until it changes */

/* The start of a small file, NUL-terminated; false if there is none */
static bool cg_status_read(int dirfd, const char *name, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1) {
		return false;
	}
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0) {
		return false;
	}
	buf[n] = '\0';
	return true;
}

/* Field 22 of /proc/PID/stat, in clock ticks since boot; 0 if unknown */
static unsigned long long cg_status_start_time(pid_t pid)
{
	char path[64];
	char buf[1024];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!cg_status_read(AT_FDCWD, path, buf, sizeof(buf))) {
		return 0;
	}
	return cg_status_stat_start(buf);
}

/* The start a status file records, 0 when it has none */
static unsigned long long cg_status_file_start(int dirfd, const char *name)
{
	char buf[1024];

	if (!cg_status_read(dirfd, name, buf, sizeof(buf))) {
		return 0;
	}
	return cg_status_text_start(buf);
}

/* Remove the files of processes that exited; runs as root */
static void cg_status_sweep(int dirfd)
{
	DIR *d = NULL;
	struct dirent *e = NULL;
	int fd = dup(dirfd);

	if (fd == -1) {
		return;
	}
	d = fdopendir(fd);
	if (d == NULL) {
		close(fd);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		unsigned long long running, recorded = 0;
		long pid;
		bool tmp;

		if (!cg_status_name(e->d_name, (long)getpid(), &pid, &tmp)) {
			continue;
		}
		running = cg_status_start_time((pid_t)pid);
		if (running != 0 && !tmp) {
			recorded = cg_status_file_start(dirfd, e->d_name);
		}
		if (cg_status_stale(tmp, running, recorded)) {
			unlinkat(dirfd, e->d_name, 0);
		}
	}
	closedir(d);
}

static int cg_status_print(int fd, time_t now)
{
	struct cg_totals sum = cg_status_closed;
	const struct cg_status_file *e = NULL;
	struct cg_status st = {
		.pid = (int)getpid(),
		.start = cg_status_start_time(getpid()),
		.updated = (int64_t)now,
		.totals = &sum,
		.direct_memory = cg_direct_memory_in_use(),
		.huge = cg_direct_huge_stats(),
	};
	char buf[1024];
	int n;

	for (e = cg_status_open; e != NULL; e = e->next) {
		cg_totals_add(&sum, e->f);
	}
	n = cg_status_format(buf, sizeof(buf), &st);
	if (n < 0) {
		return EOVERFLOW;
	}
	if (write(fd, buf, (size_t)n) != n) {
		return errno != 0 ? errno : EIO;
	}
	return 0;
}

/* Write the file as root; 0 or an errno value */
static int cg_status_write_as_root(time_t now)
{
	char name[32];
	char tmp[40];
	int dirfd = -1;
	int fd = -1;
	int err = 0;

	snprintf(name, sizeof(name), "%d", (int)getpid());
	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	dirfd = cg_state_dir_open();
	if (dirfd == -1) {
		return errno;
	}
	if (!cg_status_swept) {
		cg_status_swept = true;
		cg_status_sweep(dirfd);
	}
	/* A crashed writer of this pid may have left its temporary file */
	unlinkat(dirfd, tmp, 0);
	fd = openat(dirfd, tmp,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd == -1) {
		err = errno;
		goto out;
	}
	err = cg_status_print(fd, now);
	if (close(fd) != 0 && err == 0) {
		err = errno;
	}
	if (err == 0 && renameat(dirfd, tmp, dirfd, name) != 0) {
		err = errno;
	}
	if (err != 0) {
		unlinkat(dirfd, tmp, 0);
	}
out:
	close(dirfd);
	return err;
}

void cg_status_write(bool force)
{
	time_t now = time(NULL);
	int saved_errno = errno;
	const char *dir = NULL;
	int err;

	if (!cg_status_due((int64_t)now, &cg_status_written, force)) {
		return;
	}
	dir = cg_state_dir();
	if (dir == NULL) {
		return;
	}
	become_root();
	err = cg_status_write_as_root(now);
	unbecome_root();
	if (err != 0 && err != cg_status_last_err) {
		DBG_WARNING("status file %s/%d: %s\n",
			    dir,
			    (int)getpid(),
			    strerror(err));
	}
	cg_status_last_err = err;
	/* Called between a read and its return: the caller's errno stays */
	errno = saved_errno;
}
