/*
 * dio_fork: does an O_DIRECT read land in the memory its reader sees
 * while the process forks? (issue 47, point 3)
 *
 *   dio_fork [-m heap|dontfork|bounce] [-t SECONDS] [-s SIZE] [-f SIZE]
 *            [-o MIN] FILE
 *
 * Writes FILE (-f bytes, default 64 MiB) with a pattern that names each
 * 8-byte word's offset, then reads it with O_DIRECT, -s bytes at a time
 * (default 1 MiB), for -t seconds (default 30), into a buffer laid out as
 * smbd's read buffer is when cacheguard's direct mode reads a MISS in
 * place: the buffer starts and ends in the middle of a page, and the
 * rest of its first and last pages is memory another thread keeps
 * writing (smbd's main thread: talloc and malloc headers next to the
 * buffer). A third thread forks in a loop (smbd's dfree command, print
 * and message commands through smbrun). Every read is checked, word by
 * word, against the file.
 *
 * Why it can fail: before Linux 6.5 block direct I/O takes plain page
 * references (FOLL_GET). fork() then write-protects the reader's pages as
 * any others, and the neighbour's next write to the first or last page
 * copies it: the parent maps the copy from then on, while the device
 * writes the read's bytes into the old page, which only the child (or
 * nobody) sees. The read returns with the buffer's head or tail holding
 * what it held before the read. Since 6.5 the pages are pinned
 * (FOLL_PIN) and fork() gives the child the copy instead.
 *
 * Modes:
 *   heap      the buffer inside a malloc'd block, as smbd's (default)
 *   dontfork  the same pages with madvise(MADV_DONTFORK): the child gets
 *             no mapping of them, fork() write-protects nothing there
 *   bounce    O_DIRECT into a page-aligned private mapping of its own
 *             with MADV_DONTFORK, copied into the heap buffer after
 *
 * Exit: 0 every byte right, with at least -o reads (default 20) that a
 * fork() overlapped; 1 wrong bytes (the first read that had them is
 * described); 77 nothing tested: no O_DIRECT on FILE, an alignment that
 * leaves the buffer no page to share, or fewer than -o reads overlapped
 * by a fork(); 2 usage or I/O error.
 *
 * Copyright (C) 2026 The vfs_cacheguard authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#define _GNU_SOURCE
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef STATX_DIOALIGN
/* Headers older than Linux 6.1: the fields follow stx_mnt_id */
#define STATX_DIOALIGN 0x2000
#define DIO_MEM(stx) (((const uint32_t *)(stx))[0x98 / 4])
#define DIO_OFFSET(stx) (((const uint32_t *)(stx))[0x9c / 4])
#else
#define DIO_MEM(stx) ((stx)->stx_dio_mem_align)
#define DIO_OFFSET(stx) ((stx)->stx_dio_offset_align)
#endif

#define EXIT_WRONG 1
#define EXIT_ERROR 2
#define EXIT_SKIP 77

/* What the buffer holds before each read: never a word of the file */
#define POISON_BYTE 0xa5
#define POISON_WORD UINT64_C(0xa5a5a5a5a5a5a5a5)

enum mode { MODE_HEAP, MODE_DONTFORK, MODE_BOUNCE };

