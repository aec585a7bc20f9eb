/*
 * vfs_cacheguard unit tests: streams of one file in several processes
 * (cg_share.c)
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
 * The locks are real: the stream file is a temporary file, and each
 * stream opens its own descriptor of it, as two smbd processes would
 * (OFD locks of two descriptors conflict like those of two processes).
 * fadvise() is the fake: it records each DONTNEED per file descriptor,
 * so a test can ask which bytes a stream dropped.
 */

#include <stdint.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cg_file.h"
#include "cg_share.h"
#include "cg_sys.h"
#include "cg_test.h"

#define FILE_SIZE (256 * MiB)
#define READ_SIZE MiB
#define MAX_DROPS 4096

struct drop {
	int fd;
	uint64_t off;
	uint64_t end;
};

static struct {
	struct cg_test_lock lock;	/* the stream file */
	struct drop drops[MAX_DROPS];
	unsigned ndrops;
	unsigned mark;		/* dropped() looks at drops from here */
} h;

static int fake_fadvise(int fd, uint64_t off, uint64_t len, int advice)
{
	if (advice == POSIX_FADV_DONTNEED && h.ndrops < MAX_DROPS) {
		h.drops[h.ndrops++] = (struct drop){fd, off, off + len};
	}
	return 0;
}

static int fake_share_open(void)
{
	return cg_test_lock_open(&h.lock);
}

static const struct cg_sys fake_sys = {
	.fadvise = fake_fadvise,
	.resident = cg_test_cold,
	.share_open = fake_share_open,
};

/* Bytes of [off, end) that fd's DONTNEEDs since h.mark covered */
static uint64_t dropped(int fd, uint64_t off, uint64_t end)
{
	uint64_t total = 0, pos;

	/* page by page: drops may overlap each other */
	for (pos = off; pos < end; pos += 4096) {
		unsigned i;

		for (i = h.mark; i < h.ndrops; i++) {
			if (h.drops[i].fd == fd && h.drops[i].off <= pos &&
			    pos < h.drops[i].end) {
				total += 4096;
				break;
			}
		}
	}
	return total;
}

/* Every MiB of the file was dropped by one of descriptors a and b */
static void assert_all_dropped(int a, int b)
{
	uint64_t pos, missing = 0;

	for (pos = 0; pos < FILE_SIZE; pos += MiB) {
		if (dropped(a, pos, pos + MiB) + dropped(b, pos, pos + MiB) ==
		    0) {
			missing += MiB;
		}
	}
	assert_int_equal(missing, 0);
}

struct reader {
	struct cg_config cfg;
	struct cg_file f;
	int fd;			/* the file's descriptor, for fadvise */
	uint64_t pos;
};

static void reader_init(struct reader *r,
			int fd,
			enum cg_mode mode,
			uint64_t slot)
{
	char err[128];

	cg_config_init(&r->cfg);
	assert_int_equal(cg_config_set(&r->cfg, "reader gap", "32M", err,
				       sizeof(err)),
			 0);
	r->cfg.mode = mode;
	r->fd = fd;
	r->pos = 0;
	cg_file_init(&r->f, &r->cfg, &fake_sys, FILE_SIZE, 0, fd);
	r->f.stream.share.slot = slot;
}

/*
 * One request of r at its position, which must take path want; uncached:
 * what the read reports back (it went around the cache)
 */
static void reader_read_one(struct reader *r, enum cg_path want,
			    bool uncached)
{
	struct cg_io io = cg_read_begin(&r->f.stream, r->fd, r->pos,
					READ_SIZE);

	assert_int_equal(cg_file_choose(&r->f, &io, READ_SIZE, false), want);
	io.uncached = uncached;
	cg_read_end(&r->f.stream, r->fd, &io, READ_SIZE);
	r->pos += READ_SIZE;
}

/* Read sequentially up to "to", one request at a time */
static void reader_read_to(struct reader *r, uint64_t to)
{
	while (r->pos < to) {
		struct cg_io io = cg_read_begin(&r->f.stream, r->fd, r->pos,
						READ_SIZE);

		io.uncached = cg_file_choose(&r->f, &io, READ_SIZE, false) !=
			      CG_PATH_NEXT;
		cg_read_end(&r->f.stream, r->fd, &io, READ_SIZE);
		r->pos += READ_SIZE;
	}
}

