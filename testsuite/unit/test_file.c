/*
 * Unit tests of cg_file: mode resolution, paths and fallbacks
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
 * Every decision about a file's reads, made by the engine: the mode a
 * file resolves to from what its filesystem lacks, the path of each
 * read, and what each kind of failure on each path does to the file and
 * to what is remembered of its filesystem. The hints follow the mode.
 */

#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cg_file.h"
#include "cg_sys.h"
#include "cg_test.h"
#include "cg_util.h"
#include "cg_write.h"

#define NONE 0
#define NO_DC CG_FS_NO_DONTCACHE
#define NO_DIO CG_FS_NO_DIRECT
#define REMOTE CG_FS_REMOTE

static unsigned n_sequential;
static unsigned n_random;
static unsigned n_normal;
static unsigned n_willneed;

static int fake_fadvise(int fd, uint64_t off, uint64_t len, int advice)
{
	n_sequential += advice == POSIX_FADV_SEQUENTIAL;
	n_random += advice == POSIX_FADV_RANDOM;
	n_normal += advice == POSIX_FADV_NORMAL;
	n_willneed += advice == POSIX_FADV_WILLNEED;
	return 0;
}

static const struct cg_sys fake_sys = {
	.fadvise = fake_fadvise,
	.resident = cg_test_cold,
};

static void test_resolve(void **state)
{
	static const struct {
		enum cg_mode want;
		unsigned lacks;
		enum cg_mode got;
	} cases[] = {
		/* direct first, then dontcache, then dontneed */
		{CG_MODE_AUTO, NONE, CG_MODE_DIRECT},
		{CG_MODE_AUTO, NO_DC, CG_MODE_DIRECT},
		{CG_MODE_AUTO, NO_DIO, CG_MODE_DONTCACHE},
		{CG_MODE_AUTO, NO_DC | NO_DIO, CG_MODE_DONTNEED},
		{CG_MODE_DONTCACHE, NONE, CG_MODE_DONTCACHE},
		{CG_MODE_DONTCACHE, NO_DC, CG_MODE_DONTNEED},
		{CG_MODE_DIRECT, NO_DC, CG_MODE_DIRECT},
		{CG_MODE_DIRECT, NO_DIO, CG_MODE_DONTCACHE},
		{CG_MODE_DIRECT, NO_DIO | NO_DC, CG_MODE_DONTNEED},
		{CG_MODE_DONTNEED, NONE, CG_MODE_DONTNEED},
		{CG_MODE_DONTNEED, NO_DC | NO_DIO, CG_MODE_DONTNEED},
		/*
		 * network and FUSE: auto never reads direct, dontcache where
		 * it works; a mode the administrator set stays
		 */
		{CG_MODE_AUTO, REMOTE, CG_MODE_DONTCACHE},
		{CG_MODE_AUTO, REMOTE | NO_DC, CG_MODE_DONTNEED},
		{CG_MODE_DIRECT, REMOTE, CG_MODE_DIRECT},
		{CG_MODE_DONTCACHE, REMOTE, CG_MODE_DONTCACHE},
		/* a module below must see every read */
		{CG_MODE_AUTO, CG_BELOW_READS, CG_MODE_DONTNEED},
		{CG_MODE_DIRECT, CG_BELOW_READS, CG_MODE_DONTNEED},
	};
	size_t i;

	for (i = 0; i < N_ELEM(cases); i++) {
		assert_int_equal(cg_mode_resolve(cases[i].want, cases[i].lacks),
				 cases[i].got);
	}
}

static enum cg_path choose(struct cg_file *f, uint64_t off, size_t n)
{
	struct cg_io io = cg_read_begin(&f->stream, 3, off, n);
	enum cg_path path = cg_file_choose(f, &io, n, false);

	io.uncached = path != CG_PATH_NEXT;
	cg_read_end(&f->stream, 3, &io, (ssize_t)n);
	return path;
}

/*
 * A file of 1 GiB in mode want on a filesystem lacking lacks, read until
 * its stream is active: the reads before that go to the next module
 */
