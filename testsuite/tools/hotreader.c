/*
 * hotreader: the hot set of the mixed-workload benchmark (testsuite/bench)
 *
 *   hotreader [-d] [-r RATE] [-s MIN] [-S MAX] [-t SECONDS] [-z SEED]
 *             [-o LOG] FILE
 *
 * Reads FILE at random, MIN to MAX bytes at a time (4 KiB multiples at
 * 4 KiB aligned offsets), at a fixed RATE of reads per second, and times
 * every read. It stands for a web tier or a database answering requests:
 * the request rate is fixed by the clients, not by how fast the disk is.
 * With -d it reads a local FILE with O_DIRECT, every read from the
 * device, as a database with direct I/O or a working set larger than
 * memory does: a neighbour bound by the disk, not by the page cache.
 *
 * Why paced: a reader in a tight loop touches every page of its hot set
 * again long before a streaming copy can push it off the active LRU list,
 * so a plain share looks harmless next to it. A paced reader, like a real
 * server, leaves its pages idle for a while between touches, and that is
 * where the copy's pages evict them (BRIEF.md, "How we measure").
 *
 * The run is split into phases (idle, copy, after): SIGUSR1 starts the
 * next phase. SIGTERM, SIGINT or -t SECONDS end the run. Reads that cannot
 * keep the schedule are issued late, not skipped, unless the reader falls
 * more than a second behind; then the schedule restarts from now.
 *
 * The log, one line per event, flushed as written (times in nanoseconds,
 * EPOCH in seconds since 1970 as the run script's date +%s.%N):
 *
 *   ready EPOCH SIZE
 *   sec EPOCH PHASE READS P50 P99 MAX       each second; "nan" when empty
 *   phase N READS SECONDS P50 P99 MAX MEAN LATE P99.9   at the end,
 *                                                     per phase
 *   done EPOCH ERRORS
 *
 * LATE counts reads that started more than a millisecond behind schedule.
 * smb_hotreader.c includes this file and adds an SMB backend.
 *
 * Copyright (C) 2026 The vfs_cacheguard authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HR_PAGE 4096
#define HR_MAX_PHASES 8
#define HR_NSEC 1000000000LL
#define HR_LATE_NS 1000000LL

/* How the reader reaches its file: a local fd, or an SMB client */
struct hr_io {
	/* returns 0 or an errno value */
	int (*open)(const char *name, void **handle, uint64_t *size);
	/* reads exactly len bytes at off; returns 0 or an errno value */
	int (*pread)(void *handle, void *buf, size_t len, uint64_t off);
	void (*close)(void *handle);
};

struct hr_samples {
	uint32_t *v;	/* latencies in ns, clamped to UINT32_MAX (4.29 s) */
	size_t n;
	size_t cap;
	double sum;
	uint64_t late;
};

struct hr_config {
	double rate;
	uint64_t min_len;
	uint64_t max_len;
	double max_seconds;
	uint64_t seed;
	const char *log_path;
	const char *name;
};

static volatile sig_atomic_t hr_phase_requests;
static bool hr_direct;		/* -d: local reads with O_DIRECT */
static volatile sig_atomic_t hr_stop;

static void hr_on_usr1(int sig)
{
	hr_phase_requests++;
}

static void hr_on_stop(int sig)
{
	hr_stop = 1;
}

static int64_t hr_now(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * HR_NSEC + ts.tv_nsec;
}

static double hr_epoch(void)
{
	return (double)hr_now(CLOCK_REALTIME) / HR_NSEC;
}

/* xorshift64*: reproducible offsets for a given seed */
static uint64_t hr_random(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static int hr_local_open(const char *name, void **handle, uint64_t *size)
{
	struct stat st;
	int fd;

	fd = open(name, O_RDONLY | O_CLOEXEC | (hr_direct ? O_DIRECT : 0));
	if (fd < 0) {
		return errno;
	}
	if (fstat(fd, &st) != 0) {
		int err = errno;

		close(fd);
		return err;
	}
	*size = (uint64_t)st.st_size;
	*handle = (void *)(intptr_t)fd;
	return 0;
}

static int hr_local_pread(void *handle, void *buf, size_t len, uint64_t off)
{
	int fd = (int)(intptr_t)handle;
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done,
				  (off_t)(off + done));
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			return errno;
		}
		if (n == 0) {
			return EIO;
		}
		done += (size_t)n;
	}
	return 0;
}

static void hr_local_close(void *handle)
{
	close((int)(intptr_t)handle);
}

static const struct hr_io hr_local_io = {
	.open = hr_local_open,
	.pread = hr_local_pread,
	.close = hr_local_close,
};