/* A on descriptor 7 and B on 8: streams of the file in slot, in mode */
static void pair_init(struct reader *a,
		      struct reader *b,
		      enum cg_mode mode,
		      uint64_t slot)
{
	reader_init(a, 7, mode, slot);
	reader_init(b, 8, mode, slot);
}

/* B, the trailer, reads [0, 8M); then A, the leader, up to 64M */
static void pair_lead(struct reader *a, struct reader *b)
{
	reader_read_to(b, 8 * MiB);
	reader_read_to(a, 64 * MiB);
}

static void pair_close(struct reader *a, struct reader *b)
{
	cg_stream_close(&a->f.stream, a->fd);
	cg_stream_close(&b->f.stream, b->fd);
}

static int setup(void **state)
{
	memset(&h, 0, sizeof(h));
	assert_int_equal(cg_test_lock_new(&h.lock, "share-test"), 0);
	return 0;
}

static int teardown(void **state)
{
	unlink(h.lock.path);
	return 0;
}

/*
 * A reads ahead while B, started at the same file, still needs its
 * first part: A keeps the reader gap ahead of B, drops the rest; B drops
 * what it has read; once B has passed, what A kept goes too.
 */
static void test_leader_keeps_for_trailer(void **state)
{
	struct reader a, b;
	uint64_t slot = cg_share_slot(8, 12);

	pair_init(&a, &b, CG_MODE_DONTNEED, slot);
	/* B has read [0, 8M) and dropped it; it claims [8M, 40M) */
	reader_read_to(&b, 8 * MiB);
	assert_int_equal(b.f.stream.state, CG_ACTIVE);
	assert_int_equal(dropped(8, 0, 8 * MiB), 8 * MiB);
	reader_read_to(&a, 128 * MiB);
	assert_int_equal(a.f.stream.state, CG_ACTIVE);
	assert_true(a.f.stream.share.seen);
	/* Nothing B still needs went, and A dropped beyond B's gap */
	assert_int_equal(dropped(7, 8 * MiB, 40 * MiB), 0);
	assert_int_equal(dropped(7, 40 * MiB, 96 * MiB), 56 * MiB);
	assert_int_equal(a.f.stream.share.kept_lo, 8 * MiB);

	/* B moves on: its claim follows, and A's next window drop lets go */
	reader_read_to(&b, 48 * MiB);
	reader_read_to(&a, 144 * MiB);
	assert_true(dropped(7, 0, 24 * MiB) + dropped(8, 0, 24 * MiB) >=
		    24 * MiB);

	/* A closes: its footprint goes, except what B still needs */
	h.mark = h.ndrops;
	cg_stream_close(&a.f.stream, a.fd);
	assert_int_equal(a.f.stream.share.fd, -1);
	assert_int_equal(dropped(7, 48 * MiB, 80 * MiB), 0);
	assert_int_equal(dropped(7, 80 * MiB, 144 * MiB), 64 * MiB);
	h.mark = 0;
	reader_read_to(&b, FILE_SIZE);
	cg_stream_close(&b.f.stream, b.fd);
	/* Every byte of the file was dropped by one of them */
	assert_all_dropped(7, 8);
}

/*
 * The leader finishes and closes, keeping the trailer's claim; the
 * trailer gives up early: it drops what was kept for it, and nothing
 * either of them read is left behind
 */
static void test_trailer_leaves_early(void **state)
{
	struct reader a, b;
	uint64_t slot = cg_share_slot(8, 19);

	pair_init(&a, &b, CG_MODE_DONTNEED, slot);
	pair_lead(&a, &b);
	reader_read_to(&b, 9 * MiB);	/* B sees A */
	assert_true(b.f.stream.share.seen);
	reader_read_to(&a, FILE_SIZE);
	cg_stream_close(&a.f.stream, a.fd);
	assert_int_equal(dropped(7, 8 * MiB, 40 * MiB), 0);
	reader_read_to(&b, 12 * MiB);
	cg_stream_close(&b.f.stream, b.fd);
	assert_all_dropped(7, 8);
}

/* Read [off, off + len) at once, one request at a time */
static void reader_read_at(struct reader *r, uint64_t off, uint64_t len)
{
	r->pos = off;
	reader_read_to(r, off + len);
}

/*
 * Linux's cifs client (6.12, netfs) with two local readers of one file:
 * they share the client's page cache, and its readahead sends each piece
 * of one scan through either of its two handles, which one smbd serves
 * (captured in the 6.12 guest, the offsets of a 48 MiB file scaled to
 * this one). B reads [2M, 6M) and then nothing until [200M, 208M); A
 * reads the rest. One client's handles keep nothing for each other: each
 * drops what it reads, and nothing is left after the closes.
 */
