/*
 * Unit tests of direct I/O (cg_dio.c): a job's work on a real file,
 * alignment and the planning of a read
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
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/utsname.h>

#include "cg_dev.h"
#include "cg_dio.h"
#include "cg_prefetch.h"
#include "cg_test.h"

#define SIZE 10000

static uint8_t want[SIZE];

/* A file of SIZE known bytes, unlinked: its descriptor */
static int file_new(void)
{
	unsigned i;

	for (i = 0; i < SIZE; i++) {
		want[i] = (uint8_t)(i * 7 + 3);
	}
	return cg_test_unlinked(want, SIZE);
}

/* A fill: the bytes, short at end of file, the version taken before */
static void test_fill(void **state)
{
	uint8_t *buf = NULL;
	int fd = file_new();
	struct cg_dio_job j = {
		.kind = CG_JOB_FILL,
		.sys = &cg_sys_linux,
		.fd = fd,
		.count = 16384,
		.offset = 8192,
		.align = 4096,
	};

	(void)state;
	assert_int_equal(posix_memalign((void **)&buf, 4096, 16384), 0);
	j.buf = buf;
	cg_dio_job_run(&j);
	assert_true(j.version_ok);
	assert_int_equal(j.ver.size, SIZE);
	assert_int_equal(j.ret, SIZE - 8192);
	assert_int_equal(j.err, 0);
	assert_memory_equal(buf, want + 8192, SIZE - 8192);
	assert_true(j.duration > 0);
	free(buf);
	close(fd);
}

/*
 * A HIT's copy: done while the pieces are the file's version, refused
 * (stale, nothing copied) once the file changed under them
 */
static void test_copy(void **state)
{
	uint8_t mem[64];
	uint8_t dst[64];
	struct cg_pf_piece piece = {.slot = 0, .from = 8, .len = 16};
	struct cg_dio_job j;
	int fd = file_new();

	(void)state;
	memset(mem, 0xaa, sizeof(mem));
	assert_int_equal(cg_pf_version_now(fd, &piece.ver), 0);
	j = (struct cg_dio_job){
		.kind = CG_JOB_COPY,
		.sys = &cg_sys_linux,
		.fd = fd,
		.buf = dst,
		.mem = mem,
		.pieces = &piece,
		.npieces = 1,
	};
	memset(dst, 0, sizeof(dst));
	cg_dio_job_run(&j);
	assert_false(j.stale);
	assert_int_equal(j.ret, 16);
	assert_int_equal(dst[0], 0xaa);

	/* the file grows: its version is another */
	assert_int_equal(pwrite(fd, "x", 1, SIZE), 1);
	memset(dst, 0, sizeof(dst));
	cg_dio_job_run(&j);
	assert_true(j.stale);
	assert_int_equal(j.ret, -1);
	assert_int_equal(dst[0], 0);
	close(fd);
}

/* No version, no read: the job fails with fstat's errno */
/*
 * What a job gave its request: a read through a bounce trimmed to the
 * request (short at end of file, nothing when it ends before), copied
 * out; an in-place read or a copy as it returned
 */
static void test_job_result(void **state)
{
	uint8_t bounce[1024];
	uint8_t dst[64];
	struct cg_dio_plan p;
	struct cg_dio_job j = {
		.kind = CG_JOB_READ,
		.sys = &cg_sys_linux,
		.buf = bounce,
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bounce); i++) {
		bounce[i] = (uint8_t)i;
	}
	assert_true(cg_dio_plan(100, 50, 512, &p));
	j.ret = 512;
	memset(dst, 0, sizeof(dst));
	assert_int_equal(cg_dio_job_result(&j, &p, 50, dst), 50);
	assert_memory_equal(dst, bounce + 100, 50);
	j.ret = 120;
	assert_int_equal(cg_dio_job_result(&j, &p, 50, dst), 20);
	j.ret = 80;
	assert_int_equal(cg_dio_job_result(&j, &p, 50, dst), 0);
	memset(dst, 0, sizeof(dst));
	j.inplace = true;
	j.ret = 50;
	assert_int_equal(cg_dio_job_result(&j, &p, 50, dst), 50);
	j.kind = CG_JOB_COPY;
	j.inplace = false;
	j.ret = 30;
	assert_int_equal(cg_dio_job_result(&j, &p, 50, dst), 30);
	for (i = 0; i < sizeof(dst); i++) {
		assert_int_equal(dst[i], 0);	/* neither touched it */
	}
}

