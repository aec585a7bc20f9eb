/*
 * Unit tests of the server-wide direct-memory budget (cg_budget.c)
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
 * The budget is the kernel's OFD locks on a real file: each descriptor
 * opened here is a buffer, as in smbd, where each buffer opens the lock
 * file on its own; a child process killed while holding units is an
 * smbd that crashed.
 */

#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "cg_budget.h"
#include "cg_sys.h"
#include "cg_test.h"

static char path[] = "/tmp/cg_budget_test.XXXXXX";

/* The kernel's locks; test_lock_failures puts a fake in front of them */
static const struct cg_sys *const kern = &cg_sys_linux;

static int budget_open(void)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
}

static int setup(void **state)
{
	(void)state;
	return cg_test_file(path);
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

/* Buffers exclude each other, even in one process; close gives back */
static void test_take_and_give(void **state)
{
	int a = budget_open(), b = budget_open(), c = budget_open();
	int d = budget_open();

	assert_int_equal(cg_budget_take(kern, a, 8 * MiB, 12 * MiB), 0);
	assert_int_equal(cg_budget_used(kern, d, 12 * MiB), 8 * MiB);
	errno = 0;
	assert_int_equal(cg_budget_take(kern, b, 8 * MiB, 12 * MiB), -1);
	assert_int_equal(errno, ENOSPC);
	assert_int_equal(cg_budget_take(kern, b, 4 * MiB, 12 * MiB), 0);
	assert_int_equal(cg_budget_used(kern, d, 12 * MiB), 12 * MiB);
	/* a part of a unit is a unit */
	assert_int_equal(cg_budget_take(kern, c, 1, 12 * MiB), -1);
	close(a);
	assert_int_equal(cg_budget_used(kern, d, 12 * MiB), 4 * MiB);
	/* the freed run is found below the one still held */
	assert_int_equal(cg_budget_take(kern, c, 8 * MiB, 12 * MiB), 0);
	assert_int_equal(cg_budget_used(kern, d, 12 * MiB), 12 * MiB);
	/* nothing at all is free */
	assert_int_equal(cg_budget_take(kern, d, 0, 12 * MiB), 0);
	close(b);
	close(c);
	assert_int_equal(cg_budget_used(kern, d, 12 * MiB), 0);
	close(d);
}

/* What the next open of the budget file fails with (0: it opens) */
static int open_error;

static int budget_open_or_fail(void)
{
	if (open_error != 0) {
		errno = open_error;
		return -1;
	}
	return budget_open();
}

/* cg_budget_room() for a counted buffer of bytes, none in use before */
static int acquire(const struct cg_sys *sys,
		   int (*open_file)(void),
		   uint64_t bytes,
		   uint64_t limit,
		   int *err)
{
	bool room;

	return cg_budget_room(sys, open_file, 0, bytes, limit, true, &room,
			      err);
}

/*
 * A failure to use the budget file is no room for now, never no limit,
 * unless no budget file can be had here at all: out of descriptors or
 * memory for a moment, the next stream asks again. (Before, any failure
 * left the process bounded only by itself for good: 50 clients could
 * hold 50 budgets.)
 */
static void test_failure_is_no_room(void **state)
{
	static const struct {
		int err;
		bool absent;
	} cases[] = {
		{EMFILE, false}, {ENFILE, false}, {ENOMEM, false},
		{EAGAIN, false}, {EINTR, false}, {ENOLCK, false},
		{ENOENT, true}, {EACCES, true}, {EROFS, true},
	};
	int held = budget_open(), err = -1, fd;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		open_error = cases[i].err;
		fd = acquire(kern, budget_open_or_fail, MiB, 12 * MiB, &err);
		assert_int_equal(fd, -1);
		assert_int_equal(err, cases[i].err);
		assert_int_equal(cg_budget_absent(err), cases[i].absent);
	}
	open_error = 0;
	/* the file opens again: units as before */
	fd = acquire(kern, budget_open_or_fail, 8 * MiB, 12 * MiB, &err);
	assert_true(fd >= 0);
	assert_int_equal(err, 0);
	assert_int_equal(cg_budget_used(kern, held, 12 * MiB), 8 * MiB);
	/* spent is no room, and gives no descriptor away */
	assert_int_equal(acquire(kern, budget_open_or_fail, 8 * MiB, 12 * MiB,
				 &err),
			 -1);
	assert_int_equal(err, ENOSPC);
	assert_false(cg_budget_absent(err));
	close(fd);
	assert_int_equal(cg_budget_used(kern, held, 12 * MiB), 0);
	close(held);
}

/*
 * The locks go through the engine's syscall table (cg_sys.lock): a fake
 * in front of the kernel's injects what the kernel can answer.
 */
static struct {
	int eintr;		/* calls left that fail with EINTR */
	int getlk_err;		/* F_OFD_GETLK fails so (0: no) */
	int setlk_err;		/* F_OFD_SETLK fails so (0: no) */
	unsigned calls, setlks;
} fake;

