/*
 * Unit tests of cg_pread_full: pread() semantics over preadv2
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
 * A fake preadv2 plays a script of results: so many bytes (short on
 * purpose), an error, end of file. The reads must come out as pread()
 * would have them: every byte in place, and an error in the middle an
 * error, never a short count a client would take for end of file.
 */

#define _GNU_SOURCE	/* O_DIRECT, mkstemp64, pwrite64 */
#include <stdint.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include "cg_dio.h"
#include "cg_sys.h"
#include "cg_test.h"

#define FILE_SIZE 100000
#define MAX_STEPS 8

/* One scripted call: return at most this many bytes, or fail with err */
struct step {
	ssize_t max;	/* -1: fail with err */
	int err;
};

static struct {
	const struct step *steps;
	unsigned nsteps;
	unsigned calls;
	int flags_seen;
	size_t largest;		/* the largest n asked of one call */
	uint64_t size;		/* the file's size; 0: FILE_SIZE */
} fake;

static unsigned char file_byte(uint64_t off)
{
	return (unsigned char)(off * 7 + 3);
}

static ssize_t fake_preadv2(int fd, void *buf, size_t n, uint64_t off,
			    int flags)
{
	const struct step *st = NULL;
	size_t i, len;

	assert_true(fake.calls < fake.nsteps);
	st = &fake.steps[fake.calls++];
	fake.flags_seen = flags;
	fake.largest = n > fake.largest ? n : fake.largest;
	if (st->max == -1) {
		errno = st->err;
		return -1;
	}
	len = n < (size_t)st->max ? n : (size_t)st->max;
	if (off >= (fake.size != 0 ? fake.size : FILE_SIZE)) {
		return 0;
	}
	if (len > (fake.size != 0 ? fake.size : FILE_SIZE) - off) {
		len = (fake.size != 0 ? fake.size : FILE_SIZE) - off;
	}
	for (i = 0; i < len; i++) {
		((unsigned char *)buf)[i] = file_byte(off + i);
	}
	return (ssize_t)len;
}

/* The DONTNEEDs of a read that drops as it goes, and what was read */
static struct {
	unsigned n;
	uint64_t off[16], len[16];
	uint64_t read_to;	/* the end of the last piece read */
	bool early;		/* a drop of bytes not yet read */
} drops;

static int fake_fadvise(int fd, uint64_t off, uint64_t len, int advice)
{
	assert_int_equal(advice, POSIX_FADV_DONTNEED);
	assert_true(drops.n < 16);
	drops.early |= off + len > drops.read_to;
	drops.off[drops.n] = off;
	drops.len[drops.n++] = len;
	return 0;
}

static ssize_t fake_preadv2_noting(int fd, void *buf, size_t n, uint64_t off,
				   int flags)
{
	ssize_t ret = fake_preadv2(fd, buf, n, off, flags);

	if (ret > 0) {
		drops.read_to = off + (uint64_t)ret;
	}
	return ret;
}

static const struct cg_sys fake_sys = {
	.preadv2 = fake_preadv2_noting,
	.fadvise = fake_fadvise,
};

static void check_bytes(const unsigned char *buf, uint64_t off, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (buf[i] != file_byte(off + i)) {
			fail_msg("byte %zu of the read at %ju is wrong", i,
				 (uintmax_t)off);
		}
	}
}