static void start(struct cg_file *f,
		  struct cg_config *cfg,
		  enum cg_mode want,
		  unsigned lacks)
{
	uint64_t off;

	cg_config_init(cfg);
	cfg->mode = want;
	cg_file_init(f, cfg, &fake_sys, 1024 * MiB, lacks, 3);
	for (off = 0; off < cfg->stream_trigger - MiB; off += MiB) {
		assert_int_equal(choose(f, off, MiB), CG_PATH_NEXT);
	}
	choose(f, off, MiB);
	assert_int_equal(f->stream.state, CG_ACTIVE);
}

/* No room in the budget for one request: not a failure at all */
static void not_now_is_no_failure(struct cg_file *f, struct cg_config *cfg)
{
	start(f, cfg, CG_MODE_DIRECT, NONE);
	assert_int_equal(cg_file_read_failed(f, 3, CG_PATH_DIRECT,
					     CG_DIRECT_NOT_NOW, NONE),
			 0);
	assert_int_equal(f->mode, CG_MODE_DIRECT);
	assert_int_equal(f->fallbacks, 0);
}

static void test_choose(void **state)
{
	struct cg_config cfg;
	struct cg_file f;

	start(&f, &cfg, CG_MODE_DONTNEED, NONE);
	assert_int_equal(choose(&f, 8 * MiB, MiB), CG_PATH_NEXT);
	start(&f, &cfg, CG_MODE_AUTO, NONE);
	assert_int_equal(choose(&f, 8 * MiB, MiB), CG_PATH_DIRECT);
	/* a far read is no stream read: the next module */
	assert_int_equal(choose(&f, 700 * MiB, MiB), CG_PATH_NEXT);
	start(&f, &cfg, CG_MODE_DONTCACHE, NONE);
	assert_int_equal(choose(&f, 8 * MiB, MiB), CG_PATH_UNCACHED);
	/* a read smbd makes synchronously: uncached yes, direct no */
	assert_int_equal(cg_file_choose(&f, &(struct cg_io){.in_stream = true},
					MiB, true),
			 CG_PATH_UNCACHED);
	start(&f, &cfg, CG_MODE_DIRECT, NONE);
	assert_int_equal(cg_file_choose(&f, &(struct cg_io){.in_stream = true},
					MiB, true),
			 CG_PATH_NEXT);
	assert_int_equal(choose(&f, 8 * MiB, MiB), CG_PATH_DIRECT);
	/* below direct min io (64K): buffered */
	assert_int_equal(choose(&f, 9 * MiB, 4096), CG_PATH_NEXT);
}

/*
 * A module below that must see the reads (full_audit, commit for
 * writes, one not known) gets every stream read whole: dontneed, no
 * reads in pieces of the module's own, whatever the mode and whatever
 * later failures resolve to; writes follow CG_BELOW_WRITES alone
 */
static void test_below(void **state)
{
	static const enum cg_mode modes[] = {
		CG_MODE_AUTO,
		CG_MODE_DONTNEED,
		CG_MODE_DONTCACHE,
		CG_MODE_DIRECT,
	};
	struct cg_config cfg;
	struct cg_file f;
	struct cg_io io;
	size_t i;

	for (i = 0; i < N_ELEM(modes); i++) {
		start(&f, &cfg, modes[i], CG_BELOW_READS);
		assert_int_equal(f.mode, CG_MODE_DONTNEED);
		io = cg_read_begin(&f.stream, 3, 8 * MiB, MiB);
		assert_int_equal(cg_file_choose(&f, &io, MiB, false), CG_PATH_NEXT);
		assert_false(io.drop_pieces);
		cg_read_end(&f.stream, 3, &io, MiB);
		assert_true(cg_file_zerocopy_ok(&f));
		cg_file_direct_unavailable(&f, 3, CG_DIRECT_FAIL_LEASE, NONE);
		assert_int_equal(f.mode, CG_MODE_DONTNEED);
		assert_int_equal(cg_write_mode(modes[i], CG_BELOW_READS),
				 cg_write_mode(modes[i], NONE));
		assert_int_equal(cg_write_mode(modes[i], CG_BELOW_WRITES),
				 CG_MODE_DONTNEED);
	}
	/* the same stream without the module: reads in pieces */
	start(&f, &cfg, CG_MODE_DONTNEED, NONE);
	io = cg_read_begin(&f.stream, 3, 8 * MiB, MiB);
	assert_true(io.drop_pieces);
	cg_read_end(&f.stream, 3, &io, MiB);
	/* writes alone below: reads keep the mode */
	start(&f, &cfg, CG_MODE_DIRECT, CG_BELOW_WRITES);
	assert_int_equal(choose(&f, 8 * MiB, MiB), CG_PATH_DIRECT);
}