static int fake_lock(int fd, int cmd, struct flock *fl)
{
	fake.calls++;
	if (fake.eintr > 0) {
		fake.eintr--;
		errno = EINTR;
		return -1;
	}
	if (cmd == F_OFD_GETLK && fake.getlk_err != 0) {
		errno = fake.getlk_err;
		return -1;
	}
	if (cmd == F_OFD_SETLK) {
		fake.setlks++;
		if (fake.setlk_err != 0) {
			errno = fake.setlk_err;
			return -1;
		}
	}
	return fcntl(fd, cmd, fl);
}

static const struct cg_sys fake_sys = {
	.lock = fake_lock,
};

/*
 * An acquire with the lock calls failing so fails: -1, want_err, and
 * whether that error means there is no budget file to be had
 */
static void acquire_fails(int getlk_err,
			  int setlk_err,
			  int want_err,
			  bool absent)
{
	int err = 0;

	fake = (typeof(fake)){.getlk_err = getlk_err, .setlk_err = setlk_err};
	assert_int_equal(acquire(&fake_sys, budget_open, MiB, 8 * MiB, &err),
			 -1);
	assert_int_equal(err, want_err);
	assert_int_equal(cg_budget_absent(err), absent);
}

static void test_lock_failures(void **state)
{
	int held = budget_open(), fd;

	(void)state;
	/* an interrupted lock call is made again */
	fake = (typeof(fake)){.eintr = 3};
	fd = budget_open();
	assert_int_equal(cg_budget_take(&fake_sys, fd, 4 * MiB, 8 * MiB), 0);
	assert_int_equal(fake.calls, 5);	/* 3 EINTR, GETLK, SETLK */
	assert_int_equal(cg_budget_used(kern, held, 8 * MiB), 4 * MiB);
	close(fd);

	/* no OFD locks in this kernel: no budget file can be had */
	acquire_fails(EINVAL, 0, EINVAL, true);

	/*
	 * Races lost (each free run taken between the query and the lock,
	 * EAGAIN or EACCES) end after nine tries as EAGAIN: no room this
	 * time, never a missing budget file
	 */
	acquire_fails(0, EACCES, EAGAIN, false);
	assert_int_equal(fake.setlks, 9);

	/* any other failure of the lock itself is reported as it is */
	acquire_fails(0, ENOLCK, ENOLCK, false);
	assert_int_equal(fake.setlks, 1);
	assert_int_equal(cg_budget_used(kern, held, 8 * MiB), 0);
	close(held);
}

/*
 * Without a budget file each process holds itself to the limit; a
 * bounce buffer is not held to it
 */
static void test_local_room(void **state)
{
	(void)state;
	assert_true(cg_budget_local_room(0, 32 * MiB, 32 * MiB, true));
	assert_true(cg_budget_local_room(16 * MiB, 16 * MiB, 32 * MiB, true));
	assert_false(cg_budget_local_room(16 * MiB, 17 * MiB, 32 * MiB,
					  true));
	assert_false(cg_budget_local_room(0, 33 * MiB, 32 * MiB, true));
	/* over the limit already (a share with a smaller one): no room */
	assert_false(cg_budget_local_room(40 * MiB, 0, 32 * MiB, true));
	assert_false(cg_budget_local_room(40 * MiB, MiB, 32 * MiB, true));
	/* no overflow near the top of the range */
	assert_false(cg_budget_local_room(MiB, UINT64_MAX, 32 * MiB, true));
	/* bounce buffers */
	assert_true(cg_budget_local_room(40 * MiB, 8 * MiB, 32 * MiB, false));
}

/*
 * Room, whichever way it is counted: the file's units, none when they are
 * spent or the file fails for a moment, the process's own where no file
 * can be had, and a bounce buffer always there
 */
static void test_room(void **state)
{
	int held = budget_open(), fd, err = -1;
	bool room = false;

	(void)state;
	fd = cg_budget_room(kern, budget_open_or_fail, 0, 0, 12 * MiB, true,
			    &room, &err);
	assert_int_equal(fd, -1);
	assert_true(room);
	assert_int_equal(err, 0);

	fd = cg_budget_room(kern, budget_open_or_fail, 0, 8 * MiB, 12 * MiB,
			    true, &room, &err);
	assert_true(fd >= 0);
	assert_true(room);
	assert_int_equal(err, 0);
	assert_int_equal(cg_budget_used(kern, held, 12 * MiB), 8 * MiB);

	/* spent: no room, whatever this process holds itself */
	assert_int_equal(cg_budget_room(kern, budget_open_or_fail, 0,
					8 * MiB, 12 * MiB, true, &room, &err),
			 -1);
	assert_false(room);
	assert_int_equal(err, ENOSPC);
	close(fd);

	/* a failure for a moment is no room, never no limit */
	open_error = EMFILE;
	assert_int_equal(cg_budget_room(kern, budget_open_or_fail, 0, MiB,
					12 * MiB, true, &room, &err),
			 -1);
	assert_false(room);
	assert_int_equal(err, EMFILE);

	/* no budget file here: the process's own total against the limit */
	open_error = EACCES;
	assert_int_equal(cg_budget_room(kern, budget_open_or_fail, 4 * MiB,
					8 * MiB, 12 * MiB, true, &room, &err),
			 -1);
	assert_true(room);
	assert_int_equal(err, EACCES);
	cg_budget_room(kern, budget_open_or_fail, 8 * MiB, 8 * MiB, 12 * MiB,
		       true, &room, &err);
	assert_false(room);
	/* ... to which a bounce buffer is not held */
	cg_budget_room(kern, budget_open_or_fail, 8 * MiB, 8 * MiB, 12 * MiB,
		       false, &room, &err);
	assert_true(room);
	open_error = 0;
	assert_int_equal(cg_budget_used(kern, held, 12 * MiB), 0);
	close(held);
}

