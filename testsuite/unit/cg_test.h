/*
 * vfs_cacheguard unit tests: what every test program shares
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

#ifndef CG_TEST_H
#define CG_TEST_H

/* cmocka.h wants these before it */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#define KiB (1ULL << 10)
#define MiB (1ULL << 20)
#define GiB (1ULL << 30)
#define N_ELEM(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/*
 * main() of a test program: run the tests given, with group_setup and
 * group_teardown around them all (NULL: none)
 */
#define CG_TEST_MAIN(group_setup, group_teardown, ...)                 \
	int main(void)                                                 \
	{                                                              \
		const struct CMUnitTest tests[] = {__VA_ARGS__};       \
									       \
		return cmocka_run_group_tests(tests, group_setup,      \
					      group_teardown);         \
	}

/*
 * A new empty file at template ("/tmp/NAME.XXXXXX", which mkstemp()
 * fills in), closed again: a lock file for the test to open. 0, or -1.
 */
static inline int cg_test_file(char *template)
{
	int fd = mkstemp(template);

	if (fd == -1) {
		return -1;
	}
	close(fd);
	return 0;
}

/*
 * A lock file the engine opens through a fake of cg_sys (share_open,
 * ra_open), which counts the opens and, while fail is set, fails them
 * with fail (an errno)
 */
struct cg_test_lock {
	char path[64];
	int fail;
	unsigned opens;
};

/* A new lock file, /tmp/cg-NAME.XXXXXX: 0, or -1 */
static inline int cg_test_lock_new(struct cg_test_lock *l, const char *name)
{
	*l = (struct cg_test_lock){0};
	snprintf(l->path, sizeof(l->path), "/tmp/cg-%s.XXXXXX", name);
	return cg_test_file(l->path);
}

static inline int cg_test_lock_open(struct cg_test_lock *l)
{
	l->opens++;
	if (l->fail != 0) {
		errno = l->fail;
		return -1;
	}
	return open(l->path, O_RDWR | O_CLOEXEC);
}

/* A file of the n bytes at data, already unlinked: its descriptor */
static inline int cg_test_unlinked(const void *data, size_t n)
{
	char path[] = "/tmp/cg_test.XXXXXX";
	int fd = mkstemp(path);

	assert_int_not_equal(fd, -1);
	unlink(path);
	assert_int_equal(write(fd, data, n), n);
	return fd;
}

/* cg_sys.resident of a machine where every file is cold */
static inline int cg_test_cold(int fd,
			       uint64_t off,
			       uint64_t len,
			       uint64_t *bytes)
{
	*bytes = 0;
	return 0;
}

/*
 * How many seeds the random passes run (test_prefetch,
 * test_direct): seeds 1 to 8, or to CG_TEST_SEEDS. t02 runs 4 under
 * valgrind, whose subject is a memory error on any path the passes take,
 * not the eight seeds' mixes (the plain run and t01's sanitizers run them
 * all).
 */
static inline unsigned cg_test_seeds(void)
{
	const char *s = getenv("CG_TEST_SEEDS");
	unsigned n = s != NULL ? (unsigned)atoi(s) : 0;

	return n >= 1 && n <= 8 ? n : 8;
}

#endif
