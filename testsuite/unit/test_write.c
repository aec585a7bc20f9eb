/*
 * Unit tests of cg_write: write streams and write-behind
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
 * The engine's side of uploads, driven as the glue drives it, with a
 * fake syscall layer that records sync_file_range and fadvise calls, a
 * page cache whose dropped pages may linger while their writeback runs,
 * and a clock that sleeping moves.
 */

#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "cg_test.h"
#include "cg_write.h"
#include "cg_sys.h"

#define SFR_WRITE 2

struct call {
	int what;	/* POSIX_FADV_*, or 100 + sync_file_range flags */
	uint64_t off;
	uint64_t len;
};

static struct call calls[8192];
static unsigned ncalls;
static int start_error;		/* every start (WRITE alone) fails with this */
static int pwrite_error;	/* pwritev2 fails with this */
static unsigned npwrite;
/*
 * The fake page cache: a drop leaves linger bytes cached (their
 * writeback still runs) until that many ns have passed on the fake
 * clock; stuck, bytes that never go (a page mapped by someone)
 */
static uint64_t linger, linger_ns, clock_ns, dropped_at, stuck;
static unsigned nsleeps;

static int fake_fadvise(int fd, uint64_t off, uint64_t len, int advice)
{
	if (ncalls < N_ELEM(calls)) {
		calls[ncalls++] = (struct call){advice, off, len};
	}
	if (advice == POSIX_FADV_DONTNEED && dropped_at == UINT64_MAX) {
		dropped_at = clock_ns;
	}
	return 0;
}

static int fake_sfr(int fd, uint64_t off, uint64_t len, unsigned flags)
{
	if (ncalls < N_ELEM(calls)) {
		calls[ncalls++] = (struct call){100 + (int)flags, off, len};
	}
	/* a wait would report a writeback error and mark it seen */
	assert_int_equal(flags, SFR_WRITE);
	if (start_error != 0) {
		errno = start_error;
		return -1;
	}
	return 0;
}

static int fake_resident(int fd, uint64_t off, uint64_t len,
			 uint64_t *bytes)
{
	bool gone = clock_ns - dropped_at >= linger_ns;

	*bytes = stuck + (gone ? 0 : linger);
	if (*bytes > len) {
		*bytes = len;
	}
	return 0;
}

static void fake_sleep(uint64_t ns)
{
	nsleeps++;
	clock_ns += ns;
}

static ssize_t fake_pwritev2(int fd, const void *buf, size_t n,
			     uint64_t off, int flags)
{
	npwrite++;
	if (pwrite_error != 0) {
		errno = pwrite_error;
		return -1;
	}
	/* short writes, to be completed by cg_pwrite_full */
	return n > 4096 ? 4096 : (ssize_t)n;
}

static const struct cg_sys fake_sys = {
	.fadvise = fake_fadvise,
	.sync_file_range = fake_sfr,
	.pwritev2 = fake_pwritev2,
	.resident = fake_resident,
	.sleep = fake_sleep,
};

static int setup(void **state)
{
	ncalls = 0;
	start_error = 0;
	pwrite_error = 0;
	npwrite = 0;
	linger = linger_ns = clock_ns = stuck = 0;
	dropped_at = UINT64_MAX;
	nsleeps = 0;
	return 0;
}

/* Run the job of plan as a pool thread would */
static uint64_t run_job(const struct cg_wb_plan *plan)
{
	dropped_at = UINT64_MAX;
	return cg_write_writeback(&fake_sys, 3, 3, plan);
}

/* One write as the glue does it; runs a planned job at once */
static enum cg_path put(struct cg_writer *w, uint64_t off, size_t n)
{
	struct cg_wio wio = cg_write_begin(w, off, n);
	struct cg_wb_plan plan;

	if (cg_write_end(w, &wio, (ssize_t)n, &plan)) {
		cg_write_wb_done(w, &plan, run_job(&plan));
	}
	return wio.path;
}

#define CG_MAX_U(a, b) ((a) > (b) ? (a) : (b))

static void init(struct cg_writer *w, struct cg_config *cfg,
		 enum cg_mode mode)
{
	cg_config_init(cfg);
	cfg->mode = mode;
	cg_writer_init(w, cfg, 0);
}