static void test_bad_fd(void **state)
{
	uint8_t buf[4096];
	struct cg_dio_job j = {
		.kind = CG_JOB_READ,
		.sys = &cg_sys_linux,
		.fd = -1,
		.buf = buf,
		.count = sizeof(buf),
		.align = 512,
	};

	(void)state;
	cg_dio_job_run(&j);
	assert_false(j.version_ok);
	assert_int_equal(j.ret, -1);
	assert_int_equal(j.err, EBADF);
}

/*
 * ---- planning ----------------------------------------------------
 *
 * Planning is checked against pread() semantics: a widened read of a
 * file of a given size returns what O_DIRECT returns there (the bytes up
 * to end of file, a final partial block included), and trimming it must
 * give exactly what pread() of the request would.
 */

struct align_case {
	bool have;
	uint32_t mem, off, lbs;
	size_t want;
};

static const struct align_case align_cases[] = {
	{true, 512, 512, 512, 512},
	{true, 4, 512, 4096, 512},	/* offset alignment rules */
	{true, 4096, 512, 512, 4096},	/* a stricter memory alignment */
	{true, 512, 4096, 512, 4096},
	{true, 0, 0, 512, 0},		/* statx: no O_DIRECT here */
	{true, 512, 3000, 512, 512},	/* nonsense: the block size */
	{false, 0, 0, 512, 512},
	{false, 0, 0, 4096, 4096},
	{false, 0, 0, 0, 4096},
	{false, 0, 0, 100, 4096},
	{false, 0, 0, 256, 4096},	/* below a sector: not believed */
};

static void test_alignment(void **state)
{
	size_t i;

	for (i = 0; i < N_ELEM(align_cases); i++) {
		const struct align_case *c = &align_cases[i];
		size_t got = cg_dio_alignment(c->have, c->mem, c->off, c->lbs);

		if (got != c->want) {
			fail_msg("case %zu: alignment %zu, want %zu",
				 i, got, c->want);
		}
	}
}

/* What pread(fd, buf, n, off) returns on a file of size bytes */
static size_t pread_len(uint64_t size, uint64_t off, size_t n)
{
	return off >= size ? 0 : (size_t)MIN((uint64_t)n, size - off);
}

/* What an aligned O_DIRECT read of the plan returns there */
static size_t direct_len(uint64_t size, const struct cg_dio_plan *p)
{
	return pread_len(size, p->off, p->len);
}

struct plan_case {
	uint64_t off;
	size_t n;
	size_t align;
	uint64_t size;		/* of the file, for the trim */
	uint64_t want_off;
	size_t want_len;
	size_t want_skip;
	size_t want_bytes;	/* pread's answer */
};

#define F (10 * MiB + 1234)	/* a file ending mid-block */

static const struct plan_case plan_cases[] = {
	/* offset 0 */
	{0, 1, 512, F, 0, 512, 0, 1},
	{0, 511, 512, F, 0, 512, 0, 511},
	{0, 512, 512, F, 0, 512, 0, 512},
	{0, 4095, 4096, F, 0, 4096, 0, 4095},
	{0, 4097, 4096, F, 0, 8192, 0, 4097},
	{0, 4097, 512, F, 0, 4608, 0, 4097},
	/* unaligned offsets and sizes */
	{1, 1, 512, F, 0, 512, 1, 1},
	{511, 1, 512, F, 0, 512, 511, 1},
	{511, 2, 512, F, 0, 1024, 511, 2},
	{4095, 4097, 4096, F, 0, 8192, 4095, 4097},
	{4095, 4098, 4096, F, 0, 12288, 4095, 4098},
	{4097, 4095, 4096, F, 4096, 4096, 1, 4095},
	{12345, 65536, 4096, F, 12288, 69632, 57, 65536},
	{MiB + 7, 8 * MiB - 3, 4096, F, MiB, 8 * MiB + 4096, 7, 8 * MiB - 3},
	/* at and around end of file: short, as pread is */
	{F - 1, 1, 512, F, F - 1 - 209, 512, 209, 1},
	{F - 1, 4097, 4096, F, F - 1 - 1233, 8192, 1233, 1},
	{F - 100, 4095, 512, F, F - 210, 4608, 110, 100},
	{F, 1, 512, F, F - 210, 512, 210, 0},
	{F, 4096, 4096, F, F - 1234, 8192, 1234, 0},
	/* past end of file: nothing */
	{F + 1, 511, 512, F, F - 210, 1024, 211, 0},
	{F + 1, 301, 512, F, F - 210, 512, 211, 0},
	{F + 8 * MiB, 4097, 4096, F, F + 8 * MiB - 1234, 8192, 1234, 0},
	{20 * MiB, 1, 4096, F, 20 * MiB, 4096, 0, 0},
	/* aligned requests are not widened */
	{8 * MiB, 1 * MiB, 4096, F, 8 * MiB, 1 * MiB, 0, 1 * MiB},
	{10 * MiB, 1 * MiB, 4096, F, 10 * MiB, 1 * MiB, 0, 1234},
};