static void test_one_client_two_handles(void **state)
{
	struct reader a, b;
	uint64_t slot = cg_share_slot(8, 21);
	char err[128];

	pair_init(&a, &b, CG_MODE_DONTNEED, slot);
	assert_int_equal(cg_config_set(&a.cfg, "stream trigger", "512K", err,
				       sizeof(err)),
			 0);
	assert_int_equal(cg_config_set(&b.cfg, "stream trigger", "512K", err,
				       sizeof(err)),
			 0);
	a.f.stream.share.client = 4242;
	b.f.stream.share.client = 4242;
	reader_read_at(&a, 0, 2 * MiB);
	reader_read_at(&b, 2 * MiB, 4 * MiB);
	assert_int_equal(b.f.stream.state, CG_ACTIVE);
	reader_read_at(&a, 6 * MiB, 194 * MiB);
	assert_int_equal(a.f.stream.state, CG_ACTIVE);
	/* B's claim does not hold A's pages: the client has them */
	assert_false(a.f.stream.share.seen);
	assert_int_equal(dropped(7, 8 * MiB, 38 * MiB), 30 * MiB);
	reader_read_at(&a, 208 * MiB, 48 * MiB);
	reader_read_at(&b, 200 * MiB, 8 * MiB);
	pair_close(&a, &b);
	assert_all_dropped(7, 8);

	/* Another client's stream of the file is still kept for */
	pair_init(&a, &b, CG_MODE_DONTNEED, slot);
	a.f.stream.share.client = 4242;
	b.f.stream.share.client = 4343;
	h.mark = h.ndrops;
	pair_lead(&a, &b);
	assert_true(a.f.stream.share.seen);
	assert_int_equal(dropped(7, 8 * MiB, 40 * MiB), 0);
	pair_close(&a, &b);
}

/*
 * The same client as above, another run: the client's readahead sent B
 * the pieces beyond where A stopped, one far from the next. Each of B's
 * reads is a piece of its client's scan, not a stray of B's stream: B
 * drops each piece behind it, and nothing either read stays cached.
 */
static void test_one_client_jumping_handle(void **state)
{
	struct reader a, b;
	uint64_t slot = cg_share_slot(8, 22), off;

	pair_init(&a, &b, CG_MODE_DONTNEED, slot);
	a.f.stream.share.client = 4242;
	b.f.stream.share.client = 4242;
	reader_read_at(&a, 0, 2 * MiB);
	reader_read_at(&b, 2 * MiB, 4 * MiB);
	reader_read_at(&a, 6 * MiB, 94 * MiB);
	assert_int_equal(a.f.stream.state, CG_ACTIVE);
	for (off = 120 * MiB; off < FILE_SIZE; off += 40 * MiB) {
		reader_read_at(&b, off, 4 * MiB);
	}
	pair_close(&a, &b);
	for (off = 120 * MiB; off < FILE_SIZE; off += 40 * MiB) {
		assert_int_equal(dropped(8, off, off + 4 * MiB), 4 * MiB);
	}
	assert_int_equal(dropped(7, 0, 2 * MiB) + dropped(8, 2 * MiB, 6 * MiB) +
				 dropped(7, 6 * MiB, 100 * MiB),
			 100 * MiB);
}

/* A reader that goes away (its process died) no longer holds anything */
static void test_trailer_gone(void **state)
{
	struct reader a, b;
	uint64_t slot = cg_share_slot(8, 13);

	pair_init(&a, &b, CG_MODE_DONTNEED, slot);
	pair_lead(&a, &b);
	assert_int_equal(dropped(7, 8 * MiB, 40 * MiB), 0);
	/* The kernel drops an OFD lock when its last descriptor closes */
	close(b.f.stream.share.fd);
	b.f.stream.share.fd = -1;
	reader_read_to(&a, 80 * MiB);
	assert_int_equal(dropped(7, 0, 64 * MiB), 64 * MiB);
	assert_int_equal(a.f.stream.share.kept_lo, UINT64_MAX);
	pair_close(&a, &b);
}

