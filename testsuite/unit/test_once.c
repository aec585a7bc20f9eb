/*
 * Unit tests of the run-once job and its bounded wait (cg_once.c)
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
#include <pthread.h>
#include <time.h>
#include <cmocka.h>

#include "cg_once.h"
#include "cg_util.h"

#define MS (1000 * 1000ULL)

struct job {
	struct cg_once once;
	unsigned runs;
	bool hold;		/* atomic: the job blocks while set */
};

static void job_fn(void *arg)
{
	struct job *j = arg;
	struct timespec ms = {0, 1000 * 1000};

	j->runs++;
	while (__atomic_load_n(&j->hold, __ATOMIC_ACQUIRE)) {
		nanosleep(&ms, NULL);
	}
}

/*
 * Lets a held job go after 2 s in any case: should the wait ever block
 * until the job's end, the test then fails on the time it took rather
 * than hang
 */
static void *job_release(void *arg)
{
	struct job *j = arg;
	struct timespec ms = {0, 1000 * 1000};
	unsigned i;

	for (i = 0; i < 2000 && __atomic_load_n(&j->hold, __ATOMIC_ACQUIRE);
	     i++) {
		nanosleep(&ms, NULL);
	}
	__atomic_store_n(&j->hold, false, __ATOMIC_RELEASE);
	return NULL;
}

static void *job_thread(void *arg)
{
	struct job *j = arg;

	(void)cg_once_try(&j->once, job_fn, j);
	return NULL;
}

/* The first caller runs it, nobody runs it again */
static void test_try_runs_once(void **state)
{
	struct job j = {.runs = 0};

	(void)state;
	assert_int_equal(cg_once_init(&j.once), 0);
	assert_int_equal(cg_once_started(&j.once), 0);
	assert_true(cg_once_try(&j.once, job_fn, &j));
	assert_int_equal(j.runs, 1);
	assert_int_not_equal(cg_once_started(&j.once), 0);
	assert_true(cg_once_try(&j.once, job_fn, &j));
	assert_int_equal(j.runs, 1);
	/* it ran: a wait returns at once, true */
	assert_true(cg_once_wait(&j.once, cg_now_ns() + 1000 * MS));
	cg_once_destroy(&j.once);
}

/*
 * While a thread runs it, a second caller does not run it and waits only
 * until its deadline; a deadline past is no wait at all
 */
static void test_wait_bounded(void **state)
{
	struct job j = {.hold = true};
	struct timespec ms = {0, 1000 * 1000};
	pthread_t t, r;
	uint64_t t0, took;

	(void)state;
	assert_int_equal(cg_once_init(&j.once), 0);
	assert_int_equal(pthread_create(&r, NULL, job_release, &j), 0);
	assert_int_equal(pthread_create(&t, NULL, job_thread, &j), 0);
	while (cg_once_started(&j.once) == 0) {
		nanosleep(&ms, NULL);
	}
	assert_false(cg_once_try(&j.once, job_fn, &j));

	t0 = cg_now_ns();
	assert_false(cg_once_wait(&j.once, t0 - 1));
	assert_false(cg_once_wait(&j.once, t0 + 30 * MS));
	took = cg_now_ns() - t0;
	assert_true(took >= 30 * MS);
	assert_true(took < 1000 * MS);	/* the deadline, not the job's end */

	__atomic_store_n(&j.hold, false, __ATOMIC_RELEASE);
	assert_true(cg_once_wait(&j.once, cg_now_ns() + 10000 * MS));
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(pthread_join(r, NULL), 0);
	assert_int_equal(j.runs, 1);
	cg_once_destroy(&j.once);
}

/* A job nobody started yet: the caller runs it on the spot */
static void test_try_not_started(void **state)
{
	struct job j = {.runs = 0};
	pthread_t t;

	(void)state;
	assert_int_equal(cg_once_init(&j.once), 0);
	assert_true(cg_once_try(&j.once, job_fn, &j));
	/* the pool's thread comes later and finds it done */
	assert_int_equal(pthread_create(&t, NULL, job_thread, &j), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(j.runs, 1);
	cg_once_destroy(&j.once);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_try_runs_once),
		cmocka_unit_test(test_wait_bounded),
		cmocka_unit_test(test_try_not_started),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
