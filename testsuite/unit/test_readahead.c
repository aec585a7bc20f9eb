/*
 * vfs_cacheguard unit tests: who reads ahead (cg_stream.c, "Who reads
 * ahead"): the kernel for the streams the server's readahead budget
 * holds, each stream on its own beyond it
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
 * The budget is a real lock file (OFD locks, as in the server), so
 * streams here exclude each other as those of two smbd processes do.
 * Each stream reads on a descriptor number of its own, and the fake
 * fadvise counts the hints per descriptor: a stream with the kernel's
 * readahead gets FADV_SEQUENTIAL, no FADV_RANDOM and no WILLNEED; one
 * beyond the budget gets RANDOM and WILLNEED. Through the cache both
 * read in pieces dropped as read. Every
 * hint is undone (FADV_NORMAL) when the stream ends.
 */

#include <stdint.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cg_stream.h"
#include "cg_sys.h"
#include "cg_test.h"

#define NSTREAMS 4
/* Stream i reads on descriptor FD0 + i */
#define FD0 100

struct hints {
	unsigned random, sequential, normal, willneed;
};

static struct {
	char path[64];
	bool fail_open;
	struct hints h[NSTREAMS];
} fx;

static int fake_fadvise(int fd, uint64_t off, uint64_t len, int advice)
{
	struct hints *h = NULL;

	assert_true(fd >= FD0 && fd < FD0 + NSTREAMS);
	h = &fx.h[fd - FD0];
	if (advice == POSIX_FADV_RANDOM) {
		h->random++;
	} else if (advice == POSIX_FADV_SEQUENTIAL) {
		h->sequential++;
	} else if (advice == POSIX_FADV_NORMAL) {
		h->normal++;
	} else if (advice == POSIX_FADV_WILLNEED) {
		h->willneed++;
	}
	return 0;
}

static int fake_ra_open(void)
{
	if (fx.fail_open) {
		errno = EMFILE;
		return -1;
	}
	return open(fx.path, O_RDWR | O_CLOEXEC);
}

static const struct cg_sys fake_sys = {
	.fadvise = fake_fadvise,
	.resident = cg_test_cold,
	.ra_open = fake_ra_open,
};

static struct cg_config cfg;
static struct cg_stream s[NSTREAMS];

static int setup(void **state)
{
	snprintf(fx.path, sizeof(fx.path), "/tmp/cg-test-ra.XXXXXX");
	if (cg_test_file(fx.path) == -1) {
		return -1;
	}
	fx.fail_open = false;
	memset(fx.h, 0, sizeof(fx.h));
	cg_config_init(&cfg);
	cfg.mode = CG_MODE_DONTNEED;
	return 0;
}

static int teardown(void **state)
{
	unlink(fx.path);
	return 0;
}

static void start(unsigned i, enum cg_via via, uint64_t kernel_ra)
{
	cg_stream_init(&s[i], &cfg, &fake_sys, GiB);
	s[i].kernel_ra = kernel_ra;
	cg_stream_set_via(&s[i], FD0 + i, via);
}

/* Reads of 1 MiB from off to end, one at a time; the last read's io */
static struct cg_io read_to(unsigned i, uint64_t off, uint64_t end)
{
	struct cg_io io = {0};

	for (; off < end; off += MiB) {
		io = cg_read_begin(&s[i], FD0 + i, off, MiB);
		io.uncached = s[i].via != CG_VIA_CACHE;
		cg_read_end(&s[i], FD0 + i, &io, MiB);
	}
	return io;
}

static bool kernel_ra(unsigned i)
{
	return s[i].ra_fd != -1;
}

/*
 * The default 32M holds one stream at read_ahead_kb 8192 (two windows
 * of 16 MiB with FADV_SEQUENTIAL): the first keeps the kernel's
 * readahead, the second reads ahead on its own; when the first ends, a
 * new stream gets its room.
 */
static void test_budget_holds_one(void **state)
{
	struct cg_io io;

	assert_int_equal(cfg.readahead_memory, 32 * MiB);
	start(0, CG_VIA_CACHE, 8 * MiB);
	start(1, CG_VIA_CACHE, 8 * MiB);

	io = read_to(0, 0, 32 * MiB);
	assert_int_equal(s[0].state, CG_ACTIVE);
	assert_true(kernel_ra(0));
	assert_true(io.drop_pieces);
	assert_int_equal(fx.h[0].random, 0);
	assert_int_equal(fx.h[0].sequential, 1);
	assert_int_equal(fx.h[0].willneed, 0);
	assert_int_equal(s[0].stats.ra_granted, 1);

	io = read_to(1, 0, 32 * MiB);
	assert_int_equal(s[1].state, CG_ACTIVE);
	assert_false(kernel_ra(1));
	assert_true(io.drop_pieces);
	assert_int_equal(fx.h[1].random, 1);
	assert_int_equal(fx.h[1].sequential, 0);
	assert_true(fx.h[1].willneed > 0);
	assert_int_equal(s[1].stats.ra_granted, 0);

	cg_stream_close(&s[0], FD0);
	assert_false(kernel_ra(0));
	assert_int_equal(fx.h[0].normal, 1);
	start(2, CG_VIA_CACHE, 8 * MiB);
	io = read_to(2, 0, 32 * MiB);
	assert_true(kernel_ra(2));
	assert_true(io.drop_pieces);

	cg_stream_close(&s[1], FD0 + 1);
	cg_stream_close(&s[2], FD0 + 2);
	/* each gets the kernel's usual readahead back */
	assert_int_equal(fx.h[1].normal, 1);
	assert_int_equal(fx.h[2].normal, 1);
	assert_int_equal(fx.h[2].random, 0);
}