struct shared {
	atomic_bool stop;
	/* forks begun, and forks returned in the parent */
	atomic_uint_fast64_t forks_begun;
	atomic_uint_fast64_t forks_done;
	uint64_t writes;
	volatile uint64_t *head;	/* in the buffer's first page */
	volatile uint64_t *tail;	/* in its last page */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The file's word at offset off (a multiple of 8): never POISON_WORD */
static uint64_t pattern(uint64_t off)
{
	uint64_t v = (off + 8) * UINT64_C(0x9e3779b97f4a7c15);

	return v == POISON_WORD ? v + 1 : v;
}

static int write_file(const char *path, uint64_t size)
{
	uint64_t chunk[8192];
	uint64_t off;
	size_t len;
	size_t i;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd == -1) {
		fprintf(stderr, "dio_fork: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (off = 0; off < size; off += sizeof(chunk)) {
		for (i = 0; i < sizeof(chunk) / 8; i++) {
			chunk[i] = pattern(off + 8 * i);
		}
		len = size - off < sizeof(chunk) ? (size_t)(size - off)
						 : sizeof(chunk);
		if (write(fd, chunk, len) != (ssize_t)len) {
			fprintf(stderr, "dio_fork: writing %s: %s\n", path,
				strerror(errno));
			close(fd);
			return -1;
		}
	}
	if (fsync(fd) == -1 || close(fd) == -1) {
		fprintf(stderr, "dio_fork: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* The neighbour: smbd's main thread writing next to the buffer */
static void *writer(void *arg)
{
	struct shared *s = arg;
	uint64_t n = 0;

	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		*s->head = n;
		*s->tail = n;
		n++;
	}
	s->writes = n;
	return NULL;
}

/* smbrun: fork, and the child is gone at once */
static void *forker(void *arg)
{
	struct shared *s = arg;
	pid_t pid;

	while (!atomic_load(&s->stop)) {
		atomic_fetch_add(&s->forks_begun, 1);
		pid = fork();
		if (pid == 0) {
			_exit(0);
		}
		atomic_fetch_add(&s->forks_done, 1);
		if (pid == -1) {
			usleep(1000);
			continue;
		}
		waitpid(pid, NULL, 0);
	}
	return NULL;
}

/* Wrong bytes of a read, where they are in the buffer */
struct wrong {
	size_t head;		/* in the buffer's first page */
	size_t tail;		/* in its last page */
	size_t middle;		/* in between */
	size_t stale;		/* of all, still what was there before */
	size_t first;
	size_t last;		/* one past the last */
};

/*
 * Check n bytes read from off into buf, whose first page ends at
 * head_end and whose last page starts at tail_start: true when all are
 * the file's
 */
static bool check(const uint8_t *buf, size_t n, uint64_t off,
		  size_t head_end, size_t tail_start, struct wrong *wr)
{
	const uint64_t *w = (const uint64_t *)buf;
	size_t at;
	size_t i;

	*wr = (struct wrong){.first = SIZE_MAX};
	for (i = 0; i < n / 8; i++) {
		if (w[i] == pattern(off + 8 * i)) {
			continue;
		}
		at = i * 8;
		if (at < head_end) {
			wr->head += 8;
		} else if (at >= tail_start) {
			wr->tail += 8;
		} else {
			wr->middle += 8;
		}
		wr->stale += w[i] == POISON_WORD ? 8 : 0;
		if (wr->first == SIZE_MAX) {
			wr->first = at;
		}
		wr->last = at + 8;
	}
	return wr->first == SIZE_MAX;
}

static void usage(void)
{
	fprintf(stderr, "usage: dio_fork [-m heap|dontfork|bounce] "
		"[-t SECONDS] [-s SIZE] [-f SIZE] [-o MIN] FILE\n");
	exit(EXIT_ERROR);
}

static int parse_mode(const char *arg, enum mode *mode)
{
	if (strcmp(arg, "heap") == 0) {
		*mode = MODE_HEAP;
	} else if (strcmp(arg, "dontfork") == 0) {
		*mode = MODE_DONTFORK;
	} else if (strcmp(arg, "bounce") == 0) {
		*mode = MODE_BOUNCE;
	} else {
		return -1;
	}
	return 0;
}

struct run {
	enum mode mode;
	double seconds;
	size_t size;		/* of each read */
	uint64_t file_size;
	uint64_t min_overlap;
	const char *path;
	size_t page;
	size_t head;		/* of the first page, before the buffer */
	uint32_t offset_align;
	int fd;
	uint8_t *base;		/* the buffer's first page */
	uint8_t *buf;		/* what the reader sees */
	uint8_t *bounce;	/* MODE_BOUNCE: where O_DIRECT reads */
	/* what happened */
	uint64_t reads;
	uint64_t overlapped;	/* reads a fork() overlapped */
	double elapsed;
};

/*
 * The alignment O_DIRECT asks for on r->fd: the buffer starts half a
 * page in, so it must be aligned to no more than that
 */
static int probe_alignment(struct run *r)
{
	struct statx stx = {0};
	uint32_t mem = 512;

	r->offset_align = 512;
	if (statx(r->fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
	    (stx.stx_mask & STATX_DIOALIGN) != 0) {
		if (DIO_OFFSET(&stx) == 0) {
			printf("SKIP: %s: no O_DIRECT on its filesystem\n",
			       r->path);
			return EXIT_SKIP;
		}
		mem = DIO_MEM(&stx);
		r->offset_align = DIO_OFFSET(&stx);
	}
	r->head = r->page / 2;
	if (mem == 0 || mem > r->head || r->offset_align > r->page) {
		printf("SKIP: %s: O_DIRECT alignment %" PRIu32 " (memory), "
		       "%" PRIu32 " (offset): no page left to share with the "
		       "buffer\n", r->path, mem, r->offset_align);
		return EXIT_SKIP;
	}
	return 0;
}

/*
 * The buffer: from the heap (the brk heap, as smbd's read buffers once
 * glibc's mmap threshold has grown), half a page into a page, so that its
 * first and last pages hold the neighbour's words too
 */
static int setup_memory(struct run *r, struct shared *s)
{
	uint8_t *raw = NULL;
	uintptr_t mask = r->page - 1;

	mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
	raw = malloc(r->size + 3 * r->page);
	if (raw == NULL) {
		return -1;
	}
	r->base = (uint8_t *)(((uintptr_t)raw + mask) & ~mask);
	r->buf = r->base + r->head;
	s->head = (volatile uint64_t *)(r->base + 64);
	s->tail = (volatile uint64_t *)(r->buf + r->size + 64);
	if (r->mode == MODE_DONTFORK &&
	    madvise(r->base, r->size + r->page, MADV_DONTFORK) == -1) {
		return -1;
	}
	if (r->mode != MODE_BOUNCE) {
		return 0;
	}
	r->bounce = mmap(NULL, r->size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->bounce == MAP_FAILED) {
		return -1;
	}
	return madvise(r->bounce, r->size, MADV_DONTFORK);
}

/* One read at off into the buffer, checked: 0, EXIT_WRONG or an error */
static int read_one(struct run *r, struct shared *s, uint64_t off)
{
	uint8_t *dst = r->mode == MODE_BOUNCE ? r->bounce : r->buf;
	struct wrong wr;
	uint64_t done_before;
	ssize_t n;

	memset(r->buf, POISON_BYTE, r->size);
	if (r->bounce != NULL) {
		memset(r->bounce, POISON_BYTE, r->size);
	}
	done_before = atomic_load(&s->forks_done);
	n = pread(r->fd, dst, r->size, (off_t)off);
	/* a fork that had not returned when the read began, begun by now */
	if (atomic_load(&s->forks_begun) > done_before) {
		r->overlapped++;
	}
	if (n == -1 && errno == EINVAL && r->reads == 0) {
		printf("SKIP: %s: O_DIRECT read: %s\n", r->path,
		       strerror(errno));
		return EXIT_SKIP;
	}
	if (n == -1) {
		fprintf(stderr, "dio_fork: read of %zu at %" PRIu64 ": %s\n",
			r->size, off, strerror(errno));
		return EXIT_ERROR;
	}
	if ((size_t)n != r->size) {
		fprintf(stderr, "dio_fork: read of %zu at %" PRIu64 ": %zd "
			"bytes\n", r->size, off, n);
		return EXIT_ERROR;
	}
	if (r->mode == MODE_BOUNCE) {
		memcpy(r->buf, r->bounce, (size_t)n);
	}
	r->reads++;
	if (check(r->buf, r->size, off, r->page - r->head,
		  r->size - r->head, &wr)) {
		return 0;
	}
	printf("read %" PRIu64 " (%zu bytes at file offset %" PRIu64 "): "
	       "%zu wrong bytes in [%zu, %zu) of the buffer: %zu in its "
	       "first page, %zu in its last, %zu in between; %zu still the "
	       "bytes from before the read\n", r->reads, r->size, off,
	       wr.head + wr.tail + wr.middle, wr.first, wr.last, wr.head,
	       wr.tail, wr.middle, wr.stale);
	return EXIT_WRONG;
}

static int read_loop(struct run *r, struct shared *s)
{
	uint64_t slots = r->file_size / r->size;
	double start = now();
	int ret = 0;

	while (ret == 0 && now() - start < r->seconds) {
		ret = read_one(r, s, (r->reads % slots) * r->size);
	}
	r->elapsed = now() - start;
	return ret;
}

/* A size with an optional K or M suffix (powers of 1024); 0 if bad */
static uint64_t parse_size(const char *arg)
{
	char *end = NULL;
	uint64_t v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno != 0 || end == arg) {
		return 0;
	}
	if (*end == 'K') {
		v *= 1024;
		end++;
	} else if (*end == 'M') {
		v *= 1024 * 1024;
		end++;
	}
	return *end == '\0' ? v : 0;
}

static void parse_args(int argc, char **argv, struct run *r)
{
	static const char *names[] = {"heap", "dontfork", "bounce"};
	int c;

	while ((c = getopt(argc, argv, "m:t:s:f:o:")) != -1) {
		switch (c) {
		case 'm':
			if (parse_mode(optarg, &r->mode) == -1) {
				usage();
			}
			break;
		case 't':
			r->seconds = atof(optarg);
			break;
		case 's':
			r->size = (size_t)parse_size(optarg);
			break;
		case 'f':
			r->file_size = parse_size(optarg);
			break;
		case 'o':
			r->min_overlap = strtoull(optarg, NULL, 10);
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1 || r->seconds <= 0 || r->size == 0 ||
	    r->size % r->page != 0 || r->file_size < r->size) {
		usage();
	}
	r->path = argv[optind];
	printf("dio_fork: mode %s, reads of %zu bytes of a %" PRIu64
	       "-byte file, %.0f s\n", names[r->mode], r->size, r->file_size,
	       r->seconds);
}

int main(int argc, char **argv)
{
	struct run r = {
		.mode = MODE_HEAP,
		.seconds = 30,
		.size = 1024 * 1024,
		.file_size = 64 * 1024 * 1024,
		.min_overlap = 20,
		.page = (size_t)sysconf(_SC_PAGESIZE),
	};
	struct shared s = {0};
	pthread_t w;
	pthread_t f;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_args(argc, argv, &r);
	if (write_file(r.path, r.file_size) == -1) {
		return EXIT_ERROR;
	}
	r.fd = open(r.path, O_RDONLY | O_DIRECT);
	if (r.fd == -1) {
		printf("SKIP: %s: open with O_DIRECT: %s\n", r.path,
		       strerror(errno));
		return errno == EINVAL ? EXIT_SKIP : EXIT_ERROR;
	}
	ret = probe_alignment(&r);
	if (ret != 0) {
		return ret;
	}
	if (setup_memory(&r, &s) == -1) {
		fprintf(stderr, "dio_fork: memory: %s\n", strerror(errno));
		return EXIT_ERROR;
	}
	if (pthread_create(&w, NULL, writer, &s) != 0 ||
	    pthread_create(&f, NULL, forker, &s) != 0) {
		fprintf(stderr, "dio_fork: cannot start the threads\n");
		return EXIT_ERROR;
	}
	ret = read_loop(&r, &s);
	atomic_store(&s.stop, true);
	pthread_join(w, NULL);
	pthread_join(f, NULL);
	printf("dio_fork: %" PRIu64 " reads in %.1f s, %" PRIu64
	       " overlapped by a fork (%" PRIu64 " forks), the neighbour "
	       "wrote %" PRIu64 " times\n", r.reads, r.elapsed, r.overlapped,
	       (uint64_t)atomic_load(&s.forks_done), s.writes);
	if (ret == EXIT_WRONG) {
		printf("wrong bytes in read %" PRIu64 ", %.1f s in\n",
		       r.reads, r.elapsed);
	} else if (ret == 0 && r.overlapped < r.min_overlap) {
		printf("SKIP: only %" PRIu64 " reads overlapped a fork "
		       "(want %" PRIu64 "): nothing tested\n", r.overlapped,
		       r.min_overlap);
		ret = EXIT_SKIP;
	} else if (ret == 0) {
		printf("ok: every byte right\n");
	}
	return ret;
}
