/*
 * Unit tests of the reads in flight (cg_stream.c)
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

#include "cg_stream.h"
#include "cg_test.h"

/* Reads one by one: the count, and the lowest of those still in flight */
static void test_slots(void **state)
{
	struct cg_flight f;
	struct cg_flight_ref a, b, c;

	(void)state;
	cg_flight_init(&f);
	assert_int_equal(cg_flight_count(&f), 0);
	assert_true(cg_flight_lowest(&f) == UINT64_MAX);

	cg_flight_add(&f, 8 * MiB, &a);
	cg_flight_add(&f, 4 * MiB, &b);
	cg_flight_add(&f, 12 * MiB, &c);
	assert_int_equal(a.track, CG_TRACK_SLOT);
	assert_int_equal(cg_flight_count(&f), 3);
	assert_true(cg_flight_lowest(&f) == 4 * MiB);

	cg_flight_remove(&f, &b);
	assert_int_equal(b.track, CG_TRACK_NONE);
	assert_int_equal(cg_flight_count(&f), 2);
	assert_true(cg_flight_lowest(&f) == 8 * MiB);

	/* removing twice, or what was never added, changes nothing */
	cg_flight_remove(&f, &b);
	assert_int_equal(cg_flight_count(&f), 2);

	/* a freed slot is taken again */
	cg_flight_add(&f, 2 * MiB, &b);
	assert_int_equal(b.track, CG_TRACK_SLOT);
	assert_true(cg_flight_lowest(&f) == 2 * MiB);
	cg_flight_remove(&f, &a);
	cg_flight_remove(&f, &b);
	cg_flight_remove(&f, &c);
	assert_int_equal(cg_flight_count(&f), 0);
	assert_true(cg_flight_lowest(&f) == UINT64_MAX);
}

/* A new set with every slot taken: read i at base + i MiB in r[i] */
static void fill_slots(struct cg_flight *f,
		       struct cg_flight_ref r[CG_FLIGHT_SLOTS],
		       uint64_t base)
{
	unsigned i;

	cg_flight_init(f);
	for (i = 0; i < CG_FLIGHT_SLOTS; i++) {
		cg_flight_add(f, base + i * MiB, &r[i]);
	}
}

/* Beyond the slots, reads are counted in a batch with its lowest offset */
static void test_spill(void **state)
{
	struct cg_flight f;
	struct cg_flight_ref r[CG_FLIGHT_SLOTS];
	struct cg_flight_ref x;

	(void)state;
	fill_slots(&f, r, 100 * MiB);
	cg_flight_add(&f, 50 * MiB, &x);
	assert_int_equal(x.track, CG_TRACK_BATCH);
	assert_int_equal(cg_flight_count(&f), CG_FLIGHT_SLOTS + 1);
	assert_true(cg_flight_lowest(&f) == 50 * MiB);

	cg_flight_remove(&f, &x);
	assert_int_equal(cg_flight_count(&f), CG_FLIGHT_SLOTS);
	assert_true(cg_flight_lowest(&f) == 100 * MiB);
}

/*
 * A batch's lowest offset never outlives its reads: when the other batch
 * has drained, new spills go there, so a long queue's oldest spill does
 * not hold drops back once it is done
 */
static void test_batches_switch(void **state)
{
	struct cg_flight f;
	struct cg_flight_ref r[CG_FLIGHT_SLOTS];
	struct cg_flight_ref old, mid, young;
	unsigned i;

	(void)state;
	fill_slots(&f, r, 1000 * MiB);
	cg_flight_add(&f, 10 * MiB, &old);
	cg_flight_add(&f, 2000 * MiB, &mid);
	assert_int_equal(old.track, CG_TRACK_BATCH);
	assert_int_equal(mid.track, CG_TRACK_BATCH);
	/* the other batch was empty: the second spill started it */
	assert_int_not_equal(old.idx, mid.idx);

	/* now both batches hold reads: a third joins the current one */
	cg_flight_add(&f, 3000 * MiB, &young);
	assert_int_equal(young.idx, mid.idx);

	cg_flight_remove(&f, &old);
	/* not 10 MiB: that read is done */
	assert_true(cg_flight_lowest(&f) == 1000 * MiB);
	for (i = 0; i < CG_FLIGHT_SLOTS; i++) {
		cg_flight_remove(&f, &r[i]);
	}
	assert_true(cg_flight_lowest(&f) == 2000 * MiB);
	assert_int_equal(cg_flight_count(&f), 2);
}

CG_TEST_MAIN(NULL, NULL,
	     cmocka_unit_test(test_slots),
	     cmocka_unit_test(test_spill),
	     cmocka_unit_test(test_batches_switch))
