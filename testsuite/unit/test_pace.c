/*
 * vfs_cacheguard unit tests: a stream's claim on the device (cg_pace.c)
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
 * A simulated device: chans queues served side by side (1: a virtio or
 * SATA disk under mq-deadline; 8: NVMe, a RAID), each read of a MiB
 * taking svc there, first come first served on the queue that frees
 * first. Streams read greedily, each as its pacer lets it, and send the
 * next read a turnaround after one came back (the pool thread's hop to
 * smbd's event loop and back). A neighbour's read arriving at any moment
 * waits for the work queued ahead of it: the backlog, sampled at every
 * completion.
 */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cg_dev.h"
#include "cg_pace.h"

#define MiB (1024 * 1024)
#define US 1000ULL
#define MAX_STREAMS 8
#define MAX_CHANS 8
#define MAX_FLIGHT 256

struct flight {
	unsigned stream;
	uint64_t sent, done;
	uint64_t all0, own0;	/* reads back when it was sent */
};

struct sim {
	unsigned chans;
	uint64_t svc;		/* what a MiB takes on one queue */
	uint64_t turn;		/* a completion to the next send */
	uint64_t now;
	uint64_t free_at[MAX_CHANS];
	struct cg_pace pace[MAX_STREAMS];
	unsigned depth[MAX_STREAMS];	/* unpaced streams: fixed depth */
	bool active[MAX_STREAMS];
	uint64_t bytes[MAX_STREAMS];
	struct flight fl[MAX_FLIGHT];
	unsigned nfl;
	uint64_t backlog_sum, backlog_n, backlog_max;
	bool counted;		/* the device counts reads (cg_pace's others) */
	uint64_t back_all, back[MAX_STREAMS];
};

static void sim_init(struct sim *s, unsigned chans, uint64_t svc)
{
	memset(s, 0, sizeof(*s));
	s->chans = chans;
	s->svc = svc;
	s->turn = 50 * US;
}

static unsigned sim_inflight(const struct sim *s, unsigned st)
{
	unsigned i, n = 0;

	for (i = 0; i < s->nfl; i++) {
		n += s->fl[i].stream == st;
	}
	return n;
}

static bool sim_may_send(const struct sim *s, unsigned st)
{
	if (!s->active[st]) {
		return false;
	}
	if (s->depth[st] > 0) {
		return sim_inflight(s, st) < s->depth[st];
	}
	return cg_pace_may_start(&s->pace[st]);
}

static void sim_send(struct sim *s, unsigned st, uint64_t at)
{
	unsigned c, best = 0;
	uint64_t start;

	for (c = 1; c < s->chans; c++) {
		if (s->free_at[c] < s->free_at[best]) {
			best = c;
		}
	}
	start = s->free_at[best] > at ? s->free_at[best] : at;
	s->free_at[best] = start + s->svc;
	assert_true(s->nfl < MAX_FLIGHT);
	s->fl[s->nfl++] = (struct flight){.stream = st, .sent = at,
					  .done = start + s->svc,
					  .all0 = s->back_all,
					  .own0 = s->back[st]};
	if (s->depth[st] == 0) {
		cg_pace_started(&s->pace[st]);
	}
}

static void sim_fill(struct sim *s, unsigned st, uint64_t at)
{
	while (sim_may_send(s, st)) {
		sim_send(s, st, at);
	}
	/* never stuck: a paced stream with nothing out may always send */
	if (s->active[st]) {
		assert_true(sim_inflight(s, st) > 0);
	}
}

/* One read comes back (the earliest); its stream sends what it may */
static void sim_step(struct sim *s)
{
	struct flight f;
	uint64_t backlog = UINT64_MAX;
	unsigned i, c, first = 0;

	assert_true(s->nfl > 0);
	for (i = 1; i < s->nfl; i++) {
		if (s->fl[i].done < s->fl[first].done) {
			first = i;
		}
	}
	f = s->fl[first];
	s->fl[first] = s->fl[--s->nfl];
	s->now = f.done;
	s->bytes[f.stream] += MiB;
	if (s->depth[f.stream] == 0) {
		int64_t others = -1;

		if (s->counted) {
			others = (int64_t)((s->back_all - f.all0) -
					   (s->back[f.stream] - f.own0));
		}
		cg_pace_done(&s->pace[f.stream], f.done - f.sent, MiB,
			     others);
	}
	s->back_all++;
	s->back[f.stream]++;
	for (c = 0; c < s->chans; c++) {
		uint64_t b = s->free_at[c] > s->now ? s->free_at[c] - s->now
						    : 0;
		backlog = b < backlog ? b : backlog;
	}
	s->backlog_sum += backlog;
	s->backlog_n++;
	s->backlog_max = backlog > s->backlog_max ? backlog : s->backlog_max;
	sim_fill(s, f.stream, s->now + s->turn);
}

