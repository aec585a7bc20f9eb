/*
 * Unit tests of a direct job's work (cg_djob.c) on a real file
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


#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/file.h>
#include <cmocka.h>

#include "cg_dev.h"
#include "cg_djob.h"

#define SIZE 10000

static uint8_t want[SIZE];

/* A file of SIZE known bytes, unlinked: its descriptor */
static int file_new(void)
{
	char path[] = "/tmp/cg_djob.XXXXXX";
	unsigned i;
	int fd = mkstemp(path);

	assert_int_not_equal(fd, -1);
	unlink(path);
	for (i = 0; i < SIZE; i++) {
		want[i] = (uint8_t)(i * 7 + 3);
	}
	assert_int_equal(write(fd, want, SIZE), SIZE);
	return fd;
}

/* A fill: the bytes, short at end of file, the version taken before */
static void test_fill(void **state)
{
	uint8_t *buf = NULL;
	int fd = file_new();
	struct cg_djob j = {
		.kind = CG_DJOB_FILL,
		.sys = &cg_sys_linux,
		.fd = fd,
		.count = 16384,
		.offset = 8192,
		.align = 4096,
	};

	(void)state;
	assert_int_equal(posix_memalign((void **)&buf, 4096, 16384), 0);
	j.buf = buf;
	cg_djob_run(&j);
	assert_true(j.version_ok);
	assert_int_equal(j.ver.size, SIZE);
	assert_int_equal(j.ret, SIZE - 8192);
	assert_int_equal(j.err, 0);
	assert_memory_equal(buf, want + 8192, SIZE - 8192);
	assert_true(j.duration > 0);
	free(buf);
	close(fd);
}

/*
 * A HIT's copy: done while the pieces are the file's version, refused
 * (stale, nothing copied) once the file changed under them
 */
static void test_copy(void **state)
{
	uint8_t mem[64];
	uint8_t dst[64];
	struct cg_pf_piece piece = {.slot = 0, .from = 8, .len = 16};
	struct cg_djob j;
	int fd = file_new();

	(void)state;
	memset(mem, 0xaa, sizeof(mem));
	assert_int_equal(cg_pf_version_now(fd, &piece.ver), 0);
	j = (struct cg_djob){
		.kind = CG_DJOB_COPY,
		.sys = &cg_sys_linux,
		.fd = fd,
		.buf = dst,
		.mem = mem,
		.pieces = &piece,
		.npieces = 1,
	};
	memset(dst, 0, sizeof(dst));
	cg_djob_run(&j);
	assert_false(j.stale);
	assert_int_equal(j.ret, 16);
	assert_int_equal(dst[0], 0xaa);

	/* the file grows: its version is another */
	assert_int_equal(pwrite(fd, "x", 1, SIZE), 1);
	memset(dst, 0, sizeof(dst));
	cg_djob_run(&j);
	assert_true(j.stale);
	assert_int_equal(j.ret, -1);
	assert_int_equal(dst[0], 0);
	close(fd);
}

/* No version, no read: the job fails with fstat's errno */
static void test_bad_fd(void **state)
{
	uint8_t buf[4096];
	struct cg_djob j = {
		.kind = CG_DJOB_READ,
		.sys = &cg_sys_linux,
		.fd = -1,
		.buf = buf,
		.count = sizeof(buf),
		.align = 512,
	};

	(void)state;
	cg_djob_run(&j);
	assert_false(j.version_ok);
	assert_int_equal(j.ret, -1);
	assert_int_equal(j.err, EBADF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fill),
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_bad_fd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