/* What a stream costs follows the device: 128 KiB readahead, 512 KiB */
static void test_budget_follows_device(void **state)
{
	unsigned i;

	cfg.readahead_memory = 2 * MiB;
	for (i = 0; i < NSTREAMS; i++) {
		start(i, CG_VIA_CACHE, 128 * KiB);
		read_to(i, 0, 16 * MiB);
		assert_true(kernel_ra(i));
	}
	/* unknown (0): the engine's 4 MiB guess, 16 MiB each: two fit */
	cfg.readahead_memory = 32 * MiB;
	for (i = 0; i < NSTREAMS; i++) {
		cg_stream_close(&s[i], FD0 + i);
	}
	for (i = 0; i < NSTREAMS; i++) {
		start(i, CG_VIA_CACHE, 0);
		read_to(i, 0, 16 * MiB);
		assert_int_equal(kernel_ra(i), i < 2);
	}
	for (i = 0; i < NSTREAMS; i++) {
		cg_stream_close(&s[i], FD0 + i);
	}
}

/*
 * No budget (readahead memory = 0), no budget file, or readahead = 0
 * (the kernel's for every stream, nothing asked): nothing is granted
 */
static void test_budget_none(void **state)
{
	struct cg_io io;

	cfg.readahead_memory = 0;
	start(0, CG_VIA_CACHE, 8 * MiB);
	read_to(0, 0, 32 * MiB);
	assert_false(kernel_ra(0));
	assert_int_equal(fx.h[0].random, 1);
	cg_stream_close(&s[0], FD0);

	cfg.readahead_memory = 32 * MiB;
	fx.fail_open = true;
	start(1, CG_VIA_CACHE, 8 * MiB);
	io = read_to(1, 0, 32 * MiB);
	assert_false(kernel_ra(1));
	assert_true(io.drop_pieces);
	cg_stream_close(&s[1], FD0 + 1);
	fx.fail_open = false;

	cfg.readahead = 0;
	start(2, CG_VIA_CACHE, 8 * MiB);
	io = read_to(2, 0, 32 * MiB);
	assert_false(kernel_ra(2));
	assert_int_equal(fx.h[2].random, 0);
	assert_int_equal(fx.h[2].willneed, 0);
	cg_stream_close(&s[2], FD0 + 2);
}

/*
 * Paths: dontcache keeps the kernel's readahead too (its readahead is
 * uncached, Linux 6.16+); a direct stream takes no
 * room, and one that moves to the direct path gives its room back.
 */
static void test_budget_paths(void **state)
{
	struct cg_io io;

	start(0, CG_VIA_DONTCACHE, 8 * MiB);
	io = read_to(0, 0, 32 * MiB);
	assert_true(kernel_ra(0));
	assert_false(io.drop_pieces);	/* the kernel drops them */
	assert_int_equal(fx.h[0].sequential, 1);
	assert_int_equal(fx.h[0].random, 0);

	start(1, CG_VIA_DIRECT, 8 * MiB);
	read_to(1, 0, 32 * MiB);
	assert_false(kernel_ra(1));

	cg_stream_set_via(&s[0], FD0, CG_VIA_DIRECT);
	assert_false(kernel_ra(0));
	start(2, CG_VIA_CACHE, 8 * MiB);
	read_to(2, 0, 32 * MiB);
	assert_true(kernel_ra(2));

	cg_stream_close(&s[0], FD0);
	cg_stream_close(&s[1], FD0 + 1);
	cg_stream_close(&s[2], FD0 + 2);
}

/* A stream read to its end gives its room back before the close */
static void test_budget_eof(void **state)
{
	cfg.readahead_memory = 32 * MiB;
	start(0, CG_VIA_CACHE, 8 * MiB);
	start(1, CG_VIA_CACHE, 8 * MiB);
	read_to(0, 0, 32 * MiB);
	assert_true(kernel_ra(0));
	read_to(0, 32 * MiB, GiB);
	assert_false(kernel_ra(0));
	read_to(1, 0, 32 * MiB);
	assert_true(kernel_ra(1));
	cg_stream_close(&s[0], FD0);
	cg_stream_close(&s[1], FD0 + 1);
}

/* A stream that restarts far away gives its room back, then asks again */
static void test_budget_restart(void **state)
{
	unsigned k;

	start(0, CG_VIA_CACHE, 8 * MiB);
	start(1, CG_VIA_CACHE, 8 * MiB);
	read_to(0, 0, 32 * MiB);
	assert_true(kernel_ra(0));
	/* eight far reads end stream 0: its room is free for stream 1 */
	for (k = 0; k < 8; k++) {
		struct cg_io io = cg_read_begin(&s[0], FD0,
						600 * MiB + k * 32 * MiB,
						64 * KiB);

		cg_read_end(&s[0], FD0, &io, 64 * KiB);
	}
	assert_int_equal(s[0].state, CG_DETECTING);
	assert_false(kernel_ra(0));
	read_to(1, 0, 32 * MiB);
	assert_true(kernel_ra(1));
	cg_stream_close(&s[0], FD0);
	cg_stream_close(&s[1], FD0 + 1);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

CG_TEST_MAIN(NULL, NULL,
	     T(test_budget_holds_one),
	     T(test_budget_follows_device),
	     T(test_budget_none),
	     T(test_budget_paths),
	     T(test_budget_restart),
	     T(test_budget_eof))