/* Streams of other files, and a gap of 0, share nothing */
static void test_alone(void **state)
{
	struct reader a, b;

	reader_init(&a, 7, CG_MODE_DONTNEED, cg_share_slot(8, 14));
	reader_init(&b, 8, CG_MODE_DONTNEED, cg_share_slot(8, 15));
	assert_int_not_equal(a.f.stream.share.slot, b.f.stream.share.slot);
	pair_lead(&a, &b);
	assert_false(a.f.stream.share.seen);
	assert_int_equal(dropped(7, 0, 48 * MiB), 48 * MiB);
	pair_close(&a, &b);

	/* reader gap = 0: the stream file is not even opened */
	h.lock.opens = 0;
	reader_init(&a, 7, CG_MODE_DONTNEED, cg_share_slot(8, 16));
	a.cfg.reader_gap = 0;
	reader_read_to(&a, 16 * MiB);
	assert_int_equal(a.f.stream.state, CG_ACTIVE);
	assert_int_equal(h.lock.opens, 0);
	cg_stream_close(&a.f.stream, a.fd);
}

/* Without the stream file every stream drops as if alone */
static void test_no_stream_file(void **state)
{
	struct reader a, b;
	uint64_t slot = cg_share_slot(8, 17);

	h.lock.fail = EACCES;
	pair_init(&a, &b, CG_MODE_DONTNEED, slot);
	pair_lead(&a, &b);
	assert_true(h.lock.opens >= 2);
	assert_int_equal(dropped(7, 0, 48 * MiB), 48 * MiB);
	pair_close(&a, &b);
}

/*
 * Two streams of one file in mode: A reads alone on path alone (uncached:
 * around the cache), then B starts behind A and sees A's claim at once;
 * A sees B within a_sees bytes more, and from then on both read through
 * the cache. A then reads a_more bytes and has dropped nothing of what B
 * still needs, [kept, 40M).
 */
static void joins(enum cg_mode mode,
		  uint64_t slot,
		  enum cg_path alone,
		  bool uncached,
		  uint64_t a_sees,
		  uint64_t a_more,
		  uint64_t kept)
{
	struct reader a, b;

	pair_init(&a, &b, mode, slot);
	reader_read_to(&a, 16 * MiB);
	reader_read_one(&a, alone, uncached);

	reader_read_to(&b, 8 * MiB);
	assert_true(b.f.stream.share.seen);
	reader_read_one(&b, CG_PATH_NEXT, false);

	reader_read_to(&a, a.pos + a_sees);
	assert_true(a.f.stream.share.seen);
	reader_read_one(&a, CG_PATH_NEXT, false);
	reader_read_to(&a, a.pos + a_more);
	assert_int_equal(dropped(7, kept, 40 * MiB), 0);
	pair_close(&a, &b);
}

/*
 * A dontcache stream reads uncached while alone; once it sees another
 * stream of its file it reads through the cache (RWF_DONTCACHE would
 * drop what the other is about to read), for the rest of the stream. A
 * sees B when its claim next moves, within a window, and keeps what B
 * still needs from when B began.
 */
static void test_dontcache_joins(void **state)
{
	joins(CG_MODE_DONTCACHE, cg_share_slot(8, 18), CG_PATH_UNCACHED,
	      false, 16 * MiB, 0, 16 * MiB);
}

/*
 * A direct stream reads the device while alone; once it sees another
 * stream of its file both read through the cache, where the claims keep
 * what one reads for the other: four direct copies of one file would
 * read it from the device four times. A sees B at its next completion,
 * and keeps what B still needs.
 */
static void test_direct_joins(void **state)
{
	joins(CG_MODE_DIRECT, cg_share_slot(8, 20), CG_PATH_DIRECT, true,
	      READ_SIZE, 16 * MiB, 17 * MiB);
}

/* Whether the next read of r would drop its pieces as it goes */
static bool next_drops(struct reader *r)
{
	struct cg_io io = cg_read_begin(&r->f.stream, r->fd, r->pos,
					READ_SIZE);
	bool drops = io.drop_pieces;

	cg_read_end(&r->f.stream, r->fd, &io, READ_SIZE);
	r->pos += READ_SIZE;
	return drops;
}

/*
 * A dontneed stream alone on its file drops each read's pages as soon
 * as it has them (cg_io.drop_pieces); not before it is a stream, not
 * once it has seen another stream of the file, whose reads those pages
 * may serve, and never for a dontcache stream, which RWF_DONTCACHE
 * serves.
 */