/* A share with a smaller limit sees the same pool, up to its limit */
static void test_limits_share_a_pool(void **state)
{
	int a = budget_open(), b = budget_open(), c = budget_open();

	assert_int_equal(cg_budget_take(kern, a, 4 * MiB, 64 * MiB), 0);
	assert_int_equal(cg_budget_take(kern, b, 4 * MiB, 6 * MiB), -1);
	assert_int_equal(cg_budget_take(kern, b, 2 * MiB, 6 * MiB), 0);
	assert_int_equal(cg_budget_used(kern, c, 64 * MiB), 6 * MiB);
	assert_int_equal(cg_budget_used(kern, c, 2 * MiB), 2 * MiB);
	/* a limit below one unit admits nothing */
	assert_int_equal(cg_budget_take(kern, c, 1, CG_BUDGET_UNIT - 1), -1);
	close(a);
	close(b);
	close(c);
}

/* Holes left by freed buffers are reused; a run never spans a holder */
static void test_fragments(void **state)
{
	int fds[8], i, x = budget_open(), y = budget_open();

	for (i = 0; i < 8; i++) {
		fds[i] = budget_open();
		assert_int_equal(
			cg_budget_take(kern, fds[i], 1 * MiB, 8 * MiB), 0);
	}
	close(fds[1]);
	close(fds[2]);
	close(fds[5]);
	assert_int_equal(cg_budget_used(kern, x, 8 * MiB), 5 * MiB);
	/* 3 MiB are free, but in runs of 2 and 1 */
	assert_int_equal(cg_budget_take(kern, x, 3 * MiB, 8 * MiB), -1);
	assert_int_equal(cg_budget_take(kern, x, 2 * MiB, 8 * MiB), 0);
	assert_int_equal(cg_budget_take(kern, y, 1 * MiB, 8 * MiB), 0);
	/* (a descriptor's own lock is not in its own view: ask another) */
	assert_int_equal(cg_budget_used(kern, fds[1] = budget_open(), 8 * MiB),
			 8 * MiB);
	close(fds[1]);
	for (i = 0; i < 8; i++) {
		if (i != 1 && i != 2 && i != 5) {
			close(fds[i]);
		}
	}
	close(x);
	close(y);
}

/* A holder that dies (an smbd killed mid-copy) leaks nothing */
static void test_crash_gives_back(void **state)
{
	int pipefd[2], fd = budget_open(), status;
	uint64_t held;
	int refused;
	char ok = 0;
	pid_t pid;

	assert_int_equal(pipe(pipefd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int mine;

		/* never outlive the test, never hold its output open */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(STDOUT_FILENO);
		close(STDERR_FILENO);
		mine = open(path, O_RDWR);
		ok = mine >= 0 &&
		     cg_budget_take(kern, mine, 10 * MiB, 12 * MiB) == 0;
		(void)write(pipefd[1], &ok, 1);
		pause();
		_exit(0);
	}
	assert_int_equal(read(pipefd[0], &ok, 1), 1);
	held = cg_budget_used(kern, fd, 12 * MiB);
	refused = cg_budget_take(kern, fd, 4 * MiB, 12 * MiB);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(ok);
	assert_int_equal(held, 10 * MiB);
	assert_int_equal(refused, -1);
	assert_int_equal(cg_budget_used(kern, fd, 12 * MiB), 0);
	assert_int_equal(cg_budget_take(kern, fd, 12 * MiB, 12 * MiB), 0);
	close(fd);
	close(pipefd[0]);
	close(pipefd[1]);
}

CG_TEST_MAIN(setup, teardown,
	     cmocka_unit_test(test_take_and_give),
	     cmocka_unit_test(test_limits_share_a_pool),
	     cmocka_unit_test(test_fragments),
	     cmocka_unit_test(test_crash_gives_back),
	     cmocka_unit_test(test_failure_is_no_room),
	     cmocka_unit_test(test_lock_failures),
	     cmocka_unit_test(test_local_room),
	     cmocka_unit_test(test_room))