/*
 * Only the filesystem's refusal of O_DIRECT (EINVAL from open) turns
 * direct off for every file on it; the reopen's permission check, a full
 * descriptor table or memory are one file's trouble.
 */
static void test_open_failure_scope(void **state)
{
	static const struct {
		int err;
		enum cg_direct_fail want;
	} cases[] = {
		{EINVAL, CG_DIRECT_FAIL_FS},
		{EACCES, CG_DIRECT_FAIL_FILE},
		{EPERM, CG_DIRECT_FAIL_FILE},
		{EMFILE, CG_DIRECT_FAIL_FILE},
		{ENFILE, CG_DIRECT_FAIL_FILE},
		{ENOMEM, CG_DIRECT_FAIL_FILE},
		{ENOENT, CG_DIRECT_FAIL_FILE},
		{ENOSYS, CG_DIRECT_FAIL_FILE},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(cg_direct_open_failure(cases[i].err),
				 cases[i].want);
	}
}

/*
 * Whether a file's direct reads may be set up at all: not while smbd
 * holds a kernel oplock on it (the O_DIRECT open would break it), not
 * when the kernel gives it no direct-I/O alignment (this file only)
 */
static void test_may_open(void **state)
{
	assert_int_equal(cg_direct_may_open(false, 512), CG_DIRECT_OK);
	assert_int_equal(cg_direct_may_open(false, 4096), CG_DIRECT_OK);
	assert_int_equal(cg_direct_may_open(true, 4096),
			 CG_DIRECT_FAIL_LEASE);
	assert_int_equal(cg_direct_may_open(false, 0), CG_DIRECT_FAIL_FILE);
	/* the oplock is the first reason: nothing else is asked */
	assert_int_equal(cg_direct_may_open(true, 0), CG_DIRECT_FAIL_LEASE);
	assert_string_equal(cg_direct_fail_name(CG_DIRECT_FAIL_LEASE),
			    "smbd holds a kernel oplock on it, which a second "
			    "open would break");
	assert_string_equal(cg_direct_fail_name(CG_DIRECT_FAIL_ROOM),
			    "no room in direct memory for its prefetch");
}

/*
 * In place only where the kernel pins an O_DIRECT read's pages (6.5+):
 * Debian 12's 6.1 does not, 13's 6.12 does
 */
static void test_pins_pages(void **state)
{
	static const struct {
		const char *release;
		bool pins;
	} cases[] = {
		{"6.1.0-28-amd64", false},
		{"6.4.16", false},
		{"6.5.0", true},
		{"6.12.57+deb13-amd64", true},
		{"6.18.44-fc-v1272", true},
		{"7.0", true},
		{"5.15.0-91-generic", false},
		{"4.19.0", false},
		{"", false},
		{"x.y", false},
		{NULL, false},
	};
	size_t i;

	(void)state;
	for (i = 0; i < N_ELEM(cases); i++) {
		assert_int_equal(cg_dio_pins_pages(cases[i].release),
				 cases[i].pins);
	}
}

/*
 * A file's alignment: statx's, none (0), or a power of two; without
 * statx and a block queue (a bad descriptor, device 0:0), 4096
 */