/* Which modules below must see the reads and writes */
static void test_below_kind(void **state)
{
	static const struct {
		const char *name;
		unsigned ops;
		enum cg_below_kind kind;
	} cases[] = {
		{"full_audit", CG_BELOW_READS | CG_BELOW_WRITES, CG_BELOW_SEES},
		{"time_audit", CG_BELOW_READS | CG_BELOW_WRITES, CG_BELOW_SEES},
		{"commit", CG_BELOW_WRITES, CG_BELOW_SEES},
		{"readahead", CG_BELOW_READS, CG_BELOW_SEES},
		{"io_uring", CG_BELOW_READS | CG_BELOW_WRITES, CG_BELOW_ENGINE},
		{"streams_xattr", CG_BELOW_READS | CG_BELOW_WRITES,
		 CG_BELOW_NAMES},
		{"streams_depot", CG_BELOW_READS | CG_BELOW_WRITES,
		 CG_BELOW_NAMES},
		{"fruit", CG_BELOW_READS | CG_BELOW_WRITES, CG_BELOW_NAMES},
		{"catia", CG_BELOW_READS | CG_BELOW_WRITES, CG_BELOW_NAMES},
		{"fileid", 0, CG_BELOW_PLAIN},
		{"acl_xattr", 0, CG_BELOW_PLAIN},
		/* not known, or no name: it must see them */
		{"io_uring2", CG_BELOW_READS, CG_BELOW_SEES},
		{"Fruit", CG_BELOW_READS, CG_BELOW_SEES},
		{NULL, CG_BELOW_WRITES, CG_BELOW_SEES},
		{NULL, 0, CG_BELOW_PLAIN},
	};
	size_t i;

	for (i = 0; i < N_ELEM(cases); i++) {
		assert_int_equal(cg_below_kind(cases[i].name, cases[i].ops),
				 cases[i].kind);
	}
}

/* sendfile reads through the cache: only where the stream does too */
static void test_zerocopy(void **state)
{
	struct cg_config cfg;
	struct cg_file f;

	cg_config_init(&cfg);
	cfg.mode = CG_MODE_DIRECT;
	cg_file_init(&f, &cfg, &fake_sys, 1024 * MiB, NONE, 3);
	assert_true(cg_file_zerocopy_ok(&f));	/* no stream yet */
	start(&f, &cfg, CG_MODE_DONTNEED, NONE);
	assert_true(cg_file_zerocopy_ok(&f));
	start(&f, &cfg, CG_MODE_DONTCACHE, NONE);
	assert_false(cg_file_zerocopy_ok(&f));
	start(&f, &cfg, CG_MODE_DIRECT, NONE);
	assert_false(cg_file_zerocopy_ok(&f));
	/* direct set up failed, no RWF_DONTCACHE: served as dontneed */
	cg_file_direct_unavailable(&f, 3, CG_DIRECT_FAIL_FILE, NO_DC);
	assert_true(cg_file_zerocopy_ok(&f));
	/* a dontcache stream that others share reads through the cache */
	start(&f, &cfg, CG_MODE_DONTCACHE, NONE);
	cg_stream_set_via(&f.stream, 3, CG_VIA_CACHE);
	assert_true(cg_file_zerocopy_ok(&f));
}

