/*
 * Unit tests of direct mode's buffers (cg_prefetch.c)
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
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cg_prefetch.h"
#include "cg_test.h"

/*
 * The prefetch buffer starts on a huge page, its first used bytes are
 * usable, more become usable as it grows; a plain buffer of 0 bytes is
 * still a buffer
 */
static void test_buffers(void **state)
{
	uint8_t *p = NULL;
	void *q = NULL;

	(void)state;
	p = cg_buf_reserve(8 * MiB, 2 * MiB);
	assert_non_null(p);
	assert_int_equal((uintptr_t)p % CG_HUGE_PAGE, 0);
	memset(p, 1, 2 * MiB);
	assert_true(cg_buf_commit(p, 2 * MiB, 2 * MiB));
	memset(p + 2 * MiB, 2, 2 * MiB);
	assert_int_equal(p[4 * MiB - 1], 2);
	cg_buf_unmap(p, 8 * MiB);

	q = cg_buf_map(0);
	assert_non_null(q);
	assert_int_equal((uintptr_t)q % 4096, 0);
	cg_buf_unmap(q, 0);
	cg_buf_unmap(NULL, 0);
}

/* Whether a child of this process has p mapped: mincore answers */
static bool child_sees(void *p)
{
	unsigned char vec;
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		_exit(mincore(p, 4096, &vec) == 0 ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/*
 * Whether this platform keeps a MADV_DONTFORK mapping out of a child.
 * qemu-user, which t07 runs this test under as i386, ignores the
 * advice: there the test cannot tell, and says so.
 */
static bool dontfork_honoured(void)
{
	void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bool honoured;

	assert_true(m != MAP_FAILED);
	memset(m, 1, 4096);
	assert_int_equal(madvise(m, 4096, MADV_DONTFORK), 0);
	honoured = !child_sees(m);
	munmap(m, 4096);
	return honoured;
}

/*
 * No buffer of the module's is in a child of smbd's: a fork while an
 * O_DIRECT read into it is in flight would otherwise make its pages
 * copy-on-write, and on kernels that do not pin them (before 6.5) the
 * parent would keep a copy the device never wrote
 */
static void test_no_fork(void **state)
{
	void *plain = NULL;
	uint8_t *p = NULL;
	void *q = NULL;

	(void)state;
	plain = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(plain != MAP_FAILED);
	assert_true(child_sees(plain));		/* the test can tell */
	munmap(plain, 4096);
	if (!dontfork_honoured()) {
		print_message("MADV_DONTFORK is not honoured here "
			      "(qemu-user): cannot tell\n");
		skip();
	}

	p = cg_buf_reserve(8 * MiB, 2 * MiB);
	assert_non_null(p);
	memset(p, 1, 4096);
	assert_false(child_sees(p));
	assert_true(cg_buf_commit(p, 2 * MiB, 2 * MiB));
	assert_false(child_sees(p + 2 * MiB));
	cg_buf_unmap(p, 8 * MiB);

	q = cg_buf_map(64 * 1024);
	assert_non_null(q);
	memset(q, 1, 4096);
	assert_false(child_sees(q));
	cg_buf_unmap(q, 64 * 1024);
}

CG_TEST_MAIN(NULL, NULL,
	     cmocka_unit_test(test_buffers),
	     cmocka_unit_test(test_no_fork))