static void sim_start(struct sim *s, unsigned st, unsigned max,
		      unsigned depth)
{
	cg_pace_init(&s->pace[st], max);
	s->depth[st] = depth;
	s->active[st] = true;
	sim_fill(s, st, s->now);
}

static void sim_reset_stats(struct sim *s)
{
	memset(s->bytes, 0, sizeof(s->bytes));
	s->backlog_sum = s->backlog_n = s->backlog_max = 0;
}

/*
 * Four paced streams started together on a disk that serves one read at
 * a time (counted: the device counts their reads), after a warm-up: the
 * time the figures count from
 */
static uint64_t sim_four(struct sim *s, bool counted)
{
	unsigned i, st;

	sim_init(s, 1, 800 * US);
	s->counted = counted;
	for (st = 0; st < 4; st++) {
		sim_start(s, st, 64, 0);
	}
	for (i = 0; i < 400; i++) {
		sim_step(s);
	}
	sim_reset_stats(s);
	return s->now;
}

/* MB/s of stream st since t0 */
static double sim_rate(const struct sim *s, unsigned st, uint64_t t0)
{
	return (double)s->bytes[st] / MiB / ((double)(s->now - t0) / 1e9);
}

/* Alone on a disk that serves one read at a time: the window stays at
 * one or two and the copy runs near the device's speed */
static void test_serial_alone(void **state)
{
	struct sim s;
	uint64_t t0;
	unsigned i;
	double dev;

	sim_init(&s, 1, 800 * US);
	dev = 1e9 / (double)s.svc;
	sim_start(&s, 0, 64, 0);
	for (i = 0; i < 100; i++) {
		sim_step(&s);
	}
	t0 = s.now;
	sim_reset_stats(&s);
	for (i = 0; i < 5000; i++) {
		sim_step(&s);
		assert_true(s.pace[0].window <= 2);
	}
	if (sim_rate(&s, 0, t0) < 0.9 * dev) {
		fail_msg("%.0f MB/s of the device's %.0f", sim_rate(&s, 0, t0),
			 dev);
	}
	/* a neighbour waits for at most the read at the device and one */
	assert_true(s.backlog_max <= 2 * s.svc);
	assert_true(s.pace[0].peak <= 2);
}

/* A device that serves reads side by side: the latency does not rise
 * with the depth, and the window grows to its queues and more */
static void test_parallel_grows(void **state)
{
	struct sim s;
	uint64_t t0;
	unsigned i;
	double dev;

	sim_init(&s, 8, 4000 * US);
	dev = 8 * 1e9 / (double)s.svc;
	sim_start(&s, 0, 64, 0);
	for (i = 0; i < 200; i++) {
		sim_step(&s);
	}
	assert_true(s.pace[0].window >= 8);
	t0 = s.now;
	sim_reset_stats(&s);
	for (i = 0; i < 4000; i++) {
		sim_step(&s);
	}
	if (sim_rate(&s, 0, t0) < 0.9 * dev) {
		fail_msg("%.0f MB/s of the device's %.0f", sim_rate(&s, 0, t0),
			 dev);
	}
}

/*
 * Four paced copies on one disk: each holds about one read at the
 * device, so a neighbour waits for at most about four; unpaced at depth
 * eight, for thirty and more. Together they still get the device.
 */
static void test_four_streams(void **state)
{
	struct sim s;
	uint64_t t0, paced_mean, paced_max;
	double sum = 0, dev;
	unsigned i, st;

	t0 = sim_four(&s, false);
	dev = 1e9 / (double)s.svc;
	for (i = 0; i < 8000; i++) {
		sim_step(&s);
	}
	for (st = 0; st < 4; st++) {
		assert_true(sim_rate(&s, st, t0) > 0.15 * dev);
		sum += sim_rate(&s, st, t0);
	}
	assert_true(sum >= 0.95 * dev);
	paced_mean = s.backlog_sum / s.backlog_n;
	paced_max = s.backlog_max;
	assert_true(paced_max <= 5 * s.svc);

	/* the same four unpaced, eight reads each in flight */
	sim_init(&s, 1, 800 * US);
	for (st = 0; st < 4; st++) {
		sim_start(&s, st, 0, 8);
	}
	for (i = 0; i < 8000; i++) {
		sim_step(&s);
	}
	assert_true(s.backlog_sum / s.backlog_n > 5 * paced_mean);
	assert_true(s.backlog_max > 5 * paced_max);
}