#ifndef HR_IO_SELECT
static const struct hr_io *hr_local_select(const char *name)
{
	return &hr_local_io;
}
#define HR_IO_SELECT hr_local_select
#endif

static int hr_add(struct hr_samples *s, int64_t ns)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4096;
		uint32_t *v = realloc(s->v, cap * sizeof(*v));

		if (v == NULL) {
			return ENOMEM;
		}
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
	s->sum += (double)ns;
	return 0;
}

static int hr_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a;
	uint32_t y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted sample set */
static uint32_t hr_pct(const struct hr_samples *s, double p)
{
	size_t rank = (size_t)(p / 100.0 * (double)s->n + 0.999999);

	if (rank == 0) {
		rank = 1;
	}
	return s->v[rank - 1];
}

static void hr_print_second(FILE *log, struct hr_samples *s, int phase)
{
	if (s->n == 0) {
		fprintf(log, "sec %.3f %d 0 nan nan nan\n", hr_epoch(), phase);
	} else {
		qsort(s->v, s->n, sizeof(*s->v), hr_cmp);
		fprintf(log, "sec %.3f %d %zu %" PRIu32 " %" PRIu32
			" %" PRIu32 "\n", hr_epoch(), phase, s->n,
			hr_pct(s, 50), hr_pct(s, 99), s->v[s->n - 1]);
	}
	fflush(log);
	s->n = 0;
	s->sum = 0;
}

static void hr_print_phase(FILE *log, struct hr_samples *s, int phase,
			   double seconds)
{
	if (s->n == 0) {
		fprintf(log, "phase %d 0 %.3f nan nan nan nan 0 nan\n", phase,
			seconds);
		return;
	}
	qsort(s->v, s->n, sizeof(*s->v), hr_cmp);
	fprintf(log, "phase %d %zu %.3f %" PRIu32 " %" PRIu32 " %" PRIu32
		" %.0f %" PRIu64 " %" PRIu32 "\n", phase, s->n, seconds,
		hr_pct(s, 50), hr_pct(s, 99), s->v[s->n - 1],
		s->sum / (double)s->n, s->late, hr_pct(s, 99.9));
}

struct hr_run {
	const struct hr_config *cfg;
	const struct hr_io *io;
	void *handle;
	uint64_t size;
	char *buf;
	FILE *log;
	uint64_t rng;
	uint64_t errors;
	uint64_t errors_in_a_row;
	int phase;
	double phase_seconds[HR_MAX_PHASES];
	struct hr_samples second;
	struct hr_samples phases[HR_MAX_PHASES];
};

/* One read of a random length at a random page-aligned offset, timed */
static int hr_read_once(struct hr_run *r, int64_t *done_at)
{
	const struct hr_config *c = r->cfg;
	uint64_t lens = (c->max_len - c->min_len) / HR_PAGE + 1;
	uint64_t len = c->min_len + hr_random(&r->rng) % lens * HR_PAGE;
	uint64_t slots = (r->size - len) / HR_PAGE + 1;
	uint64_t off = hr_random(&r->rng) % slots * HR_PAGE;
	int64_t t0, t1;
	int ret;

	t0 = hr_now(CLOCK_MONOTONIC);
	ret = r->io->pread(r->handle, r->buf, (size_t)len, off);
	t1 = hr_now(CLOCK_MONOTONIC);
	*done_at = t1;
	if (ret != 0) {
		r->errors++;
		/* a dead connection or file: give up rather than spin */
		if (++r->errors_in_a_row >= 100) {
			return ret;
		}
		return 0;
	}
	r->errors_in_a_row = 0;
	ret = hr_add(&r->second, t1 - t0);
	if (ret == 0) {
		ret = hr_add(&r->phases[r->phase], t1 - t0);
	}
	return ret;
}

static void hr_next_phase(struct hr_run *r, int64_t now, int64_t *since)
{
	r->phase_seconds[r->phase] += (double)(now - *since) / HR_NSEC;
	*since = now;
	if (r->phase < HR_MAX_PHASES - 1) {
		r->phase++;
	}
}

