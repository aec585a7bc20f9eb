/*
 * vfs_cacheguard engine: the small helpers every engine file may use
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

#ifndef CG_UTIL_H
#define CG_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define CG_MIN(a, b) ((a) < (b) ? (a) : (b))
#define CG_MAX(a, b) ((a) > (b) ? (a) : (b))
#define CG_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A page of the page cache, the unit of every drop and residency */
#define CG_PAGE 4096ULL

static inline bool cg_is_pow2(uint64_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

/* CLOCK_MONOTONIC in ns: what a job took, when a wait is overdue */
static inline uint64_t cg_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif /* CG_UTIL_H */
