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