/* Sleep until an absolute monotonic time; a signal cuts it short */
static void hr_sleep_until(int64_t when)
{
	struct timespec ts = {
		.tv_sec = when / HR_NSEC,
		.tv_nsec = when % HR_NSEC,
	};

	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

static int hr_loop(struct hr_run *r)
{
	int64_t period = (int64_t)((double)HR_NSEC / r->cfg->rate);
	int64_t limit = (int64_t)(r->cfg->max_seconds * HR_NSEC);
	int64_t start = hr_now(CLOCK_MONOTONIC);
	int64_t next = start, second_end = start + HR_NSEC;
	int64_t phase_start = start, now, done_at;
	sig_atomic_t seen = 0;
	int ret = 0;

	while (!hr_stop && ret == 0) {
		now = hr_now(CLOCK_MONOTONIC);
		if (now - start >= limit) {
			break;
		}
		if (hr_phase_requests != seen) {
			seen = hr_phase_requests;
			hr_next_phase(r, now, &phase_start);
		}
		if (now < next) {
			hr_sleep_until(next);
			continue;
		}
		if (now - next > HR_NSEC) {
			next = now;	/* a second behind: restart the schedule */
		} else if (now - next > HR_LATE_NS) {
			r->phases[r->phase].late++;
		}
		ret = hr_read_once(r, &done_at);
		next += period;
		while (done_at >= second_end) {
			hr_print_second(r->log, &r->second, r->phase);
			second_end += HR_NSEC;
		}
	}
	now = hr_now(CLOCK_MONOTONIC);
	r->phase_seconds[r->phase] += (double)(now - phase_start) / HR_NSEC;
	return ret;
}

static void hr_usage(void)
{
	fprintf(stderr, "usage: hotreader [-d] [-r RATE] [-s MIN] [-S MAX] "
		"[-t SECONDS] [-z SEED] [-o LOG] FILE\n");
	exit(2);
}

static void hr_parse(int argc, char **argv, struct hr_config *c)
{
	int opt;

	while ((opt = getopt(argc, argv, "dr:s:S:t:z:o:")) != -1) {
		switch (opt) {
		case 'd':
			hr_direct = true;
			break;
		case 'r':
			c->rate = strtod(optarg, NULL);
			break;
		case 's':
			c->min_len = strtoull(optarg, NULL, 0);
			break;
		case 'S':
			c->max_len = strtoull(optarg, NULL, 0);
			break;
		case 't':
			c->max_seconds = strtod(optarg, NULL);
			break;
		case 'z':
			c->seed = strtoull(optarg, NULL, 0);
			break;
		case 'o':
			c->log_path = optarg;
			break;
		default:
			hr_usage();
		}
	}
	if (optind != argc - 1 || c->rate <= 0 || c->max_seconds <= 0 ||
	    c->min_len < HR_PAGE || c->min_len % HR_PAGE != 0 ||
	    c->max_len % HR_PAGE != 0 || c->max_len < c->min_len) {
		hr_usage();
	}
	c->name = argv[optind];
}

static int hr_setup(struct hr_run *r)
{
	struct sigaction sa = { .sa_handler = hr_on_usr1 };
	int ret;

	/* no SA_RESTART: a signal must cut the pacing sleep short */
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = hr_on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	r->log = stdout;
	if (r->cfg->log_path != NULL) {
		r->log = fopen(r->cfg->log_path, "w");
		if (r->log == NULL) {
			return errno;
		}
	}
	ret = r->io->open(r->cfg->name, &r->handle, &r->size);
	if (ret != 0) {
		return ret;
	}
	if (r->size < r->cfg->max_len) {
		return EFBIG;	/* the file must hold the largest read */
	}
	r->buf = aligned_alloc(HR_PAGE, r->cfg->max_len);
	return r->buf == NULL ? ENOMEM : 0;
}

int main(int argc, char **argv)
{
	struct hr_config cfg = {
		.rate = 2000, .min_len = 4096, .max_len = 65536,
		.max_seconds = 600, .seed = 0x5eed,
	};
	struct hr_run r = { .cfg = &cfg, .rng = 0 };
	int ret, i;

	hr_parse(argc, argv, &cfg);
	r.rng = cfg.seed | 1;
	r.io = HR_IO_SELECT(cfg.name);
	ret = hr_setup(&r);
	if (ret != 0) {
		fprintf(stderr, "hotreader: %s: %s\n", cfg.name, strerror(ret));
		return 1;
	}
	fprintf(r.log, "ready %.3f %" PRIu64 "\n", hr_epoch(), r.size);
	fflush(r.log);
	ret = hr_loop(&r);
	if (r.second.n > 0) {
		hr_print_second(r.log, &r.second, r.phase);
	}
	for (i = 0; i <= r.phase; i++) {
		hr_print_phase(r.log, &r.phases[i], i, r.phase_seconds[i]);
	}
	fprintf(r.log, "done %.3f %" PRIu64 "\n", hr_epoch(), r.errors);
	fclose(r.log);
	r.io->close(r.handle);
	if (ret != 0) {
		fprintf(stderr, "hotreader: %s: %s\n", cfg.name, strerror(ret));
		return 1;
	}
	return 0;
}