/*
 * On a parallel device the stream runs deep; others arrive and fill the
 * queues (unpaced, eight reads each): the stream falls back to a read or
 * two; they leave and it runs deep again.
 */
static void test_others_come_and_go(void **state)
{
	struct sim s;
	unsigned i, st, low = UINT32_MAX, high = 0;

	sim_init(&s, 8, 4000 * US);
	sim_start(&s, 0, 64, 0);
	for (i = 0; i < 300; i++) {
		sim_step(&s);
		high = s.pace[0].window > high ? s.pace[0].window : high;
	}
	assert_true(high >= 8);
	for (st = 1; st <= 3; st++) {
		sim_start(&s, st, 0, 8);
	}
	for (i = 0; i < 400; i++) {
		sim_step(&s);
		low = s.pace[0].window < low ? s.pace[0].window : low;
	}
	assert_true(low <= 2);
	for (st = 1; st <= 3; st++) {
		s.active[st] = false;
	}
	high = 0;
	for (i = 0; i < 2000; i++) {
		sim_step(&s);
		high = s.pace[0].window > high ? s.pace[0].window : high;
	}
	assert_true(high >= 8);
}

/* A neighbour that stays: the stream stays at one, and keeps moving */
static void test_baseline_stays(void **state)
{
	struct cg_pace p;
	unsigned i;

	cg_pace_init(&p, 64);
	for (i = 0; i < 10; i++) {
		cg_pace_started(&p);
		cg_pace_done(&p, 1000 * US, MiB, -1);
	}
	assert_int_equal(cg_pace_base(&p), 1000 * US);
	assert_true(p.window > 1);
	for (i = 0; i < 2000; i++) {
		while (cg_pace_may_start(&p)) {
			cg_pace_started(&p);
		}
		cg_pace_done(&p, 5000 * US, MiB, -1);
	}
	assert_int_equal(cg_pace_base(&p), 1000 * US);
	assert_int_equal(p.window, 1);
	assert_true(cg_pace_may_start(&p) || p.inflight == 1);
}

/*
 * Reads that cost four times the baseline at a window of eight: six of
 * them waited in a queue, and the window falls by that many at once,
 * then holds until the reads sent before are back; never below one
 */
static void test_cut_by_queue(void **state)
{
	struct cg_pace p;
	unsigned i;

	cg_pace_init(&p, 64);
	cg_pace_started(&p);
	cg_pace_done(&p, 1000 * US, MiB, -1);
	p.window = 8;
	for (i = 0; i < 8; i++) {
		cg_pace_started(&p);
	}
	assert_false(cg_pace_may_start(&p));
	/* the smoothed cost climbs: 1.75, 2.3, 2.7 x the baseline */
	for (i = 0; i < 3; i++) {
		cg_pace_done(&p, 4000 * US, MiB, -1);
	}
	assert_true(p.window <= 3);
	assert_int_equal(p.cuts, 1);
	for (i = 0; i < 5; i++) {
		cg_pace_done(&p, 4000 * US, MiB, -1);
	}
	assert_int_equal(p.cuts, 1);	/* held */
	for (i = 0; i < 20; i++) {
		cg_pace_started(&p);
		cg_pace_done(&p, 4000 * US, MiB, -1);
	}
	assert_int_equal(p.window, 1);
	assert_true(cg_pace_may_start(&p));
}

/* A growth a fall follows was a failed probe: the next waits longer */
static void test_probe_backoff(void **state)
{
	struct cg_pace p;
	unsigned i;

	cg_pace_init(&p, 64);
	for (i = 0; i < 3; i++) {
		cg_pace_started(&p);
		cg_pace_done(&p, 1000 * US, MiB, -1);
	}
	assert_int_equal(p.window, 2);
	assert_true(p.probing);
	for (i = 0; i < 6 && p.window == 2; i++) {
		cg_pace_started(&p);
		cg_pace_done(&p, 2000 * US, MiB, -1);
	}
	assert_int_equal(p.window, 1);
	assert_int_equal(p.wait, 4);
	/* back at the baseline: four reads in a row before it grows */
	for (i = 0; i < 30 && p.window == 1; i++) {
		cg_pace_started(&p);
		cg_pace_done(&p, 1000 * US, MiB, -1);
	}
	assert_int_equal(p.window, 2);
	assert_true(i >= 4);
}

