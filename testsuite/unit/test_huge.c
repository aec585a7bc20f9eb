/*
 * Unit tests of the huge-page accounting of direct mode's buffers
 * (cg_huge.c): THP's setting, smaps, and the counters
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

#define _GNU_SOURCE
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "cg_huge.h"

#define MiB (1024 * 1024ULL)

static void test_thp_setting(void **state)
{
	assert_int_equal(cg_thp_parse("always [madvise] never\n"),
			 CG_THP_MADVISE);
	assert_int_equal(cg_thp_parse("[always] madvise never\n"),
			 CG_THP_ALWAYS);
	assert_int_equal(cg_thp_parse("always madvise [never]\n"),
			 CG_THP_NEVER);
	assert_int_equal(cg_thp_parse(""), CG_THP_UNKNOWN);
	assert_int_equal(cg_thp_parse(NULL), CG_THP_UNKNOWN);
	assert_string_equal(cg_thp_name(CG_THP_NEVER), "never");
	assert_string_equal(cg_thp_name(CG_THP_UNKNOWN), "unknown");
}

/*
 * Three mappings as a 6.1 kernel prints them: a library whose name has
 * spaces, the buffer (huge pages), and one that ends at the buffer's
 * next page; field names that start with hex digits (FilePmdMapped)
 */
static const char smaps[] =
	"7f0000000000-7f0000200000 r-xp 00000000 fe:01 1234   "
	"/usr/lib/a b.so\n"
	"Size:               2048 kB\n"
	"FilePmdMapped:         0 kB\n"
	"AnonHugePages:         0 kB\n"
	"VmFlags: rd ex mr mw me\n"
	"7f0000400000-7f0000c00000 rw-p 00000000 00:00 0 \n"
	"Size:               8192 kB\n"
	"Anonymous:          8192 kB\n"
	"AnonHugePages:      6144 kB\n"
	"ShmemPmdMapped:        0 kB\n"
	"VmFlags: rd wr mr mw me ac hg\n"
	"7f0000c00000-7f0000e00000 ---p 00000000 00:00 0 \n"
	"Size:               2048 kB\n"
	"VmFlags: mr mw me nr\n";

static int huge_at(uintptr_t addr, uint64_t *bytes)
{
	FILE *f = fmemopen((void *)smaps, sizeof(smaps) - 1, "r");
	int ret;

	assert_non_null(f);
	ret = cg_smaps_huge(f, addr, bytes);
	fclose(f);
	return ret;
}

static void test_smaps(void **state)
{
	uint64_t bytes = 1;

	assert_int_equal(huge_at(0x7f0000400000, &bytes), 0);
	assert_int_equal(bytes, 6 * MiB);
	assert_int_equal(huge_at(0x7f0000bff000, &bytes), 0);
	assert_int_equal(bytes, 6 * MiB);
	/* the first: its field says none */
	assert_int_equal(huge_at(0x7f0000000000, &bytes), 0);
	assert_int_equal(bytes, 0);
	/* the end is the next one's: no field there, none */
	bytes = 1;
	assert_int_equal(huge_at(0x7f0000c00000, &bytes), 0);
	assert_int_equal(bytes, 0);
	/* the hole between the first two, and past the last */
	assert_int_equal(huge_at(0x7f0000300000, &bytes), ENOENT);
	assert_int_equal(bytes, 0);
	assert_int_equal(huge_at(0x7f0000e00000, &bytes), ENOENT);
}

/*
 * This kernel about this process: a mapping asked for huge pages and
 * touched is found, and holds whole huge pages at most; one that asked
 * for none holds none unless THP is "always"
 */