static void test_modes(void **state)
{
	static const struct {
		enum cg_mode want;
		unsigned lacks;
		enum cg_mode got;
	} cases[] = {
		{CG_MODE_AUTO, 0, CG_MODE_DONTCACHE},
		{CG_MODE_AUTO, CG_FS_NO_DONTCACHE, CG_MODE_DONTNEED},
		{CG_MODE_AUTO, CG_FS_NO_DONTCACHE_WRITE, CG_MODE_DONTNEED},
		{CG_MODE_DONTCACHE, 0, CG_MODE_DONTCACHE},
		{CG_MODE_DONTCACHE, CG_FS_NO_DONTCACHE_WRITE, CG_MODE_DONTNEED},
		/* network, FUSE: auto drops behind, a mode set stays */
		{CG_MODE_AUTO, CG_FS_REMOTE, CG_MODE_DONTNEED},
		{CG_MODE_DONTCACHE, CG_FS_REMOTE, CG_MODE_DONTCACHE},
		{CG_MODE_DIRECT, 0, CG_MODE_DONTNEED},
		{CG_MODE_DONTNEED, 0, CG_MODE_DONTNEED},
	};
	size_t i;

	for (i = 0; i < N_ELEM(cases); i++) {
		assert_int_equal(cg_write_mode(cases[i].want, cases[i].lacks),
				 cases[i].got);
	}
}

/* Below min file size of sequential bytes nothing happens; then it does */
static void test_detect(void **state)
{
	struct cg_config cfg;
	struct cg_writer w;
	uint64_t off;

	init(&w, &cfg, CG_MODE_DONTNEED);
	for (off = 0; off < cfg.min_file_size; off += MiB) {
		put(&w, off, MiB);
	}
	assert_int_equal(w.state, CG_W_ACTIVE);
	assert_int_equal(w.stats.streams, 1);

	/* a small file, even written sequentially: untouched */
	setup(NULL);
	init(&w, &cfg, CG_MODE_DONTNEED);
	for (off = 0; off < cfg.min_file_size - MiB; off += MiB) {
		put(&w, off, MiB);
	}
	assert_int_equal(w.state, CG_W_DETECTING);
	assert_int_equal(ncalls, 0);
	cg_write_close(&w);
}

/* Random writes, however many bytes, never make a stream */
static void test_random(void **state)
{
	struct cg_config cfg;
	struct cg_writer w;
	uint64_t x = 12345;
	unsigned i;

	init(&w, &cfg, CG_MODE_DONTNEED);
	for (i = 0; i < 4096; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		put(&w, (x >> 20) % (64ULL << 30), 64 * 1024);
	}
	assert_int_equal(w.stats.streams, 0);
	assert_int_equal(ncalls, 0);
	assert_int_equal(cg_write_close(&w).end, 0);
}

/*
 * Writes of n bytes, depth at a time, completing in order[] within each
 * batch: one stream; each window is started in order, then dropped once
 * (by the job after the one that started it), nothing is ever more
 * than about three windows behind the front, and the close drops the
 * whole stream's range
 */
static void replay_writes(size_t n, unsigned depth, const unsigned *order)
{
	struct cg_config cfg;
	struct cg_writer w;
	struct cg_wio wio[10];
	struct cg_wb_plan plan;
	uint64_t off, expect_start = 0, expect_drop = 0;
	unsigned i, k;

	ncalls = 0;
	init(&w, &cfg, CG_MODE_DONTNEED);
	for (off = 0; off < 256 * MiB; off += depth * n) {
		for (k = 0; k < depth; k++) {
			wio[k] = cg_write_begin(&w, off + k * n, n);
		}
		for (k = 0; k < depth; k++) {
			if (!cg_write_end(&w, &wio[order[k]], (ssize_t)n,
					  &plan)) {
				continue;
			}
			cg_write_wb_done(&w, &plan, run_job(&plan));
		}
		assert_true(w.seq.front - w.dropped_to <= 3 * cfg.window);
	}
	assert_int_equal(w.stats.streams, 1);
	for (i = 0; i < ncalls; i++) {
		if (calls[i].what == 100 + SFR_WRITE) {
			assert_int_equal(calls[i].off, expect_start);
			expect_start += calls[i].len;
		} else if (calls[i].what == POSIX_FADV_DONTNEED) {
			/* only what an earlier job started */
			assert_int_equal(calls[i].off, expect_drop);
			assert_true(calls[i].off + calls[i].len <=
				    expect_start - cfg.window);
			expect_drop += calls[i].len;
		}
	}
	assert_true(expect_start >= 256 * MiB - cfg.window);
	assert_true(expect_drop >= 256 * MiB - 2 * cfg.window);
	assert_int_equal(w.stats.bytes_dropped, expect_drop);
	assert_int_equal(cg_write_close(&w).off, 0);
}