static void test_pread_full(void **state)
{
	static const struct step whole[] = {{1 << 20, 0}};
	static const struct step shorts[] = {{100, 0}, {1, 0}, {1 << 20, 0}};
	static const struct step eintr[] = {{-1, EINTR}, {1 << 20, 0}};
	static const struct step mid_eio[] = {{4096, 0}, {-1, EIO}};
	static const struct step first_eio[] = {{-1, EIO}};
	static const struct step unsupported[] = {{-1, EOPNOTSUPP}};
	static const struct step at_eof[] = {{1 << 20, 0}, {1 << 20, 0}};
	static const struct {
		const char *what;
		const struct step *steps;
		unsigned nsteps;
		uint64_t off;
		size_t n;
		ssize_t want;	/* bytes, or -1 */
		int err;
	} cases[] = {
		{"one call", whole, 1, 0, 65536, 65536, 0},
		{"short reads add up", shorts, 3, 10, 65536, 65536, 0},
		{"EINTR is retried", eintr, 2, 0, 4096, 4096, 0},
		{"EIO after some bytes is EIO", mid_eio, 2, 0, 65536, -1, EIO},
		{"EIO at once", first_eio, 1, 0, 65536, -1, EIO},
		{"EOPNOTSUPP reaches the caller", unsupported, 1, 0, 10, -1,
		 EOPNOTSUPP},
		{"short at end of file", at_eof, 2, FILE_SIZE - 100, 4096, 100,
		 0},
	};
	static unsigned char buf[1 << 17];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ssize_t got;

		fake.steps = cases[i].steps;
		fake.nsteps = cases[i].nsteps;
		fake.calls = 0;
		errno = 0;
		got = cg_pread_full(&fake_sys, 3, buf, cases[i].n,
				    cases[i].off, CG_RWF_DONTCACHE);
		if (got != cases[i].want) {
			fail_msg("%s: got %zd, want %zd", cases[i].what, got,
				 cases[i].want);
		}
		if (got == -1) {
			assert_int_equal(errno, cases[i].err);
		} else {
			check_bytes(buf, cases[i].off, (size_t)got);
		}
		assert_int_equal(fake.flags_seen, CG_RWF_DONTCACHE);
	}
}

static int fake_file_size(int fd, uint64_t *size)
{
	*size = fake.size != 0 ? fake.size : FILE_SIZE;
	return 0;
}

/*
 * An O_DIRECT read ends at a partial block or nothing only at the end of
 * the file. A filesystem that returns less in the middle (FUSE with
 * direct_io) makes it fail with EIO, so that the read goes again through
 * the next module: taken for the end of the file, the client's copy
 * came out short. Without a way to learn the size, short is the end.
 */
static void test_dio_read_full(void **state)
{
	static const struct step blocks[] = {{4096, 0}, {8192, 0},
					     {1 << 20, 0}};
	static const struct step mid_short[] = {{1000, 0}};
	static const struct step mid_none[] = {{4096, 0}, {0, 0}};
	static const struct step at_eof[] = {{1 << 20, 0}};
	static const struct step eintr[] = {{-1, EINTR}, {1 << 20, 0}};
	static const struct {
		const char *what;
		const struct step *steps;
		unsigned nsteps;
		bool sized;	/* sys->file_size given */
		uint64_t off;
		size_t n;
		ssize_t want;	/* bytes, or -1 and EIO */
	} cases[] = {
		{"aligned short reads add up", blocks, 3, true, 0, 65536,
		 65536},
		{"a partial block mid-file", mid_short, 1, true, 0, 65536, -1},
		{"nothing mid-file", mid_none, 2, true, 0, 65536, -1},
		{"a partial block at end of file", at_eof, 1, true,
		 FILE_SIZE - 1696, 4096, 1696},
		{"nothing at end of file", at_eof, 1, true, 102400, 4096, 0},
		{"EINTR is retried", eintr, 2, true, 0, 4096, 4096},
		{"no size: a partial block is the end", mid_short, 1, false, 0,
		 65536, 1000},
	};
	static unsigned char buf[1 << 17];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cg_sys sys = {.preadv2 = fake_preadv2};
		ssize_t got;

		if (cases[i].sized) {
			sys.file_size = fake_file_size;
		}
		fake.steps = cases[i].steps;
		fake.nsteps = cases[i].nsteps;
		fake.calls = 0;
		errno = 0;
		got = cg_dio_read_full(&sys, 3, buf, cases[i].n, cases[i].off,
				       4096);
		if (got != cases[i].want) {
			fail_msg("%s: got %zd, want %zd", cases[i].what, got,
				 cases[i].want);
		}
		if (got == -1) {
			assert_int_equal(errno, EIO);
		} else {
			check_bytes(buf, cases[i].off, (size_t)got);
		}
	}
}

/*
 * The copy of a HIT into smbd's buffer: the module's (the kernel's,
 * process_vm_readv() on this process) gives the same bytes as memcpy at
 * any size and alignment, a huge one included; without the hook it is
 * memcpy, with one it is the hook.
 */