/*
 * Where the device counts reads, others' reads rule: alone on a disk
 * that serves one at a time, the stream runs as deep as an unpaced one
 * (nobody waits behind it); four together each hold one read in pieces,
 * and a neighbour waits for about four; a fifth, unpaced, comes and
 * goes, and the stream it met runs whole and deep again after it.
 */
static void test_counted(void **state)
{
	struct sim s;
	uint64_t t0;
	unsigned i, st, larger = 0;
	double sum = 0, dev;

	sim_init(&s, 1, 800 * US);
	s.counted = true;
	dev = 1e9 / (double)s.svc;
	sim_start(&s, 0, 64, 0);
	for (i = 0; i < 500; i++) {
		sim_step(&s);
	}
	assert_true(s.pace[0].window >= 16);
	assert_int_equal(cg_pace_piece(&s.pace[0]), 0);
	assert_int_equal(s.pace[0].shared, 0);

	s.depth[1] = 8;
	s.active[1] = true;
	sim_fill(&s, 1, s.now);
	for (i = 0; i < 200; i++) {
		sim_step(&s);
	}
	assert_int_equal(s.pace[0].window, 1);
	assert_int_equal(cg_pace_piece(&s.pace[0]), CG_PACE_PIECE);
	s.active[1] = false;
	for (i = 0; i < 2000; i++) {
		sim_step(&s);
	}
	assert_int_equal(cg_pace_piece(&s.pace[0]), 0);
	assert_true(s.pace[0].window >= 8);

	t0 = sim_four(&s, true);
	for (i = 0; i < 8000; i++) {
		size_t piece;

		sim_step(&s);
		assert_true(s.pace[i % 4].window == 1);
		/* 512 KiB, but for a probe of twice that now and then */
		piece = cg_pace_piece(&s.pace[i % 4]);
		assert_true(piece == CG_PACE_PIECE ||
			    piece == 2 * CG_PACE_PIECE);
		larger += piece > CG_PACE_PIECE;
	}
	assert_true(larger <= 8000 / 8);
	for (st = 0; st < 4; st++) {
		assert_true(sim_rate(&s, st, t0) > 0.15 * dev);
		sum += sim_rate(&s, st, t0);
	}
	assert_true(sum >= 0.95 * dev);
	assert_true(s.backlog_max <= 4 * s.svc);
}

/*
 * A stream with a neighbour always there, its reads 4 MiB fills in
 * pieces, each piece costing req ns and its bytes at bw bytes a second
 * (throttle: every request, the stream's and its rivals', req ns and
 * nothing more): the piece it ends with, and how many reads went in
 * pieces larger than CG_PACE_PIECE
 */
static size_t run_pieces(uint64_t req, double bw, unsigned rivals,
			 bool throttle, unsigned reads, unsigned *larger)
{
	struct cg_pace p;
	unsigned i;

	*larger = 0;
	cg_pace_init(&p, 64);
	for (i = 0; i < reads; i++) {
		size_t piece = cg_pace_piece(&p);
		uint64_t n = 4 * MiB / piece;
		/* each of its pieces waits for one 512 KiB piece per rival */
		uint64_t ns = n * (req + (uint64_t)(piece / bw * 1e9)) +
			      n * rivals * (req + (uint64_t)(CG_PACE_PIECE /
							     bw * 1e9));

		if (throttle) {
			ns = n * (rivals + 1) * req;
		}

		*larger += piece > CG_PACE_PIECE;
		assert_true(cg_pace_may_start(&p));
		cg_pace_started(&p);
		cg_pace_done(&p, ns, 4 * MiB,
			     16384 + (int64_t)(n * rivals * CG_PACE_PIECE));
		assert_int_equal(p.window, 1);
	}
	return cg_pace_piece(&p);
}

/*
 * On a disk, where bytes cost and requests little, the pieces stay at
 * 512 KiB (larger ones only now and then, tried and given up), also
 * beside seven other streams in pieces, where a larger piece would get
 * the stream more of the device but the device no more done; under a
 * throttle of 500 requests a second they grow to whole fills, also where
 * three other streams in 512 KiB pieces share it
 */