static void test_fd_alignment(void **state)
{
	int fd = file_new();
	size_t align = cg_dio_fd_alignment(fd, 0);
	struct utsname u;

	(void)state;
	assert_true(align == 0 || (align >= 512 && (align & (align - 1)) == 0));
	assert_int_equal(cg_dio_fd_alignment(-1, 0), 4096);
	assert_int_equal(uname(&u), 0);
	assert_int_equal(cg_dio_kernel_pins_pages(),
			 cg_dio_pins_pages(u.release));
	close(fd);
}

static void test_plan_table(void **state)
{
	size_t i;

	for (i = 0; i < N_ELEM(plan_cases); i++) {
		const struct plan_case *c = &plan_cases[i];
		struct cg_dio_plan p;
		size_t bytes;

		if (!cg_dio_plan(c->off, c->n, c->align, &p)) {
			fail_msg("case %zu: no plan", i);
		}
		if (p.off != c->want_off || p.len != c->want_len ||
		    p.skip != c->want_skip) {
			fail_msg("case %zu: plan %" PRIu64 "+%zu skip %zu, "
				 "want %" PRIu64 "+%zu skip %zu",
				 i, p.off, p.len, p.skip,
				 c->want_off, c->want_len, c->want_skip);
		}
		bytes = cg_dio_trim(&p, c->n, direct_len(c->size, &p));
		if (bytes != c->want_bytes ||
		    bytes != pread_len(c->size, c->off, c->n)) {
			fail_msg("case %zu: %zu bytes, want %zu", i, bytes,
				 c->want_bytes);
		}
	}
}

static void test_plan_refuses(void **state)
{
	struct cg_dio_plan p;

	assert_false(cg_dio_plan(0, 1, 0, &p));
	assert_false(cg_dio_plan(0, 1, 1000, &p));
	assert_false(cg_dio_plan(INT64_MAX, 2, 512, &p));
	assert_false(cg_dio_plan(INT64_MAX - 100, 50, 512, &p));
	assert_false(cg_dio_plan(UINT64_MAX, 1, 512, &p));
	assert_true(cg_dio_plan(INT64_MAX - 4095 - 4096, 4096, 4096, &p));
	assert_true(cg_dio_plan(100, 0, 512, &p));
	assert_int_equal(p.len, 0);
	assert_int_equal(cg_dio_trim(&p, 0, 0), 0);
}

/* Every small offset, length and size: aligned reads, pread's answer */
static void test_plan_property(void **state)
{
	static const size_t aligns[] = {512, 4096};
	static const size_t lens[] = {1, 2, 511, 512, 513, 4095, 4096, 4097,
				      65535, 65536, 65537, 1000000};
	static const uint64_t sizes[] = {0, 1, 511, 512, 4097, 70000, 1048576};
	size_t a, l, s;
	uint64_t off;

	for (a = 0; a < N_ELEM(aligns); a++) {
	for (l = 0; l < N_ELEM(lens); l++) {
	for (s = 0; s < N_ELEM(sizes); s++) {
	for (off = 0; off < 3 * aligns[a] + 2; off += 7) {
		uint64_t o = off * 97;	/* spread over the file and past it */
		struct cg_dio_plan p;

		assert_true(cg_dio_plan(o, lens[l], aligns[a], &p));
		assert_int_equal(p.off % aligns[a], 0);
		assert_int_equal(p.len % aligns[a], 0);
		assert_true(p.off + p.skip == o);
		assert_true(p.skip + lens[l] <= p.len);
		assert_true(p.len < lens[l] + 2 * aligns[a]);
		assert_int_equal(cg_dio_trim(&p, lens[l],
					     direct_len(sizes[s], &p)),
				 pread_len(sizes[s], o, lens[l]));
	}
	}
	}
	}
}

/* ---- reads into the caller's buffer ------------------------------- */

/*
 * A fake O_DIRECT file: its byte at x is a function of x; a read whose
 * buffer, offset or length is not aligned fails with EINVAL, as the
 * kernel's does; at end of file it returns the bytes up to the end.
 */
struct dio_file {
	uint64_t size;
	size_t align;
	unsigned reads;
	bool fail_tail;		/* the second read fails with EIO */
};

static uint8_t file_byte(uint64_t x)
{
	return (uint8_t)(x * 2654435761u >> 13);
}