static void test_drop_pieces(void **state)
{
	struct reader a, b, c;
	uint64_t slot = cg_share_slot(8, 19);

	pair_init(&a, &b, CG_MODE_DONTNEED, slot);
	assert_false(next_drops(&a));	/* detecting */
	reader_read_to(&a, 16 * MiB);
	assert_int_equal(a.f.stream.state, CG_ACTIVE);
	assert_true(next_drops(&a));

	/* B starts behind A and sees A's claim at once */
	reader_read_to(&b, 8 * MiB);
	assert_true(b.f.stream.share.seen);
	assert_false(next_drops(&b));
	/* A sees B when its claim next moves, and stops too */
	reader_read_to(&a, a.pos + 16 * MiB);
	assert_true(a.f.stream.share.seen);
	assert_false(next_drops(&a));
	pair_close(&a, &b);

	reader_init(&c, 9, CG_MODE_DONTCACHE, cg_share_slot(8, 20));
	reader_read_to(&c, 16 * MiB);
	assert_int_equal(c.f.stream.state, CG_ACTIVE);
	assert_false(next_drops(&c));
	cg_stream_close(&c.f.stream, c.fd);
}

/* Files far apart in inode space get different slots, spread out */
static void test_slots(void **state)
{
	uint64_t seen[64];
	unsigned i, j;

	for (i = 0; i < 64; i++) {
		seen[i] = cg_share_slot(2049, 12 + i);
		assert_true(seen[i] < (1ULL << 23));
		for (j = 0; j < i; j++) {
			assert_int_not_equal(seen[i], seen[j]);
		}
	}
	assert_int_not_equal(cg_share_slot(2049, 12), cg_share_slot(2050, 12));
}

/* The lock files' directories: made, tightened, refused when untrusted */
static void test_state_file(void **state)
{
	char top[] = "/tmp/cg_test_state.XXXXXX";
	char sub[64];
	struct cg_untrusted bad;
	struct stat st;
	int fd;

	assert_non_null(mkdtemp(top));
	snprintf(sub, sizeof(sub), "%s/cacheguard", top);
	if (geteuid() != 0) {
		/* not root's: refused, named */
		assert_int_equal(cg_state_file_open(top, "cacheguard", "f",
						    &bad),
				 -1);
		assert_int_equal(errno, EPERM);
		assert_true(bad.parent);
		assert_int_equal(rmdir(top), 0);
		return;
	}
	fd = cg_state_file_open(top, "cacheguard", "streams", &bad);
	assert_true(fd >= 0);
	assert_null(bad.why);
	assert_true((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
	close(fd);
	assert_int_equal(stat(sub, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	/* loosened by hand: put back */
	assert_int_equal(chmod(sub, 0711), 0);
	fd = cg_state_file_open(top, "cacheguard", "streams", &bad);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(stat(sub, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	/* writable by others, or not root's: refused, named */
	assert_int_equal(chmod(sub, 0777), 0);
	assert_int_equal(cg_state_file_open(top, "cacheguard", "streams",
					    &bad),
			 -1);
	assert_int_equal(errno, EPERM);
	assert_false(bad.parent);
	assert_int_equal(bad.mode, 0777);
	assert_int_equal(chmod(sub, 0700), 0);
	assert_int_equal(chown(top, 1, 0), 0);
	assert_int_equal(cg_state_file_open(top, "cacheguard", "streams",
					    &bad),
			 -1);
	assert_true(bad.parent);
	assert_int_equal(bad.uid, 1);
	assert_string_equal(bad.why, "not owned by root");
	assert_int_equal(chown(top, 0, 0), 0);
	/* a symbolic link is no directory of the module's */
	snprintf(sub, sizeof(sub), "%s/link", top);
	assert_int_equal(symlink("cacheguard", sub), 0);
	assert_int_equal(cg_state_file_open(top, "link", "streams", &bad), -1);
	assert_null(bad.why);
	assert_int_equal(unlink(sub), 0);
	snprintf(sub, sizeof(sub), "%s/cacheguard/streams", top);
	assert_int_equal(unlink(sub), 0);
	snprintf(sub, sizeof(sub), "%s/cacheguard", top);
	assert_int_equal(rmdir(sub), 0);
	assert_int_equal(rmdir(top), 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

CG_TEST_MAIN(NULL, NULL,
	     T(test_leader_keeps_for_trailer),
	     T(test_trailer_gone),
	     T(test_trailer_leaves_early),
	     T(test_one_client_two_handles),
	     T(test_one_client_jumping_handle),
	     T(test_alone),
	     T(test_no_stream_file),
	     T(test_dontcache_joins),
	     T(test_direct_joins),
	     T(test_drop_pieces),
	     T(test_slots),
	     T(test_state_file))