/* Four 1 MiB writes at a time, completing last first */
static void test_reorder_writeback(void **state)
{
	static const unsigned reversed[] = {3, 2, 1, 0};

	replay_writes(MiB, 4, reversed);
}

/*
 * The clients' uploads, as they reach the module (issue 25): Windows'
 * CopyFileEx writes 1 MiB with ten outstanding, which smbd's threads
 * finish in any order (one such order here); Linux's cifs client writes
 * back up to 4 MiB at a time (its wsize), several in flight; two here.
 * Each is one stream, written back in order, with nothing dirty more
 * than three windows behind the front, and the close
 * drops all of it.
 */
static void test_clients_uploads(void **state)
{
	static const unsigned windows_order[] = {3, 0, 7, 1, 9, 2, 5, 4, 8, 6};
	static const unsigned cifs_order[] = {1, 0};

	replay_writes(MiB, 10, windows_order);
	replay_writes(4 * MiB, 2, cifs_order);
}

/*
 * A device slower than the client: the job in flight ends only once the
 * client is held. What is cached (from the lowest byte no job has
 * dropped yet to the front) stays within CG_W_MAX_BEHIND windows and
 * two of the client's writes (the one held, and the one it sends once
 * that is answered, as the next job may start lagging at once),
 * whatever the windows each job covers. t37 once
 * saw 72 MiB cached at 8M windows: the hold counted from the end of the
 * job's wait range, not from its start, which it had not dropped yet.
 */
static uint64_t slow_device_worst(enum cg_mode mode,
				  bool recvfile,
				  uint64_t *window)
{
	struct cg_config cfg;
	struct cg_writer w;
	struct cg_wb_plan plan, job;
	struct cg_wio wio;
	uint64_t off, dropped = 0, worst = 0;
	unsigned holds = 0;
	bool have = false;

	init(&w, &cfg, mode);
	*window = cfg.window;
	for (off = 0; off < 512 * MiB;) {
		wio = recvfile ? cg_write_begin_socket(&w, off, MiB)
			       : cg_write_begin(&w, off, MiB);
		if (cg_write_end(&w, &wio, MiB, &plan)) {
			assert_false(have);
			job = plan;
			have = true;
		}
		off += MiB;
		worst = off - dropped > worst ? off - dropped : worst;
		if (!cg_write_lagging(&w)) {
			continue;
		}
		/* the client waits; the device finishes the job */
		holds++;
		assert_true(have);
		assert_int_equal(job.drop.off, dropped);
		cg_write_wb_done(&w, &job, 0);
		if (job.drop.end > job.drop.off) {
			dropped = job.drop.end;
		}
		have = cg_write_replan(&w, &job);
	}
	assert_true(holds > 10);
	return worst;
}

static void test_footprint_bound(void **state)
{
	uint64_t window, worst = slow_device_worst(CG_MODE_DONTNEED, false,
						   &window);

	assert_in_range(worst, 0, CG_W_MAX_BEHIND * window + 2 * MiB);
	/*
	 * dontcache through smbd's recvfile: buffered writes, which the
	 * kernel does not drop as their writeback ends; held as dontneed
	 */
	worst = slow_device_worst(CG_MODE_DONTCACHE, true, &window);
	assert_in_range(worst, 0, CG_W_MAX_BEHIND * window + 2 * MiB);
	/*
	 * dontcache counts from the end of the job's drop: more is queued
	 * for the device (what it has not written yet is what is cached),
	 * within the drop and four windows past it
	 */
	worst = slow_device_worst(CG_MODE_DONTCACHE, false, &window);
	assert_in_range(worst,
			CG_W_MAX_BEHIND * window + 3 * MiB,
			2 * CG_W_MAX_BEHIND * window + 2 * MiB);
}

