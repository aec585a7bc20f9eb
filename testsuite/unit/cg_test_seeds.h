/*
 * vfs_cacheguard unit tests: how many seeds the random passes run
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
 * How many seeds the random passes run (test_prefetch,
 * test_direct): seeds 1 to 8, or to CG_TEST_SEEDS. t02 runs 4 under
 * valgrind, whose subject is a memory error on any path the passes take,
 * not the eight seeds' mixes (the plain run and t01's sanitizers run them
 * all).
 */

#ifndef CG_TEST_SEEDS_H
#define CG_TEST_SEEDS_H

#include <stdlib.h>

static inline unsigned cg_test_seeds(void)
{
	const char *s = getenv("CG_TEST_SEEDS");
	unsigned n = s != NULL ? (unsigned)atoi(s) : 0;

	return n >= 1 && n <= 8 ? n : 8;
}

#endif