/* Every kind of failure on every path: the mode after, what is learnt */
static void test_failures(void **state)
{
	static const struct {
		const char *what;
		enum cg_mode want;
		unsigned lacks;
		enum cg_path path;
		int err;
		enum cg_mode mode;	/* after */
		unsigned learnt;
		const char *why;
	} cases[] = {
		{"auto without O_DIRECT, no RWF_DONTCACHE", CG_MODE_AUTO,
		 NO_DIO, CG_PATH_UNCACHED, EOPNOTSUPP, CG_MODE_DONTNEED, NO_DC,
		 "no RWF_DONTCACHE"},
		{"auto without O_DIRECT, RWF_DONTCACHE refused", CG_MODE_AUTO,
		 NO_DIO, CG_PATH_UNCACHED, EINVAL, CG_MODE_DONTNEED, NO_DC,
		 "no RWF_DONTCACHE"},
		{"dontcache, no RWF_DONTCACHE", CG_MODE_DONTCACHE, NONE,
		 CG_PATH_UNCACHED, EOPNOTSUPP, CG_MODE_DONTNEED, NO_DC,
		 "no RWF_DONTCACHE"},
		{"dontcache, EIO: this read", CG_MODE_DONTCACHE, NONE,
		 CG_PATH_UNCACHED, EIO, CG_MODE_DONTCACHE, NONE,
		 "uncached read failed"},
		{"dontcache, ENOMEM: this read", CG_MODE_DONTCACHE, NONE,
		 CG_PATH_UNCACHED, ENOMEM, CG_MODE_DONTCACHE, NONE,
		 "uncached read failed"},
		{"dontcache, EACCES: this read", CG_MODE_DONTCACHE, NONE,
		 CG_PATH_UNCACHED, EACCES, CG_MODE_DONTCACHE, NONE,
		 "uncached read failed"},
		{"direct, EIO: the file's next mode", CG_MODE_DIRECT, NONE,
		 CG_PATH_DIRECT, EIO, CG_MODE_DONTCACHE, NONE,
		 "direct read failed"},
		{"auto, EINVAL: the file's next mode", CG_MODE_AUTO, NONE,
		 CG_PATH_DIRECT, EINVAL, CG_MODE_DONTCACHE, NONE,
		 "direct read failed"},
		{"direct, ENOMEM, no RWF_DONTCACHE", CG_MODE_DIRECT, NO_DC,
		 CG_PATH_DIRECT, ENOMEM, CG_MODE_DONTNEED, NONE,
		 "direct read failed"},
	};
	struct cg_config cfg;
	struct cg_file f;
	size_t i;

	not_now_is_no_failure(&f, &cfg);

	for (i = 0; i < N_ELEM(cases); i++) {
		unsigned learnt;

		start(&f, &cfg, cases[i].want, cases[i].lacks);
		learnt = cg_file_read_failed(&f, 3, cases[i].path,
					     cases[i].err, cases[i].lacks);
		if (f.mode != cases[i].mode || learnt != cases[i].learnt ||
		    f.fallbacks != 1 ||
		    strcmp(f.fallback_why, cases[i].why) != 0) {
			fail_msg("%s: mode %s, learnt %u, fallbacks %ju (%s)",
				 cases[i].what, cg_mode_name(f.mode), learnt,
				 (uintmax_t)f.fallbacks, f.fallback_why);
		}
	}
}

/*
 * Which opens get a stream's state: none below min file size by smbd's
 * size at the open, unless this handle wrote the file since; the first
 * read decides with the size then. Mode off watches nothing, and auto
 * probes the filesystem only for a direction no module below must see.
 */