static size_t hooked;

static void hook_copy(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
	hooked += n;
}

static void test_sys_copy(void **state)
{
	static const size_t sizes[] = {0, 1, 4095, 4096, 65537,
				       (8 << 20) + 123};
	const struct cg_sys plain = {0};
	const struct cg_sys hook = {.copy = hook_copy};
	size_t len = (9 << 20);
	unsigned char *src = malloc(len);
	unsigned char *dst = malloc(len);
	size_t i;
	size_t k;

	assert_non_null(src);
	assert_non_null(dst);
	for (k = 0; k < len; k++) {
		src[k] = (unsigned char)(k * 7 + k / 4096);
	}
	assert_non_null(cg_sys_linux.copy);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];

		memset(dst, 0xee, len);
		cg_sys_copy(&cg_sys_linux, dst + 3, src + 5, n);
		if (memcmp(dst + 3, src + 5, n) != 0 || dst[2] != 0xee ||
		    dst[3 + n] != 0xee) {
			fail_msg("the kernel's copy of %zu bytes differs", n);
		}
		memset(dst, 0xee, len);
		cg_sys_copy(&plain, dst, src + 1, n);
		assert_memory_equal(dst, src + 1, n);
		hooked = 0;
		cg_sys_copy(&hook, dst, src, n);
		assert_int_equal(hooked, n);
	}
	free(src);
	free(dst);
}

/*
 * An 8 MiB read at 16 MiB with flags, of a file with 7.5 MiB left there:
 * seven full pieces of 1 MiB and a half one, each call answered in full
 */
static ssize_t read_in_pieces(unsigned char *buf, size_t len, int flags)
{
	static const struct step big[] = {
		{8 << 20, 0}, {8 << 20, 0}, {8 << 20, 0}, {8 << 20, 0},
		{8 << 20, 0}, {8 << 20, 0}, {8 << 20, 0}, {8 << 20, 0},
		{8 << 20, 0},
	};
	ssize_t got;

	fake.size = (16 << 20) + (7 << 20) + (1 << 19);
	fake.steps = big;
	fake.nsteps = N_ELEM(big);
	fake.calls = 0;
	fake.largest = 0;
	got = cg_pread_full(&fake_sys, 3, buf, len, 16 << 20, flags);
	assert_int_equal(got, (7 << 20) + (1 << 19));
	assert_int_equal(fake.largest, 1 << 20);
	return got;
}

/*
 * An uncached read of 8 MiB goes in 1 MiB pieces, in order, so that no
 * more than a piece of it is in the page cache at once; the bytes are
 * the file's, and end of file still ends it short. Without the flag it
 * is one call.
 */
static void test_pread_pieces(void **state)
{
	static unsigned char buf[8 << 20];
	ssize_t got;

	got = read_in_pieces(buf, sizeof(buf), CG_RWF_DONTCACHE);
	/* and one more that finds the end of the file */
	assert_int_equal(fake.calls, 9);
	check_bytes(buf, 16 << 20, (size_t)got);

	/* Through the cache: one call for all of it */
	fake.calls = 0;
	fake.largest = 0;
	got = cg_pread_full(&fake_sys, 3, buf, sizeof(buf), 16 << 20, 0);
	assert_int_equal(got, (7 << 20) + (1 << 19));
	assert_int_equal(fake.largest, sizeof(buf));
	assert_int_equal(fake.calls, 2);
	fake.size = 0;
}

/*
 * A read of a stream that drops as it goes (CG_READ_DROP): the same
 * pieces, each dropped right after it was read and never before, the
 * flag itself never passed to preadv2
 */