/*
 * Writes whose answers cannot be held, recvfile's and synchronous ones:
 * smbd answers them at once. With a device that never finishes the job
 * in flight, a stream of them keeps at most CG_W_MAX_BEHIND windows and
 * a write past what is dropped, the glue catching up (cg_write_catch_up)
 * whenever the stream lags; the catch-up's wait starts where the last
 * one ended, and a job planned after it does not take dropped_to back.
 * Without catch-ups, the 512 MiB would all stay cached.
 */
static void unheld_catch_up(enum cg_mode mode, bool socket)
{
	struct cg_config cfg;
	struct cg_writer w;
	struct cg_wb_plan plan, job;
	struct cg_wio wio;
	uint64_t off, dropped = 0, worst = 0;
	unsigned catch_ups = 0;

	init(&w, &cfg, mode);
	for (off = 0; off < 512 * MiB; off += MiB) {
		wio = socket ? cg_write_begin_socket(&w, off, MiB)
			     : cg_write_begin_sync(&w, off, MiB);
		if (socket) {
			assert_int_equal(wio.path, CG_PATH_NEXT);
		}
		if (cg_write_end(&w, &wio, MiB, &plan)) {
			job = plan;	/* the device never finishes it */
		}
		/* a write that failed waits for nothing */
		assert_false(cg_write_catch_up(&w, &wio, -1, &plan));
		if (cg_write_catch_up(&w, &wio, MiB, &plan)) {
			catch_ups++;
			assert_int_equal(plan.drop.off, dropped);
			assert_true(plan.drop.end > dropped);
			/* it starts all it drops no job has started */
			assert_int_equal(plan.start.end, plan.drop.end);
			dropped = plan.drop.end;
			cg_write_caught_up(&w, &plan, run_job(&plan));
			assert_false(cg_write_lagging(&w));
		}
		worst = CG_MAX_U(worst, off + MiB - dropped);
	}
	assert_true(catch_ups > 10);
	assert_in_range(worst, 0, (CG_W_MAX_BEHIND + 1) * cfg.window + MiB);
	/* the job ends; the next one keeps what the catch-ups dropped */
	cg_write_wb_done(&w, &job, 0);
	if (cg_write_replan(&w, &plan)) {
		assert_true(plan.drop.off <= dropped);
	}
	assert_false(cg_write_lagging(&w));
}

/* recvfile into a dontcache share: from the socket, through the cache */
static void test_recvfile_catch_up(void **state)
{
	unheld_catch_up(CG_MODE_DONTCACHE, true);
}

/* SMB_VFS_PWRITE (aio write size = 0): answered as it returns */
static void test_sync_catch_up(void **state)
{
	unheld_catch_up(CG_MODE_DONTNEED, false);
}