static void test_track(void **state)
{
	struct cg_config cfg;
	enum cg_tracking t;
	uint64_t min;

	(void)state;
	cg_config_init(&cfg);
	min = cfg.min_file_size;
	assert_true(min > 0);
	assert_true(cg_config_watches(&cfg));
	assert_false(cg_file_may_track(&cfg, min - 1, false));
	assert_true(cg_file_may_track(&cfg, min - 1, true));
	assert_true(cg_file_may_track(&cfg, min, false));
	/* a file that stayed small after all is not tracked */
	assert_true(cg_file_may_track(&cfg, 0, true));
	assert_false(cg_file_may_track(&cfg, 4096, false));

	/* the first read decides for the rest of the open, either way */
	t = CG_TRACKING_UNASKED;
	assert_false(cg_file_track_read(&t, &cfg, true, min - 1));
	assert_int_equal(t, CG_TRACKING_NO);
	assert_false(cg_file_track_read(&t, &cfg, true, min));
	t = CG_TRACKING_UNASKED;
	assert_true(cg_file_track_read(&t, &cfg, true, min));
	assert_int_equal(t, CG_TRACKING_YES);
	assert_true(cg_file_track_read(&t, &cfg, true, 0));
	/* no size to be had (fstat failed): left alone */
	t = CG_TRACKING_UNASKED;
	assert_false(cg_file_track_read(&t, &cfg, false, min));
	assert_int_equal(t, CG_TRACKING_NO);

	cfg.mode = CG_MODE_AUTO;
	assert_true(cg_config_probes(&cfg, 0, CG_BELOW_READS));
	assert_false(cg_config_probes(&cfg, CG_BELOW_READS, CG_BELOW_READS));
	assert_true(cg_config_probes(&cfg, CG_BELOW_READS, CG_BELOW_WRITES));
	cfg.mode = CG_MODE_DONTCACHE;
	assert_false(cg_config_probes(&cfg, 0, CG_BELOW_READS));

	cfg.mode = CG_MODE_OFF;
	assert_false(cg_config_watches(&cfg));
	assert_false(cg_file_may_track(&cfg, min, true));
	assert_false(cg_file_may_track(&cfg, min, false));
	assert_false(cg_config_probes(&cfg, 0, CG_BELOW_READS));
}

/*
 * One read as the glue carries it out: the call for its path, and what
 * its end means. Every retry is one plain read through the next module,
 * which is always the answer: a read ends after two calls at most.
 */
static void test_read_after(void **state)
{
	static const struct {
		const char *what;
		enum cg_mode mode;
		bool pieces;
		enum cg_path path;
		enum cg_call call;
		ssize_t ret;
		int err;
		enum cg_after after;
		unsigned learnt;
		uint64_t fallbacks;
		bool uncached;	/* of the answer */
	} cases[] = {
		{"next, read", CG_MODE_DONTNEED, false, CG_PATH_NEXT,
		 CG_CALL_NEXT, MiB, 0, CG_AFTER_DONE, NONE, 0, false},
		{"next, failed: the answer", CG_MODE_DONTNEED, false,
		 CG_PATH_NEXT, CG_CALL_NEXT, -1, EIO, CG_AFTER_DONE, NONE, 0,
		 false},
		{"pieces, read", CG_MODE_DONTNEED, true, CG_PATH_NEXT,
		 CG_CALL_PIECES, MiB, 0, CG_AFTER_DONE, NONE, 0, false},
		{"pieces, failed: again, whole, nothing learnt",
		 CG_MODE_DONTNEED, true, CG_PATH_NEXT, CG_CALL_PIECES, -1,
		 ENOMEM, CG_AFTER_AGAIN, NONE, 0, false},
		{"dontcache, read", CG_MODE_DONTCACHE, false, CG_PATH_UNCACHED,
		 CG_CALL_DONTCACHE, MiB, 0, CG_AFTER_DONE, NONE, 0, true},
		{"dontcache, none in the kernel", CG_MODE_DONTCACHE, false,
		 CG_PATH_UNCACHED, CG_CALL_DONTCACHE, -1, EOPNOTSUPP,
		 CG_AFTER_FELL_BACK, NO_DC, 1, false},
		{"dontcache, EIO", CG_MODE_DONTCACHE, false, CG_PATH_UNCACHED,
		 CG_CALL_DONTCACHE, -1, EIO, CG_AFTER_FELL_BACK, NONE, 1,
		 false},
		{"direct, read", CG_MODE_DIRECT, false, CG_PATH_DIRECT,
		 CG_CALL_DIRECT, MiB, 0, CG_AFTER_DONE, NONE, 0, true},
		{"direct, EIO", CG_MODE_DIRECT, false, CG_PATH_DIRECT,
		 CG_CALL_DIRECT, -1, EIO, CG_AFTER_FELL_BACK, NONE, 1, false},
		{"direct, no budget for this one: no fallback",
		 CG_MODE_DIRECT, false, CG_PATH_DIRECT, CG_CALL_DIRECT, -1,
		 CG_DIRECT_NOT_NOW, CG_AFTER_FELL_BACK, NONE, 0, false},
	};
	struct cg_config cfg;
	struct cg_file f;
	size_t i;

	(void)state;
	for (i = 0; i < N_ELEM(cases); i++) {
		struct cg_io io = {.drop_pieces = cases[i].pieces};
		enum cg_path path = cases[i].path;
		enum cg_after after;
		unsigned learnt = 99;

		start(&f, &cfg, cases[i].mode, NONE);
		if (cg_file_call(&io, path) != cases[i].call) {
			fail_msg("%s: call %d", cases[i].what,
				 cg_file_call(&io, path));
		}
		after = cg_file_read_after(&f, 3, &io, &path, cases[i].ret,
					   cases[i].err, NONE, &learnt);
		if (after != cases[i].after || learnt != cases[i].learnt ||
		    f.fallbacks != cases[i].fallbacks) {
			fail_msg("%s: after %d, learnt %u, fallbacks %ju",
				 cases[i].what, after, learnt,
				 (uintmax_t)f.fallbacks);
		}
		if (after == CG_AFTER_DONE) {
			assert_int_equal(path, cases[i].path);
			assert_int_equal(io.uncached, cases[i].uncached);
			continue;
		}
		/* again: one plain read, whose end is the answer */
		assert_int_equal(path, CG_PATH_NEXT);
		assert_int_equal(cg_file_call(&io, path), CG_CALL_NEXT);
		assert_int_equal(cg_file_read_after(&f, 3, &io, &path, -1, EIO,
						    NONE, &learnt),
				 CG_AFTER_DONE);
		assert_false(io.uncached);
	}
}

