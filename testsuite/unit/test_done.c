/*
 * Unit tests of the completed-range set (cg_seq.c)
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

/* In order, out of order, overlapping: contig follows what is whole */
static void test_merge(void **state)
{
	struct cg_done d;

	(void)state;
	cg_done_reset(&d, 4 * MiB);
	cg_done_add(&d, 4 * MiB, 5 * MiB, 0);
	assert_int_equal(d.contig, 5 * MiB);
	cg_done_add(&d, 7 * MiB, 8 * MiB, 0);
	cg_done_add(&d, 9 * MiB, 10 * MiB, 0);
	assert_int_equal(d.contig, 5 * MiB);
	assert_int_equal(d.nabove, 2);
	/* touching ranges become one */
	cg_done_add(&d, 8 * MiB, 9 * MiB, 0);
	assert_int_equal(d.nabove, 1);
	assert_int_equal(d.above[0].off, 7 * MiB);
	assert_int_equal(d.above[0].end, 10 * MiB);
	/* the gap fills: everything merges into contig */
	cg_done_add(&d, 5 * MiB, 7 * MiB, 0);
	assert_int_equal(d.contig, 10 * MiB);
	assert_int_equal(d.nabove, 0);
	/* below contig: nothing changes */
	cg_done_add(&d, 0, 2 * MiB, 0);
	assert_int_equal(d.contig, 10 * MiB);
}

/* A gap below the floor was skipped; what waited above it merges */
static void test_floor(void **state)
{
	struct cg_done d;

	(void)state;
	cg_done_reset(&d, 0);
	cg_done_add(&d, 2 * MiB, 3 * MiB, 0);
	cg_done_add(&d, 4 * MiB, 6 * MiB, 0);
	assert_int_equal(d.contig, 0);
	cg_done_add(&d, 8 * MiB, 9 * MiB, 4 * MiB);
	assert_int_equal(d.contig, 6 * MiB);
	assert_int_equal(d.nabove, 1);
	assert_int_equal(d.above[0].off, 8 * MiB);
}

/* Full: the highest range is forgotten, never one below it */
static void test_full(void **state)
{
	struct cg_done d;
	unsigned i;

	(void)state;
	cg_done_reset(&d, 0);
	for (i = 0; i < CG_MAX_DONE; i++) {
		cg_done_add(&d, (2 * i + 1) * MiB, (2 * i + 2) * MiB, 0);
	}
	assert_int_equal(d.nabove, CG_MAX_DONE);
	/* higher than all: not kept */
	cg_done_add(&d, 100 * MiB, 101 * MiB, 0);
	assert_int_equal(d.nabove, CG_MAX_DONE);
	assert_int_equal(d.above[CG_MAX_DONE - 1].off,
			 (2 * CG_MAX_DONE - 1) * MiB);
	/* lower: kept, the highest goes */
	cg_done_add(&d, MiB / 2, MiB / 2 + 4096, 0);
	assert_int_equal(d.nabove, CG_MAX_DONE);
	assert_int_equal(d.above[0].off, MiB / 2);
	assert_int_equal(d.above[CG_MAX_DONE - 1].off,
			 (2 * CG_MAX_DONE - 3) * MiB);
	/* the first gap fills: contig runs to the next gap */
	cg_done_add(&d, 0, MiB / 2, 0);
	assert_int_equal(d.contig, MiB / 2 + 4096);
}

CG_TEST_MAIN(NULL, NULL,
	     cmocka_unit_test(test_merge),
	     cmocka_unit_test(test_floor),
	     cmocka_unit_test(test_full))