/* A job in flight holds back the next one; nothing is lost meanwhile */
static void test_one_job(void **state)
{
	struct cg_config cfg;
	struct cg_writer w;
	struct cg_wb_plan plan, held;
	struct cg_wio wio;
	uint64_t off;
	bool have = false;

	init(&w, &cfg, CG_MODE_DONTNEED);
	for (off = 0; off < 64 * MiB; off += MiB) {
		wio = cg_write_begin(&w, off, MiB);
		if (cg_write_end(&w, &wio, MiB, &plan)) {
			assert_false(have);
			held = plan;
			have = true;
		}
	}
	assert_true(have);
	assert_true(w.busy);
	/* 64 MiB written, nothing waited for: the writes are held back */
	assert_true(cg_write_lagging(&w));
	/* ... which is pwrite_send's way: its writes never catch up */
	assert_false(cg_write_catch_up(&w, &wio, MiB, &plan));
	cg_write_wb_done(&w, &held, 0);
	assert_false(cg_write_lagging(&w));
	wio = cg_write_begin(&w, off, MiB);
	assert_true(cg_write_end(&w, &wio, MiB, &plan));
	/* the next job catches up: it starts everything written since */
	assert_int_equal(plan.start.off, held.start.end);
	assert_int_equal(plan.start.end, 64 * MiB);
	assert_int_equal(plan.drop.off, held.start.off);
	assert_int_equal(plan.drop.end, held.start.end);
	cg_write_wb_done(&w, &plan, 0);
	/* jobs that keep up: nothing is ever held */
	for (off += MiB; off < 160 * MiB; off += MiB) {
		put(&w, off, MiB);
		assert_false(cg_write_lagging(&w));
	}
	/* a job's end plans the next at once, with no new write */
	do {
		wio = cg_write_begin(&w, off, MiB);
		off += MiB;
	} while (!cg_write_end(&w, &wio, MiB, &held));
	for (; off < 200 * MiB; off += MiB) {
		wio = cg_write_begin(&w, off, MiB);
		assert_false(cg_write_end(&w, &wio, MiB, &plan));
	}
	cg_write_wb_done(&w, &held, 0);
	assert_true(cg_write_replan(&w, &plan));
	assert_int_equal(plan.start.off, held.start.end);
	assert_int_equal(plan.start.end, 200 * MiB);
	cg_write_wb_done(&w, &plan, 0);
	assert_false(cg_write_replan(&w, &plan));
}

/*
 * A job the pool had no thread for (smbd's pthreadpool failed to make
 * one) may be skipped, and is not lost: the next job starts what it
 * would have started and waits for what it would have waited for
 */
static void test_skipped_job(void **state)
{
	struct cg_config cfg;
	struct cg_writer w;
	struct cg_wb_plan first, skipped, next;
	struct cg_wio wio;
	uint64_t off = 0;

	init(&w, &cfg, CG_MODE_DONTNEED);
	do {
		wio = cg_write_begin(&w, off, MiB);
		off += MiB;
	} while (!cg_write_end(&w, &wio, MiB, &first));
	assert_true(first.may_skip);
	cg_write_wb_done(&w, &first, 0);
	do {
		wio = cg_write_begin(&w, off, MiB);
		off += MiB;
	} while (!cg_write_end(&w, &wio, MiB, &skipped));
	assert_true(skipped.may_skip);
	assert_int_equal(skipped.drop.off, first.start.off);
	cg_write_wb_skipped(&w, &skipped);
	assert_false(w.busy);
	/* not planned again at once: the pool had no thread a moment ago */
	assert_false(cg_write_replan(&w, &next));
	do {
		wio = cg_write_begin(&w, off, MiB);
		off += MiB;
	} while (!cg_write_end(&w, &wio, MiB, &next));
	assert_int_equal(next.start.off, skipped.start.off);
	assert_true(next.start.end > skipped.start.end);
	assert_int_equal(next.drop.off, skipped.drop.off);
	assert_int_equal(next.drop.end, skipped.drop.end);
	cg_write_wb_done(&w, &next, 0);
	assert_false(w.busy);
}

/*
 * A job waits for writeback without a wait that reports errors (the
 * fake fails any sync_file_range but a start): it drops again, asking
 * what is still cached, until nothing is; pages that do not go (mapped
 * by someone) end its patience, and the next job drops them again
 */
