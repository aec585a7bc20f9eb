/*
 * vfs_cacheguard fuzz harnesses: decoding the fuzzer's bytes, reporting
 * a broken invariant
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

#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FZ_MIN(a, b) ((a) < (b) ? (a) : (b))
#define FZ_MAX(a, b) ((a) > (b) ? (a) : (b))
#define FZ_N_ELEM(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The fuzzer's bytes, read front to back. An exhausted input reads as
 * zeros, so every input decodes to some run and a shorter input is a
 * prefix of the same run: minimizing keeps the failure.
 */
struct fz_in {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t fz_u8(struct fz_in *in)
{
	uint8_t v = 0;

	if (in->n > 0) {
		v = in->p[0];
		in->p++;
		in->n--;
	}
	return v;
}

static inline uint16_t fz_u16(struct fz_in *in)
{
	uint16_t lo = fz_u8(in);
	uint16_t hi = fz_u8(in);

	return (uint16_t)(lo | (hi << 8));
}

static inline uint32_t fz_u32(struct fz_in *in)
{
	uint32_t lo = fz_u16(in);
	uint32_t hi = fz_u16(in);

	return lo | (hi << 16);
}

/* One of a table's entries */
#define FZ_PICK(in, table) ((table)[fz_u8(in) % FZ_N_ELEM(table)])

/*
 * A broken invariant: say which, then abort() so that libFuzzer saves
 * the input as a crash and a replay fails the same way.
 */
static void fz_violation(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void fz_violation(const char *fmt, ...)
{
	va_list ap;

	fputs("INVARIANT VIOLATED: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

#endif /* FUZZ_COMMON_H */