/* Direct reads that cannot be set up: the filesystem, the file, memory */
static void test_direct_unavailable(void **state)
{
	static const struct {
		enum cg_mode want;
		unsigned lacks;
		enum cg_direct_fail fail;
		enum cg_mode mode;
		unsigned learnt;
		uint64_t fallbacks;
		enum cg_path path;	/* of a stream read after */
	} cases[] = {
		{CG_MODE_DIRECT, NONE, CG_DIRECT_FAIL_FS, CG_MODE_DONTCACHE,
		 NO_DIO, 0, CG_PATH_UNCACHED},
		{CG_MODE_AUTO, NO_DC, CG_DIRECT_FAIL_FS, CG_MODE_DONTNEED,
		 NO_DIO, 0, CG_PATH_NEXT},
		{CG_MODE_DIRECT, NONE, CG_DIRECT_FAIL_FILE, CG_MODE_DONTCACHE,
		 NONE, 1, CG_PATH_UNCACHED},
		{CG_MODE_DIRECT, NO_DC, CG_DIRECT_FAIL_FILE, CG_MODE_DONTNEED,
		 NONE, 1, CG_PATH_NEXT},
		{CG_MODE_DIRECT, NONE, CG_DIRECT_FAIL_LEASE, CG_MODE_DONTCACHE,
		 NONE, 1, CG_PATH_UNCACHED},
		{CG_MODE_AUTO, NO_DC, CG_DIRECT_FAIL_LEASE, CG_MODE_DONTNEED,
		 NONE, 1, CG_PATH_NEXT},
		/* the server's direct memory is held by other streams */
		{CG_MODE_AUTO, NONE, CG_DIRECT_FAIL_ROOM, CG_MODE_DONTCACHE,
		 NONE, 1, CG_PATH_UNCACHED},
		{CG_MODE_AUTO, NO_DC, CG_DIRECT_FAIL_ROOM, CG_MODE_DONTNEED,
		 NONE, 1, CG_PATH_NEXT},
	};
	struct cg_config cfg;
	struct cg_file f;
	size_t i;

	not_now_is_no_failure(&f, &cfg);

	for (i = 0; i < N_ELEM(cases); i++) {
		unsigned learnt;

		start(&f, &cfg, cases[i].want, cases[i].lacks);
		learnt = cg_file_direct_unavailable(&f, 3, cases[i].fail,
						    cases[i].lacks);
		assert_int_equal(f.mode, cases[i].mode);
		assert_int_equal(learnt, cases[i].learnt);
		assert_int_equal(f.fallbacks, cases[i].fallbacks);
		assert_int_equal(choose(&f, 8 * MiB, MiB), cases[i].path);
	}

	/*
	 * A kernel oplock on the file: auto goes on uncached where the
	 * filesystem takes RWF_DONTCACHE (no second open needed), and
	 * learns nothing about the filesystem
	 */
	start(&f, &cfg, CG_MODE_AUTO, NONE);
	assert_int_equal(cg_file_direct_unavailable(&f, 3,
						    CG_DIRECT_FAIL_LEASE,
						    NONE),
			 0);
	assert_int_equal(f.mode, CG_MODE_DONTCACHE);
	assert_int_equal(f.fallbacks, 1);
	assert_string_equal(f.fallback_why, "smbd holds a kernel oplock on "
			    "it, which a second open would break");
	assert_int_equal(choose(&f, 8 * MiB, MiB), CG_PATH_UNCACHED);
}