static void test_drop_as_written(void **state)
{
	struct cg_config cfg;
	struct cg_writer w;
	struct cg_wb_plan plan;
	struct cg_wio wio;
	uint64_t off = 0, drops = 0, from;
	unsigned k;

	init(&w, &cfg, CG_MODE_DONTNEED);
	for (off = 0; off < 40 * MiB; off += MiB) {
		put(&w, off, MiB);
	}
	/* writeback takes 20 ms: a job drops, sleeps and drops again */
	linger = 4 * MiB;
	linger_ns = 20 * 1000 * 1000ULL;
	ncalls = 0;
	nsleeps = 0;
	do {
		wio = cg_write_begin(&w, off, MiB);
		off += MiB;
	} while (!cg_write_end(&w, &wio, MiB, &plan));
	assert_true(plan.drop.end > plan.drop.off);
	assert_int_equal(run_job(&plan), 0);
	for (k = 0; k < ncalls; k++) {
		drops += calls[k].what == POSIX_FADV_DONTNEED;
	}
	assert_true(drops >= 2);
	assert_int_equal(drops, nsleeps + 1);
	assert_true(clock_ns >= linger_ns);
	assert_true(clock_ns < linger_ns + 40 * 1000 * 1000ULL);
	cg_write_wb_done(&w, &plan, 0);
	assert_int_equal(w.dropped_to, plan.drop.end);

	/* stuck pages: after its patience, the job leaves them */
	stuck = 4096;
	from = w.dropped_to;
	do {
		wio = cg_write_begin(&w, off, MiB);
		off += MiB;
	} while (!cg_write_end(&w, &wio, MiB, &plan));
	clock_ns = 0;
	assert_int_equal(run_job(&plan), 4096);
	assert_true(clock_ns >= CG_WB_PATIENCE_NS);
	cg_write_wb_done(&w, &plan, 4096);
	assert_int_equal(w.dropped_to, from);
	stuck = 0;
	do {
		wio = cg_write_begin(&w, off, MiB);
		off += MiB;
	} while (!cg_write_end(&w, &wio, MiB, &plan));
	assert_int_equal(plan.drop.off, from);
	assert_int_equal(run_job(&plan), 0);
	cg_write_wb_done(&w, &plan, 0);
	assert_int_equal(w.dropped_to, plan.drop.end);
}

/*
 * A job's start only starts writeback (WB_SYNC_NONE): under memory
 * pressure it fails with ENOMEM (or EAGAIN) where blocking writeback
 * retries, the pages stay dirty and nothing is lost: the drops start
 * their writeback again, and the file's flush (smbd's fsync) reports
 * what really failed.
 */
static void test_start_error_is_no_error(void **state)
{
	static const int errs[] = {ENOMEM, EAGAIN, EIO};
	struct cg_config cfg;
	struct cg_writer w;
	uint64_t off;
	size_t i;

	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		unsigned starts = 0, k;

		setup(NULL);
		init(&w, &cfg, CG_MODE_DONTNEED);
		start_error = errs[i];
		for (off = 0; off < 80 * MiB; off += MiB) {
			put(&w, off, MiB);
		}
		for (k = 0; k < ncalls; k++) {
			starts += calls[k].what == 100 + SFR_WRITE;
		}
		assert_true(starts >= 4);	/* the fake did fail starts */
		assert_true(w.dropped_to >= 80 * MiB - 3 * cfg.window);
	}
}

/*
 * dontcache: stream writes are uncached, write-behind follows them for
 * what the kernel leaves behind; fallback on EOPNOTSUPP
 */
static void test_dontcache(void **state)
{
	struct cg_config cfg;
	struct cg_writer w;
	struct cg_wio wio;
	struct cg_wb_plan plan;
	char buf[3 * 4096 + 5];
	uint64_t off;

	init(&w, &cfg, CG_MODE_DONTCACHE);
	/* the write that reaches min file size is the first uncached one */
	for (off = 0; off < cfg.min_file_size - MiB; off += MiB) {
		assert_int_equal(put(&w, off, MiB), CG_PATH_NEXT);
	}
	assert_int_equal(put(&w, off, MiB), CG_PATH_UNCACHED);
	for (off += MiB; off < 64 * MiB; off += MiB) {
		assert_int_equal(put(&w, off, MiB), CG_PATH_UNCACHED);
	}
	assert_true(w.stats.jobs > 0);
	assert_int_equal(w.stats.bytes_uncached, 64 * MiB - 15 * MiB);

	/* all bytes, through short writes */
	assert_int_equal(cg_pwrite_full(&fake_sys, 3, buf, sizeof(buf), 0,
					CG_RWF_DONTCACHE),
			 sizeof(buf));
	assert_int_equal(npwrite, 4);
	pwrite_error = EIO;
	assert_int_equal(cg_pwrite_full(&fake_sys, 3, buf, sizeof(buf), 0,
					CG_RWF_DONTCACHE),
			 -1);

	/* an I/O error: this write only; EOPNOTSUPP: the filesystem */
	wio = cg_write_begin(&w, off, MiB);
	assert_int_equal(cg_write_failed(&w, &wio, EIO), 0);
	assert_int_equal(wio.path, CG_PATH_NEXT);
	assert_int_equal(w.mode, CG_MODE_DONTCACHE);
	cg_write_end(&w, &wio, MiB, &plan);
	off += MiB;
	wio = cg_write_begin(&w, off, MiB);
	assert_int_equal(cg_write_failed(&w, &wio, EOPNOTSUPP),
			 CG_FS_NO_DONTCACHE_WRITE);
	assert_int_equal(w.mode, CG_MODE_DONTNEED);
	if (cg_write_end(&w, &wio, MiB, &plan)) {
		cg_write_wb_done(&w, &plan, 0);
	}
	/* and from now on write-behind alone */
	ncalls = 0;
	for (off += MiB; off < 128 * MiB; off += MiB) {
		assert_int_equal(put(&w, off, MiB), CG_PATH_NEXT);
	}
	assert_true(ncalls > 0);
	assert_int_equal(w.stats.fallbacks, 2);
}