static ssize_t dio_read(void *ctx, uint8_t *buf, size_t len, uint64_t off)
{
	struct dio_file *f = ctx;
	size_t got;
	size_t i;

	f->reads++;
	if ((uintptr_t)buf % f->align != 0 || off % f->align != 0 ||
	    len % f->align != 0) {
		errno = EINVAL;
		return -1;
	}
	if (f->fail_tail && f->reads == 2) {
		errno = EIO;
		return -1;
	}
	got = pread_len(f->size, off, len);
	for (i = 0; i < got; i++) {
		buf[i] = file_byte(off + i);
	}
	return (ssize_t)got;
}

/*
 * Every small misalignment of the caller's buffer, request length and
 * file size: the plan reads aligned only, needs less than three units of
 * bounce, and gives exactly what pread() of the request gives.
 */
static void test_inplace_property(void **state)
{
	static const size_t aligns[] = {512, 4096};
	static const size_t lens[] = {1, 511, 512, 513, 4095, 4096, 4097,
				      8192, 65537, 1048576, 1048576 + 700};
	static const uint64_t sizes[] = {0, 700, 4096, 70000, 1048576,
					 1048576 + 4096 + 3, 3 * 1048576};
	static const uint64_t offs[] = {0, 4096, 65536, 1048576};
	size_t maxlen = 1048576 + 700;
	uint8_t *mem = malloc(maxlen + 2 * 4096);
	uint8_t *bounce = aligned_alloc(4096, 3 * 4096);
	unsigned planned = 0;
	size_t a, l, s, o, sh;

	assert_non_null(mem);
	assert_non_null(bounce);
	for (a = 0; a < N_ELEM(aligns); a++) {
	for (l = 0; l < N_ELEM(lens); l++) {
	for (s = 0; s < N_ELEM(sizes); s++) {
	for (o = 0; o < N_ELEM(offs); o++) {
	for (sh = 0; sh < aligns[a]; sh += sh < 20 ? 1 : 499) {
		size_t align = aligns[a];
		size_t n = lens[l];
		uint64_t off = offs[o];
		/* buf sits sh bytes past an aligned address */
		uint8_t *base = (uint8_t *)(((uintptr_t)mem + 4095) &
					    ~(uintptr_t)4095);
		uint8_t *buf = base + sh;
		struct dio_file f = {.size = sizes[s], .align = align};
		struct cg_dio_inplace p;
		size_t want = pread_len(sizes[s], off, n);
		ssize_t got;
		size_t i;

		if (!cg_dio_inplace(off, n, (uintptr_t)buf, align, &p)) {
			/* only when too short for a block past the shift */
			assert_true(n < (align - sh) % align + align);
			continue;
		}
		planned++;
		assert_int_equal(p.n, n);
		assert_int_equal((uintptr_t)(buf + p.shift) % align, 0);
		assert_int_equal(p.body % align, 0);
		assert_true(p.shift + p.body <= n);
		assert_true(p.tail.len < 3 * align);
		assert_int_equal(p.tail.off, off + p.body);
		memset(buf, 0xee, n);
		got = cg_dio_read_inplace(&p, buf, off, bounce, dio_read,
					  &f);
		if (got != (ssize_t)want) {
			fail_msg("align %zu n %zu size %" PRIu64 " off %"
				 PRIu64 " shift %zu: %zd bytes, want %zu",
				 align, n, sizes[s], off, sh, got, want);
		}
		for (i = 0; i < want; i++) {
			if (buf[i] != file_byte(off + i)) {
				fail_msg("align %zu n %zu off %" PRIu64
					 " shift %zu: byte %zu wrong",
					 align, n, off, sh, i);
			}
		}
	}
	}
	}
	}
	}
	assert_true(planned > 1000);
	free(bounce);
	free(mem);
}

/*
 * What a request read on its own (a MISS) costs: in place, only its
 * tail's small bounce and nothing of the budget (the prefetch of a few
 * streams may hold all of it, and their MISSes must stay direct); else a
 * bounce of the widened read, which the budget must have room for
 */