/*
 * Hints follow the mode: a direct stream gets none, even with readahead
 * set; once it falls back to the page cache it gets them at once.
 */
static void test_hints_follow_mode(void **state)
{
	struct cg_config cfg;
	struct cg_file f;

	n_sequential = n_random = n_normal = n_willneed = 0;
	cg_config_init(&cfg);
	cfg.mode = CG_MODE_DIRECT;
	cfg.readahead = 8 * MiB;
	cg_file_init(&f, &cfg, &fake_sys, 1024 * MiB, NONE, 3);
	choose(&f, 0, 8 * MiB);
	assert_int_equal(f.stream.state, CG_ACTIVE);
	assert_int_equal(choose(&f, 8 * MiB, MiB), CG_PATH_DIRECT);
	assert_int_equal(n_random + n_normal + n_willneed, 0);
	/* Buffered from now: the stream's own readahead, 2 MiB a piece */
	cg_file_read_failed(&f, 3, CG_PATH_DIRECT, EIO, NO_DC);
	assert_int_equal(n_random, 1);
	assert_int_equal(n_willneed, 4);
	cg_stream_close(&f.stream, 3);
	assert_int_equal(n_normal, 1);
	assert_int_equal(n_sequential, 0);
	cg_file_served(&f, CG_PATH_NEXT, 100);
	cg_file_served(&f, CG_PATH_DIRECT, -1);
	assert_int_equal(f.bytes[CG_PATH_NEXT], 100);
	assert_int_equal(f.bytes[CG_PATH_DIRECT], 0);
}

/*
 * The close summary: nothing for a file that never streamed, was never
 * hot and never fell back; otherwise every counter in its place, the
 * longest call on the event loop and the last fallback's reason
 */
static void test_summary(void **state)
{
	struct cg_config cfg;
	struct cg_file f;
	char line[640];
	char small[16];

	(void)state;
	cg_config_init(&cfg);
	cfg.mode = CG_MODE_DIRECT;
	cg_file_init(&f, &cfg, &fake_sys, 1024 * MiB, NONE, 3);
	f.calls.pread = 5;
	assert_false(cg_file_summary(&f, line, sizeof(line)));

	start(&f, &cfg, CG_MODE_DIRECT, NONE);
	cg_file_served(&f, CG_PATH_DIRECT, 4096);
	f.calls.pread_send = 7;
	cg_calls_loop_took(&f.calls, "send", 30000);
	cg_calls_loop_took(&f.calls, "done", 12000);	/* not the longest */
	cg_file_read_failed(&f, 3, CG_PATH_DIRECT, EIO, NONE);
	assert_true(cg_file_summary(&f, line, sizeof(line)));
	assert_non_null(strstr(line, "size 1073741824 read "));
	assert_non_null(strstr(line, "direct 4096; dropped "));
	assert_non_null(strstr(line, "; streams 1 (kernel readahead "));
	assert_non_null(strstr(line, "reads via pread_send 7 pread 0 "
				     "sendfile 0; on the event loop at "
				     "most 30 us (send); fallbacks 1: "));
	assert_int_equal(f.calls.loop_max_ns, 30000);

	/* cut to the buffer, never past it */
	assert_true(cg_file_summary(&f, small, sizeof(small)));
	assert_int_equal(strlen(small), sizeof(small) - 1);
}

