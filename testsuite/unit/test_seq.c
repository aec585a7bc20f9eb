/*
 * Unit tests of the sequential detector (cg_seq.c)
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

#include <stdbool.h>
#include <stdint.h>

#include "cg_seq.h"
#include "cg_test.h"

/* Near is within tol of the front, either side, once the run began */
static void test_near(void **state)
{
	struct cg_seq q;
	const uint64_t tol = 8 * MiB;

	(void)state;
	cg_seq_restart(&q, 100 * MiB);
	assert_int_equal(q.start, 100 * MiB);
	assert_int_equal(q.front, 100 * MiB);
	/* nothing read yet: not even the start is near */
	assert_false(cg_seq_near(&q, 100 * MiB, tol));
	cg_seq_extend(&q, 100 * MiB, MiB);
	assert_int_equal(q.front, 101 * MiB);
	assert_int_equal(q.bytes, MiB);
	assert_true(cg_seq_near(&q, 101 * MiB + tol, tol));
	assert_false(cg_seq_near(&q, 101 * MiB + tol + 1, tol));
	assert_true(cg_seq_near(&q, 101 * MiB - tol, tol));
	assert_false(cg_seq_near(&q, 101 * MiB - tol - 1, tol));
	/* a read behind the front extends bytes, never moves it back */
	cg_seq_extend(&q, 99 * MiB, MiB);
	assert_int_equal(q.front, 101 * MiB);
	assert_int_equal(q.bytes, 2 * MiB);
}

/* CG_STRAY_LIMIT - 1 strays in a row are ignored; a near access resets */
static void test_strays(void **state)
{
	struct cg_seq q;
	unsigned i;

	(void)state;
	cg_seq_restart(&q, 0);
	cg_seq_extend(&q, 0, MiB);
	for (i = 1; i < CG_STRAY_LIMIT; i++) {
		assert_true(cg_seq_stray(&q));
	}
	assert_false(cg_seq_stray(&q));
	cg_seq_extend(&q, MiB, MiB);
	assert_int_equal(q.strays, 0);
	assert_true(cg_seq_stray(&q));
	/* a restart forgets the run */
	cg_seq_restart(&q, 64 * MiB);
	assert_int_equal(q.strays, 0);
	assert_int_equal(q.bytes, 0);
}

/* What lies more than tol behind the front, 0 at the file's start */
static void test_behind(void **state)
{
	struct cg_seq q;

	(void)state;
	cg_seq_restart(&q, 0);
	cg_seq_extend(&q, 0, 4 * MiB);
	assert_int_equal(cg_seq_behind(&q, 8 * MiB), 0);
	assert_int_equal(cg_seq_behind(&q, 4 * MiB), 0);
	cg_seq_extend(&q, 4 * MiB, 8 * MiB);
	assert_int_equal(cg_seq_behind(&q, 8 * MiB), 4 * MiB);
}

CG_TEST_MAIN(NULL, NULL,
	     cmocka_unit_test(test_near),
	     cmocka_unit_test(test_strays),
	     cmocka_unit_test(test_behind))