static void test_read_bounce(void **state)
{
	struct cg_dio_inplace in;
	struct cg_dio_plan plan, want;
	struct cg_dio_job j = {
		.kind = CG_JOB_READ,
		.buf = (uint8_t *)(uintptr_t)(0x10000 + 512),
		.count = 8 * MiB,
		.align = 4096,
	};
	size_t bounce = 0;
	bool charge = true;

	(void)state;
	/* in place: the tail's few blocks, not charged */
	assert_true(cg_dio_read_plan(&j, true, &plan, &bounce, &charge));
	assert_true(cg_dio_plan(0, 8 * MiB, 4096, &want));
	assert_memory_equal(&plan, &want, sizeof(plan));
	assert_true(cg_dio_inplace(0, 8 * MiB, 0x10000 + 512, 4096, &in));
	assert_true(j.inplace);
	assert_memory_equal(&j.plan, &in, sizeof(in));
	assert_int_equal(bounce, in.tail.len);
	assert_true(bounce < 3 * 4096);
	assert_false(charge);
	/* a kernel that does not pin pages: the widened read, charged */
	assert_true(cg_dio_read_plan(&j, false, &plan, &bounce, &charge));
	assert_false(j.inplace);
	assert_int_equal(bounce, plan.len);
	assert_true(charge);
	/* an unaligned offset cannot go in place */
	j.offset = 100;
	assert_true(cg_dio_read_plan(&j, true, &plan, &bounce, &charge));
	assert_false(j.inplace);
	assert_int_equal(bounce, plan.len);
	assert_true(charge);
	/* no widened read past the largest off_t */
	j.offset = INT64_MAX - 100;
	assert_false(cg_dio_read_plan(&j, true, &plan, &bounce, &charge));
}

static void test_inplace_refuses(void **state)
{
	struct cg_dio_inplace p;
	struct dio_file f = {.size = 1 * MiB, .align = 512, .fail_tail = true};
	uint8_t *mem = aligned_alloc(4096, 2 * MiB);
	uint8_t *bounce = aligned_alloc(4096, 4096);

	assert_non_null(mem);
	assert_non_null(bounce);
	/* an unaligned offset, a bad alignment, a request in the shift */
	assert_false(cg_dio_inplace(100, MiB, 4096, 512, &p));
	assert_false(cg_dio_inplace(0, MiB, 4096, 1000, &p));
	assert_false(cg_dio_inplace(0, 400, 4096 + 100, 512, &p));
	assert_false(cg_dio_inplace(0, 600, 4096 + 100, 512, &p));
	assert_false(cg_dio_inplace(UINT64_MAX - 511, 512, 4096, 512, &p));
	/* an aligned request needs no tail, and one read */
	assert_true(cg_dio_inplace(0, MiB, (uintptr_t)mem, 512, &p));
	assert_int_equal(p.shift, 0);
	assert_int_equal(p.body, MiB);
	assert_int_equal(p.tail.len, 0);
	assert_int_equal(cg_dio_read_inplace(&p, mem, 0, bounce, dio_read,
					     &f),
			 MiB);
	assert_int_equal(f.reads, 1);
	/* a failed tail read fails the request */
	f.reads = 0;
	assert_true(cg_dio_inplace(0, 64 * KiB, (uintptr_t)mem + 16, 512,
				   &p));
	assert_int_equal(cg_dio_read_inplace(&p, mem + 16, 0, bounce,
					     dio_read, &f),
			 -1);
	assert_int_equal(errno, EIO);
	free(bounce);
	free(mem);
}

/* ---- prefetch geometry -------------------------------------------- */

CG_TEST_MAIN(NULL, NULL,
	     cmocka_unit_test(test_alignment),
	     cmocka_unit_test(test_open_failure_scope),
	     cmocka_unit_test(test_may_open),
	     cmocka_unit_test(test_pins_pages),
	     cmocka_unit_test(test_fd_alignment),
	     cmocka_unit_test(test_plan_table),
	     cmocka_unit_test(test_plan_refuses),
	     cmocka_unit_test(test_plan_property),
	     cmocka_unit_test(test_inplace_property),
	     cmocka_unit_test(test_inplace_refuses),
	     cmocka_unit_test(test_read_bounce),
	     cmocka_unit_test(test_fill),
	     cmocka_unit_test(test_copy),
	     cmocka_unit_test(test_job_result),
	     cmocka_unit_test(test_bad_fd))
