/*
 * Unit tests of each process's status file (cg_status.c)
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
#include <string.h>
#include <cmocka.h>

#include "cg_status.h"

/* At most once a second, unless forced; a forced write counts */
static void test_due(void **state)
{
	int64_t last = 0;

	(void)state;
	assert_true(cg_status_due(100, &last, false));
	assert_int_equal(last, 100);
	assert_false(cg_status_due(100, &last, false));
	assert_true(cg_status_due(100, &last, true));
	assert_true(cg_status_due(101, &last, false));
	assert_false(cg_status_due(101, &last, false));
	assert_int_equal(last, 101);
}

/* The text cacheguard-status(8) sums, line by line */
static void test_format(void **state)
{
	struct cg_totals sum = {
		.files = 3,
		.stats = {.streams = 2, .hot = 1, .bytes_read = 100,
			  .bytes_stream = 90, .bytes_dropped = 80, .drops = 7},
		.bytes = {10, 20, 30},
		.fallbacks = 4,
	};
	struct cg_huge_stats huge = {.buffers = 5, .ordinary = 1,
				     .in_use = 2097152};
	struct cg_status st = {
		.pid = 4242,
		.start = 987654,
		.updated = 1700000000,
		.totals = &sum,
		.direct_memory = 16777216,
		.huge = &huge,
	};
	const char *want = "pid 4242\nstart 987654\nupdated 1700000000\n"
			   "files 3\nstreams 2\nhot 1\nbytes_read 100\n"
			   "bytes_stream 90\nbytes_buffered 10\n"
			   "bytes_dontcache 20\nbytes_direct 30\n"
			   "bytes_dropped 80\ndrop_calls 7\nfallbacks 4\n"
			   "direct_memory 16777216\ndirect_huge 2097152\n"
			   "direct_buffers 5\ndirect_buffers_ordinary 1\n";
	char buf[1024];
	char small[64];

	(void)state;
	assert_int_equal(cg_status_format(buf, sizeof(buf), &st),
			 (int)strlen(want));
	assert_string_equal(buf, want);
	/* the start a file records is the one it was written with */
	assert_int_equal(cg_status_text_start(buf), 987654);
	assert_int_equal(cg_status_format(small, sizeof(small), &st), -1);
}

/* Field 22 of /proc/PID/stat, with a command name that has spaces */
static void test_stat_start(void **state)
{
	const char *stat = "1234 (smbd: client 10.0.0.1) S 1 1234 1234 0 -1 "
			   "4194560 1000 0 0 0 10 5 0 0 20 0 1 0 55555 "
			   "123456 789";

	(void)state;
	assert_int_equal(cg_status_stat_start(stat), 55555);
	assert_int_equal(cg_status_stat_start("1234 (smbd) S 1 2"), 0);
	assert_int_equal(cg_status_stat_start("garbage"), 0);
	assert_int_equal(cg_status_text_start("pid 1\nfiles 2\n"), 0);
}

/*
 * The sweep: only "<pid>" and "<pid>.tmp" of other pids are looked at; a
 * file goes when its pid has no process, or a process that started at
 * another time than the one that wrote it; a temporary file stays while
 * its pid runs
 */
static void test_sweep(void **state)
{
	long pid = 0;
	bool tmp = false;

	(void)state;
	assert_true(cg_status_name("4242", 100, &pid, &tmp));
	assert_int_equal(pid, 4242);
	assert_false(tmp);
	assert_true(cg_status_name("4242.tmp", 100, &pid, &tmp));
	assert_true(tmp);
	assert_false(cg_status_name("100", 100, &pid, &tmp));
	assert_false(cg_status_name("budget", 100, &pid, &tmp));
	assert_false(cg_status_name("streams", 100, &pid, &tmp));
	assert_false(cg_status_name("4242.old", 100, &pid, &tmp));
	assert_false(cg_status_name("0", 100, &pid, &tmp));
	assert_false(cg_status_name("-5", 100, &pid, &tmp));
	assert_false(cg_status_name(".", 100, &pid, &tmp));

	assert_false(cg_status_stale(false, 555, 555));
	assert_true(cg_status_stale(false, 555, 554));
	assert_true(cg_status_stale(false, 555, 0));
	assert_true(cg_status_stale(false, 0, 0));
	assert_false(cg_status_stale(true, 555, 0));
	assert_true(cg_status_stale(true, 0, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_due),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_stat_start),
		cmocka_unit_test(test_sweep),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