static void test_pread_drop(void **state)
{
	static unsigned char buf[8 << 20];
	ssize_t got;
	unsigned i;

	drops = (typeof(drops)){0};
	got = read_in_pieces(buf, sizeof(buf), CG_READ_DROP);
	assert_int_equal(fake.flags_seen, 0);
	check_bytes(buf, 16 << 20, (size_t)got);
	assert_false(drops.early);
	assert_int_equal(drops.n, 8);
	for (i = 0; i < drops.n; i++) {
		assert_int_equal(drops.off[i], (16 << 20) + (i << 20));
		assert_int_equal(drops.len[i], i < 7 ? 1 << 20 : 1 << 19);
	}

	/* Through the cache, kept: no drop */
	fake.calls = 0;
	drops = (typeof(drops)){0};
	got = cg_pread_full(&fake_sys, 3, buf, sizeof(buf), 16 << 20, 0);
	assert_int_equal(got, (7 << 20) + (1 << 19));
	assert_int_equal(drops.n, 0);
	fake.size = 0;
}

/*
 * The real syscall table on a real sparse file past 4 GiB (issue 47): on
 * a 32-bit build without a 64-bit off_t the offset lost its high bits
 * and the read returned the start of the file (or failed between 2 and
 * 4 GiB, and fstat() with EOVERFLOW). Every read path the engine takes:
 * buffered, in pieces dropped once read, RWF_DONTCACHE where the kernel
 * and filesystem have it, O_DIRECT where the filesystem has it; the
 * size, and a DONTNEED there. t07 runs it as an i386 binary.
 */
static void test_real_past_4g(void **state)
{
	const uint64_t at = (4ULL << 30) + (64 << 10);	/* 4 GiB + 64 KiB */
	const size_t n = 1 << 20;
	const int flags[] = {0, CG_READ_DROP, CG_RWF_DONTCACHE};
	const char *dir = getenv("TMPDIR");
	char path[4096];
	unsigned char *want = NULL, *got = NULL;
	uint64_t size = 0;
	ssize_t r;
	size_t i;
	int fd, dfd;

	snprintf(path, sizeof(path), "%s/cg_past_4g.XXXXXX",
		 dir != NULL ? dir : "/tmp");
	/* the test's own I/O 64-bit whatever its off_t: the engine's is tested */
	fd = mkstemp64(path);
	assert_true(fd >= 0);
	unlink(path);
	want = malloc(n);
	assert_int_equal(posix_memalign((void **)&got, 4096, n), 0);
	assert_non_null(want);
	/* other bytes at the start, where a truncated offset lands */
	for (i = 0; i < n; i++) {
		want[i] = file_byte(i);
	}
	assert_int_equal(pwrite64(fd, want, n, 64 << 10), (ssize_t)n);
	for (i = 0; i < n; i++) {
		want[i] = (unsigned char)(file_byte(i) ^ 0x5a);
	}
	assert_int_equal(pwrite64(fd, want, n, (off64_t)at), (ssize_t)n);
	assert_int_equal(fsync(fd), 0);

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		memset(got, 0, n);
		r = cg_pread_full(&cg_sys_linux, fd, got, n, at, flags[i]);
		if (r == -1 && flags[i] == CG_RWF_DONTCACHE &&
		    (errno == EOPNOTSUPP || errno == EINVAL)) {
			continue;	/* no RWF_DONTCACHE here */
		}
		assert_int_equal(r, (ssize_t)n);
		assert_memory_equal(got, want, n);
	}
	/* as the module reopens it; a filesystem without O_DIRECT: none */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	dfd = open(path, O_RDONLY | O_DIRECT);
	if (dfd >= 0) {
		memset(got, 0, n);
		r = cg_dio_read_full(&cg_sys_linux, dfd, got, n, at, 4096);
		assert_int_equal(r, (ssize_t)n);
		assert_memory_equal(got, want, n);
		close(dfd);
	}
	assert_int_equal(cg_sys_linux.file_size(fd, &size), 0);
	assert_int_equal(size, at + n);
	assert_int_equal(cg_sys_linux.fadvise(fd, at, n, POSIX_FADV_DONTNEED),
			 0);
	close(fd);
	free(want);
	free(got);
}

CG_TEST_MAIN(NULL, NULL,
	     cmocka_unit_test(test_pread_full),
	     cmocka_unit_test(test_dio_read_full),
	     cmocka_unit_test(test_sys_copy),
	     cmocka_unit_test(test_pread_pieces),
	     cmocka_unit_test(test_pread_drop),
	     cmocka_unit_test(test_real_past_4g))
