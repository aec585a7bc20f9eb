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

/*
 * A device's stat, as sysfs shows it, and reads that move it: each adds
 * its own bytes and OTHERS of a neighbour's
 */
#define OTHERS 2048
static int stat_fd = -1;
static uint64_t stat_sectors;
static unsigned npreads;
static size_t piece_max;

static void stat_write(void)
{
	char line[128];
	int n = snprintf(line, sizeof(line),
			 "%8" PRIu64 " 0 %8" PRIu64 " 0 0 0 0 0 0 0 0\n",
			 stat_sectors / 8, stat_sectors);

	assert_int_equal(pwrite(stat_fd, line, (size_t)n, 0), n);
	assert_int_equal(ftruncate(stat_fd, n), 0);
}

static ssize_t counted_preadv2(int fd, void *buf, size_t n, uint64_t off,
			       int flags)
{
	npreads++;
	piece_max = n > piece_max ? n : piece_max;
	stat_sectors += (n + OTHERS) / 512;
	stat_write();
	return cg_sys_linux.preadv2(fd, buf, n, off, flags);
}

/* Run j, a fill of the whole file into buf: every byte there */
static void run_whole(struct cg_djob *j, uint8_t *buf)
{
	memset(buf, 0, 16384);
	cg_djob_run(j);
	assert_int_equal(j->ret, SIZE);
	assert_memory_equal(buf, want, SIZE);
}

/* A paced fill of 16384 bytes into buf in 4096-byte pieces, counted */
static struct cg_djob paced_fill(const struct cg_sys *sys,
				 int fd,
				 uint8_t *buf,
				 int turn_fd)
{
	return (struct cg_djob){
		.kind = CG_DJOB_FILL,
		.sys = sys,
		.fd = fd,
		.buf = buf,
		.count = 16384,
		.align = 4096,
		.piece = 4096,
		.counted = true,
		.stat_fd = stat_fd,
		.turn_fd = turn_fd,
	};
}

/*
 * A paced fill: the device sees one piece at a time, the bytes are all
 * there, and the job tells what others read meanwhile; uncounted, -1
 */
static void test_pieces(void **state)
{
	char path[] = "/tmp/cg_djob_stat.XXXXXX";
	struct cg_sys sys = cg_sys_linux;
	uint8_t *buf = NULL;
	int fd = file_new();
	struct cg_djob j;

	(void)state;
	sys.preadv2 = counted_preadv2;
	stat_fd = mkstemp(path);
	assert_int_not_equal(stat_fd, -1);
	unlink(path);
	stat_sectors = 1000;
	stat_write();
	assert_int_equal(posix_memalign((void **)&buf, 4096, 16384), 0);
	j = paced_fill(&sys, fd, buf, -1);
	run_whole(&j, buf);
	assert_int_equal(npreads, 3);
	assert_int_equal(piece_max, 4096);
	assert_int_equal(j.others, 3 * OTHERS);

	/* whole, and not counted */
	npreads = 0;
	piece_max = 0;
	j.piece = 0;
	j.counted = false;
	run_whole(&j, buf);
	assert_int_equal(npreads, 1);
	assert_int_equal(piece_max, 16384);
	assert_int_equal(j.others, -1);
	free(buf);
	close(fd);
	close(stat_fd);
}

/* Another stream's descriptor of the turn, and what the reads saw */
static int turn_other = -1;
static unsigned turn_held;

static ssize_t turn_preadv2(int fd, void *buf, size_t n, uint64_t off,
			    int flags)
{
	if (flock(turn_other, LOCK_EX | LOCK_NB) == -1 &&
	    errno == EWOULDBLOCK) {
		turn_held++;
	} else {
		flock(turn_other, LOCK_UN);
	}
	return counted_preadv2(fd, buf, n, off, flags);
}

static void *turn_hold(void *arg)
{
	int fd = *(int *)arg;

	usleep(100 * 1000);
	flock(fd, LOCK_UN);
	return NULL;
}

/*
 * The turn: held while each piece is out, given back after it (the
 * others' bytes counted piece by piece); a piece that waited for another
 * stream's turn is counted, and the wait is not the reads' time; whole
 * reads take no turn
 */
static void test_turn(void **state)
{
	char path[] = "/tmp/cg_djob_stat.XXXXXX";
	struct cg_sys sys = cg_sys_linux;
	uint8_t *buf = NULL;
	int fd = file_new();
	int turn_fd;
	pthread_t th;
	struct cg_djob j;

	(void)state;
	sys.preadv2 = turn_preadv2;
	stat_fd = mkstemp(path);
	assert_int_not_equal(stat_fd, -1);
	turn_fd = open(path, O_RDONLY);
	turn_other = open(path, O_RDONLY);
	assert_true(turn_fd >= 0 && turn_other >= 0);
	unlink(path);
	stat_sectors = 1000;
	stat_write();
	assert_int_equal(posix_memalign((void **)&buf, 4096, 16384), 0);
	j = paced_fill(&sys, fd, buf, turn_fd);
	npreads = 0;
	turn_held = 0;
	run_whole(&j, buf);
	assert_int_equal(npreads, 3);
	assert_int_equal(turn_held, 3);
	assert_int_equal(j.others, 3 * OTHERS);
	assert_int_equal(j.waited, 0);
	assert_true(j.busy > 0 && j.busy <= j.duration);
	assert_int_equal(flock(turn_other, LOCK_EX | LOCK_NB), 0);

	/* another stream holds it for 100 ms: the first piece waits */
	pthread_create(&th, NULL, turn_hold, &turn_other);
	turn_held = 0;
	run_whole(&j, buf);
	pthread_join(th, NULL);
	assert_int_equal(j.waited, 1);
	assert_int_equal(turn_held, 3);
	assert_true(j.duration >= 90 * 1000 * 1000ULL);
	assert_true(j.busy < j.duration - 80 * 1000 * 1000ULL);

	/* whole: no turn, the job counted as one */
	j.piece = 0;
	turn_held = 0;
	run_whole(&j, buf);
	assert_int_equal(turn_held, 0);
	assert_int_equal(j.others, OTHERS);
	assert_int_equal(j.busy, j.duration);
	free(buf);
	close(fd);
	close(turn_fd);
	close(turn_other);
	close(stat_fd);
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
		cmocka_unit_test(test_pieces),
		cmocka_unit_test(test_turn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