static void test_piece_size(void **state)
{
	unsigned larger;

	assert_int_equal(run_pieces(50 * US, 1.3e9, 0, false, 400, &larger),
			 CG_PACE_PIECE);
	assert_true(larger <= 400 / 8);
	assert_int_equal(run_pieces(50 * US, 1.3e9, 7, false, 400, &larger),
			 CG_PACE_PIECE);
	assert_true(larger <= 400 / 8);
	assert_int_equal(run_pieces(2000 * US, 1e12, 0, false, 100, &larger),
			 4 * MiB);
	/* a throttle of 500 requests a second shared with three others */
	assert_int_equal(run_pieces(2000 * US, 1e12, 3, true, 200, &larger),
			 4 * MiB);
}

/*
 * Deep, a stream's reads mostly come back while others of its own are
 * out (CG_DEV_HIDDEN): it keeps going, and looks now and then: one read
 * out until one comes back alone, which tells; a neighbour's read seen
 * then cuts it to one in pieces
 */
static void test_look(void **state)
{
	struct cg_pace p;
	unsigned i, hidden = 0;

	cg_pace_init(&p, 8);
	for (i = 0; i < 100; i++) {
		cg_pace_started(&p);
		cg_pace_done(&p, 4000 * US, 4 * MiB, 0);
	}
	assert_int_equal(cg_pace_piece(&p), 0);
	assert_int_equal(p.window, 8);

	/* deep and hidden: it goes on, then looks */
	while (!p.looking) {
		while (cg_pace_may_start(&p)) {
			cg_pace_started(&p);
		}
		assert_int_equal(p.inflight, 8);
		cg_pace_done(&p, 4000 * US, 4 * MiB, CG_DEV_HIDDEN);
		hidden++;
		assert_true(hidden <= CG_PACE_LOOK_NS / (4000 * US));
	}
	assert_true(hidden >= CG_PACE_LOOK_NS / (4000 * US));
	assert_false(cg_pace_may_start(&p));
	while (p.inflight > 1) {
		cg_pace_done(&p, 4000 * US, 4 * MiB, CG_DEV_HIDDEN);
		assert_false(cg_pace_may_start(&p));
	}
	/* the last one back alone tells: nobody, and it runs deep again */
	cg_pace_done(&p, 4000 * US, 4 * MiB, 0);
	assert_false(p.looking);
	assert_int_equal(p.window, 8);
	assert_true(cg_pace_may_start(&p));

	/* the next look meets a neighbour */
	while (!p.looking) {
		while (cg_pace_may_start(&p)) {
			cg_pace_started(&p);
		}
		cg_pace_done(&p, 4000 * US, 4 * MiB, CG_DEV_HIDDEN);
	}
	while (p.inflight > 1) {
		cg_pace_done(&p, 4000 * US, 4 * MiB, CG_DEV_HIDDEN);
	}
	cg_pace_done(&p, 4000 * US, 4 * MiB, 16384);
	assert_int_equal(p.window, 1);
	assert_int_equal(cg_pace_piece(&p), CG_PACE_PIECE);

	/* in pieces, a hidden count does not clear it */
	for (i = 0; i < 100; i++) {
		cg_pace_started(&p);
		cg_pace_done(&p, 4000 * US, 4 * MiB, CG_DEV_HIDDEN);
	}
	assert_true(cg_pace_piece(&p) != 0);
	assert_int_equal(p.window, 1);
}

/* Small reads cost the device's per-request time, not a queue: counted,
 * never sampled. Off: anything may start. */
static void test_small_and_off(void **state)
{
	struct cg_pace p;
	unsigned i;

	cg_pace_init(&p, 64);
	cg_pace_started(&p);
	cg_pace_done(&p, 1000 * US, MiB, -1);
	p.window = 4;
	for (i = 0; i < 20; i++) {
		cg_pace_started(&p);
		cg_pace_done(&p, 100000 * US, 4096, -1);
	}
	assert_int_equal(p.window, 4);
	assert_int_equal(p.inflight, 0);

	cg_pace_init(&p, 0);
	for (i = 0; i < 1000; i++) {
		assert_true(cg_pace_may_start(&p));
		cg_pace_started(&p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_serial_alone),
		cmocka_unit_test(test_parallel_grows),
		cmocka_unit_test(test_four_streams),
		cmocka_unit_test(test_others_come_and_go),
		cmocka_unit_test(test_baseline_stays),
		cmocka_unit_test(test_cut_by_queue),
		cmocka_unit_test(test_probe_backoff),
		cmocka_unit_test(test_small_and_off),
		cmocka_unit_test(test_counted),
		cmocka_unit_test(test_piece_size),
		cmocka_unit_test(test_look),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