/*
 * The glue's questions about an open, as the engine answers them: which
 * opens are the module's, whose descriptor it may use, the flags of each
 * call that reads in pieces, and what a change drops of the prefetch
 */
static void test_open_questions(void **state)
{
	struct cg_config cfg;
	int64_t off;
	uint64_t n;

	(void)state;
	cg_config_init(&cfg);
	assert_true(cg_file_watches(&cfg, false, false, false));
	assert_false(cg_file_watches(&cfg, true, false, false));
	assert_false(cg_file_watches(&cfg, false, true, false));
	assert_false(cg_file_watches(&cfg, false, false, true));
	cfg.mode = CG_MODE_OFF;
	assert_false(cg_file_watches(&cfg, false, false, false));

	assert_true(cg_file_fd_is_own(true, true, true));
	assert_false(cg_file_fd_is_own(false, true, true));
	assert_false(cg_file_fd_is_own(true, false, true));
	assert_false(cg_file_fd_is_own(true, true, false));

	assert_int_equal(cg_file_call_flags(CG_CALL_DONTCACHE),
			 CG_RWF_DONTCACHE);
	assert_int_equal(cg_file_call_flags(CG_CALL_PIECES), CG_READ_DROP);

	cg_file_change(CG_CHANGE_WRITE, 4096, 100, &off, &n);
	assert_int_equal(off, 4096);
	assert_int_equal(n, 100);
	cg_file_change(CG_CHANGE_COPY, 0, MiB, &off, &n);
	assert_int_equal(off, 0);
	assert_int_equal(n, MiB);
	cg_file_change(CG_CHANGE_ALLOCATE, MiB, MiB, &off, &n);
	assert_int_equal(off, MiB);
	/* the end of file may move: every segment may end wrongly */
	cg_file_change(CG_CHANGE_GROW, MiB, MiB, &off, &n);
	assert_int_equal(off, -1);
	cg_file_change(CG_CHANGE_TRUNCATE, 0, 0, &off, &n);
	assert_int_equal(off, -1);
	cg_file_change(CG_CHANGE_WRITE, -1, 0, &off, &n);
	assert_int_equal(off, -1);
}

/* "vfs objects" entries name their modules as vfs_init_custom reads them */
static void test_stack_name(void **state)
{
	static const char *const cases[][2] = {
		{"acl_xattr", "acl_xattr"},
		{" full_audit : prefix ", "full_audit"},
		{"streams_xattr:x:y", "streams_xattr"},
		{"/usr/lib/samba/vfs/io_uring.so", "io_uring"},
		{" /opt/m/x.y.so :opt", "x"},
		{"", ""},
		{" : ", ""},
	};
	char buf[64];
	size_t i;

	for (i = 0; i < CG_ARRAY_SIZE(cases); i++) {
		snprintf(buf, sizeof(buf), "%s", cases[i][0]);
		assert_string_equal(cg_stack_name(buf), cases[i][1]);
	}
}

CG_TEST_MAIN(NULL, NULL,
	     cmocka_unit_test(test_resolve),
	     cmocka_unit_test(test_open_questions),
	     cmocka_unit_test(test_choose),
	     cmocka_unit_test(test_zerocopy),
	     cmocka_unit_test(test_below),
	     cmocka_unit_test(test_below_kind),
	     cmocka_unit_test(test_failures),
	     cmocka_unit_test(test_read_after),
	     cmocka_unit_test(test_track),
	     cmocka_unit_test(test_direct_unavailable),
	     cmocka_unit_test(test_hints_follow_mode),
	     cmocka_unit_test(test_summary),
	     cmocka_unit_test(test_stack_name))