/* Residency needs a readable descriptor: a write-only one is reopened */
static void test_readable(void **unused)
{
	char path[] = "/tmp/cg_test_readable.XXXXXX";
	int fd = mkstemp(path);
	int wfd, rfd;
	char c = 0;

	assert_true(fd >= 0);
	wfd = open(path, O_WRONLY);
	unlink(path);
	assert_true(wfd >= 0);
	assert_int_equal(cg_sys_readable(fd), CG_SYS_SAME_FD);
	rfd = cg_sys_readable(wfd);
	assert_true(rfd >= 0 && rfd != wfd);
	assert_true((fcntl(rfd, F_GETFL) & O_ACCMODE) == O_RDONLY);
	assert_true((fcntl(rfd, F_GETFD) & FD_CLOEXEC) != 0);
	assert_int_equal(read(rfd, &c, 1), 0);
	close(rfd);
	close(wfd);
	close(fd);
	assert_int_equal(cg_sys_readable(fd), -1);
}

/* The close's line: only for a file that had a stream */
static void test_summary(void **state)
{
	struct cg_config cfg;
	struct cg_writer w;
	char line[320];

	init(&w, &cfg, CG_MODE_DONTNEED);
	assert_false(cg_write_summary(&w, line, sizeof(line)));
	w.stats = (struct cg_wstats){
		.bytes_written = 6,
		.bytes_stream = 5,
		.bytes_uncached = 4,
		.bytes_dropped = 3,
		.streams = 1,
		.jobs = 2,
		.fallbacks = 7,
	};
	assert_true(cg_write_summary(&w, line, sizeof(line)));
	assert_string_equal(line,
			    "written 6 mode dontneed; stream 5 uncached 4 "
			    "written back and dropped 3 in 2 jobs; streams 1; "
			    "fallbacks 7");
}

CG_TEST_MAIN(NULL, NULL,
	     cmocka_unit_test_setup(test_modes, setup),
	     cmocka_unit_test_setup(test_detect, setup),
	     cmocka_unit_test_setup(test_random, setup),
	     cmocka_unit_test_setup(test_reorder_writeback, setup),
	     cmocka_unit_test_setup(test_clients_uploads, setup),
	     cmocka_unit_test_setup(test_one_job, setup),
	     cmocka_unit_test_setup(test_skipped_job, setup),
	     cmocka_unit_test_setup(test_footprint_bound, setup),
	     cmocka_unit_test_setup(test_recvfile_catch_up, setup),
	     cmocka_unit_test_setup(test_sync_catch_up, setup),
	     cmocka_unit_test_setup(test_drop_as_written, setup),
	     cmocka_unit_test_setup(test_start_error_is_no_error, setup),
	     cmocka_unit_test_setup(test_dontcache, setup),
	     cmocka_unit_test(test_readable),
	     cmocka_unit_test(test_summary))