static void test_smaps_of_this_process(void **state)
{
	size_t len = 8 * MiB;
	uint8_t *p = mmap(NULL, len + 2 * MiB, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *a = NULL;
	char text[128] = "";
	enum cg_thp thp;
	uint64_t bytes = 0;
	FILE *f = NULL;

	assert_true(p != MAP_FAILED);
	a = (uint8_t *)(((uintptr_t)p + 2 * MiB - 1) & ~(2 * MiB - 1));
	f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (f != NULL) {
		if (fgets(text, sizeof(text), f) == NULL) {
			text[0] = '\0';
		}
		fclose(f);
	}
	thp = cg_thp_parse(text);
	assert_int_equal(madvise(a, len, MADV_NOHUGEPAGE), 0);
	memset(a, 1, len);
	f = fopen("/proc/self/smaps", "r");
	assert_non_null(f);
	assert_int_equal(cg_smaps_huge(f, (uintptr_t)a, &bytes), 0);
	fclose(f);
	assert_int_equal(bytes, 0);

	assert_int_equal(madvise(a, len, MADV_DONTNEED), 0);
	assert_int_equal(madvise(a, len, MADV_HUGEPAGE), 0);
	memset(a, 2, len);
	f = fopen("/proc/self/smaps", "r");
	assert_non_null(f);
	assert_int_equal(cg_smaps_huge(f, (uintptr_t)a + len - 1, &bytes),
			 0);
	fclose(f);
	assert_true(bytes <= len + 2 * MiB);
	assert_int_equal(bytes % (2 * MiB), 0);
	if (thp == CG_THP_NEVER) {
		assert_int_equal(bytes, 0);
	}
	print_message("THP %s: %ju of %zu bytes in huge pages\n",
		      cg_thp_name(thp), (uintmax_t)bytes, len);
	munmap(p, len + 2 * MiB);
}

static void test_counters(void **state)
{
	struct cg_huge_stats st = {0};
	uint64_t a = 0, b = 0, c = 0;

	/* a: 8 MiB, huge pages come as it fills; most seen is kept */
	cg_huge_seen(&st, &a, 2 * MiB);
	cg_huge_seen(&st, &a, 6 * MiB);
	cg_huge_seen(&st, &a, 4 * MiB);
	assert_int_equal(a, 6 * MiB);
	/* b: probed, ordinary pages only */
	cg_huge_seen(&st, &b, 0);
	assert_int_equal(st.in_use, 6 * MiB);

	cg_huge_release(&st, a, 8 * MiB, true);
	assert_int_equal(st.in_use, 0);
	assert_int_equal(st.buffers, 1);
	assert_int_equal(st.ordinary, 0);
	cg_huge_release(&st, b, 8 * MiB, true);
	assert_int_equal(st.buffers, 2);
	assert_int_equal(st.ordinary, 1);
	/* never filled, or no buffer at all (direct without prefetch) */
	cg_huge_release(&st, c, 8 * MiB, false);
	cg_huge_release(&st, c, 0, true);
	assert_int_equal(st.buffers, 2);
	assert_int_equal(st.ordinary, 1);
	assert_int_equal(st.in_use, 0);
}

/*
 * The prefetch buffer starts on a huge page, its first used bytes are
 * usable, more become usable as it grows, and the probe finds its
 * mapping; a plain buffer of 0 bytes is still a buffer
 */
static void test_buffers(void **state)
{
	uint8_t *p = NULL;
	void *q = NULL;
	uint64_t huge = UINT64_MAX;

	(void)state;
	p = cg_huge_reserve(8 * MiB, 2 * MiB);
	assert_non_null(p);
	assert_int_equal((uintptr_t)p % CG_HUGE_PAGE, 0);
	memset(p, 1, 2 * MiB);
	assert_true(cg_huge_commit(p, 2 * MiB, 2 * MiB));
	memset(p + 2 * MiB, 2, 2 * MiB);
	assert_int_equal(p[4 * MiB - 1], 2);
	/* the mapping holds the reserve, no more */
	assert_true(cg_huge_probe(p, &huge));
	assert_true(huge <= 8 * MiB);
	cg_huge_unmap(p, 8 * MiB);

	q = cg_huge_map(0);
	assert_non_null(q);
	assert_int_equal((uintptr_t)q % 4096, 0);
	cg_huge_unmap(q, 0);
	cg_huge_unmap(NULL, 0);
}

/*
 * When a fill looks for huge pages: the first fill of the table's last
 * segment (fills go in order, so all of the buffer has been touched),
 * once per table size (a look reads all of smaps: about 6 ms)
 */
static void test_probe_due(void **state)
{
	(void)state;
	assert_false(cg_huge_probe_due(0, 4, 0));
	assert_false(cg_huge_probe_due(2, 4, 0));
	assert_true(cg_huge_probe_due(3, 4, 0));
	assert_false(cg_huge_probe_due(3, 4, 4));	/* looked already */
	/* the table grew to eight: its new last segment looks again */
	assert_false(cg_huge_probe_due(3, 8, 4));
	assert_true(cg_huge_probe_due(7, 8, 4));
	assert_false(cg_huge_probe_due(0, 0, 0));	/* no table */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thp_setting),
		cmocka_unit_test(test_smaps),
		cmocka_unit_test(test_smaps_of_this_process),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_buffers),
		cmocka_unit_test(test_probe_due),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
