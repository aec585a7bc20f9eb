/*
 * vfs_cacheguard fuzz harness: streams of one file in several processes
 * (cg_share.c), driven by any interleaving of their reads
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
 * Three opens of one file (or, by the header, of two files whose slots
 * differ), each as if in its own smbd process, or by the header as
 * handles of one client (one smbd process): each has its own cg_file
 * and its own descriptor of a real stream file, so their OFD locks are
 * real and conflict as between processes. The input is a header (each
 * open's options and mode, the file size) and then events: an open
 * begins a read (next in sequence, near its front, far away), a read in
 * flight ends (full, short, failed), an open closes and opens again with
 * other options, or its process dies (its stream-file descriptor closes
 * under it, as the kernel closes it at exit, and the open starts over).
 * After every fadvise the harness checks:
 *
 * - no DONTNEED of one open that takes part (it has the stream file)
 *   overlaps what another client's open of the same file claims (its
 *   cg_stream.share.claim, exactly as it holds it in the file): the guarantee
 *   the stream file exists for;
 * - no DONTNEED overlaps a read of the same open still in flight;
 * - a DONTNEED is within the file, or the reads of its open past it;
 * - an open's claim lies within the file, and it has one only while
 *   its stream is active and has the stream file;
 * - every descriptor of the stream file is closed when its open closes
 *   (none is left open at the end of the input).
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cg_file.h"
#include "cg_share.h"
#include "cg_sys.h"
#include "fuzz_common.h"

#define KiB (1ULL << 10)
#define MiB (1ULL << 20)
#define NOPENS 3
#define MAXREADS 12
#define FD_BASE 100

struct fz_read {
	bool busy;
	uint64_t off;
	size_t n;
	struct cg_io io;
};

struct fz_open {
	struct cg_config cfg;
	struct cg_file f;
	bool live;
	uint64_t file;		/* which file: its slot */
	uint64_t next;		/* the next sequential offset */
	uint64_t maxend;	/* the highest end of any of its reads */
	struct fz_read reads[MAXREADS];
};

static struct fz_open opens[NOPENS];
static uint64_t file_size;
static char lock_path[64];

/* FZ_TRACE=1 in the environment: each event on stderr, to read a repro */
static void trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void trace(const char *fmt, ...)
{
	static int on = -1;
	va_list ap;

	if (on == -1) {
		on = getenv("FZ_TRACE") != NULL;
	}
	if (on) {
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
	}
}

static bool overlaps(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	return a0 < b1 && b0 < a1;
}

static int fz_fadvise(int fd, uint64_t off, uint64_t len, int advice)
{
	int me = fd - FD_BASE;
	uint64_t end = off + len;
	unsigned i;

	if (me < 0 || me >= NOPENS) {
		fz_violation("fadvise on fd %d, no open's", fd);
	}
	if (advice != POSIX_FADV_DONTNEED) {
		return 0;
	}
	if (len == 0 || end > FZ_MAX(file_size, opens[me].maxend)) {
		fz_violation("DONTNEED [%llu, +%llu) past the file (%llu)",
			     (unsigned long long)off,
			     (unsigned long long)len,
			     (unsigned long long)file_size);
	}
	for (i = 0; i < MAXREADS; i++) {
		const struct fz_read *r = &opens[me].reads[i];

		if (r->busy && overlaps(off, end, r->off, r->off + r->n)) {
			fz_violation("open %d drops [%llu, %llu) over its read "
				     "[%llu, +%zu) in flight",
				     me,
				     (unsigned long long)off,
				     (unsigned long long)end,
				     (unsigned long long)r->off,
				     r->n);
		}
	}
	/* An open that does not take part (gap 0) drops alone */
	for (i = 0; i < NOPENS && opens[me].f.stream.share.fd != -1; i++) {
		const struct cg_stream *o = &opens[i].f.stream;

		/* one client's opens keep nothing for each other */
		if ((int)i == me || !opens[i].live || o->share.fd == -1 ||
		    opens[i].file != opens[me].file ||
		    o->share.claim.end <= o->share.claim.off ||
		    (o->share.client != 0 &&
		     o->share.client == opens[me].f.stream.share.client)) {
			continue;
		}
		if (overlaps(off, end, o->share.claim.off,
			     o->share.claim.end)) {
			fz_violation("open %d drops [%llu, %llu) which open %u "
				     "claims [%llu, %llu)",
				     me,
				     (unsigned long long)off,
				     (unsigned long long)end,
				     i,
				     (unsigned long long)o->share.claim.off,
				     (unsigned long long)o->share.claim.end);
		}
	}
	return 0;
}

static uint8_t resident_pct;

static int fz_resident(int fd, uint64_t off, uint64_t len, uint64_t *bytes)
{
	*bytes = len / 100 * resident_pct;
	return 0;
}

static int fz_share_open(void)
{
	return open(lock_path, O_RDWR | O_CLOEXEC);
}

/*
 * Descriptors of the stream file this process holds: the engine's own
 * (share_open) and the ones it dups for one client's siblings
 */
static int share_fds_open(void)
{
	char link[32], target[sizeof(lock_path) + 16];
	size_t plen = strlen(lock_path);
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;
	ssize_t len;

	if (d == NULL) {
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
		len = readlink(link, target, sizeof(target) - 1);
		if (len > 0) {
			target[len] = '\0';
			/* the path is gone: " (deleted)" follows it */
			n += strncmp(target, lock_path, plen) == 0 &&
			     (target[plen] == '\0' ||
			      strcmp(target + plen, " (deleted)") == 0);
		}
	}
	closedir(d);
	return n;
}

static const struct cg_sys fz_sys = {
	.fadvise = fz_fadvise,
	.resident = fz_resident,
	.share_open = fz_share_open,
};

static void check_claim(const struct fz_open *o)
{
	const struct cg_stream *s = &o->f.stream;

	if (s->share.claim.end == 0) {
		return;
	}
	if (s->share.fd == -1) {
		fz_violation("a claim without the stream file");
	}
	if (s->share.claim.off > s->share.claim.end ||
	    s->share.claim.end > FZ_MAX(file_size, s->seq.front)) {
		fz_violation("claim [%llu, %llu) outside the file (%llu)",
			     (unsigned long long)s->share.claim.off,
			     (unsigned long long)s->share.claim.end,
			     (unsigned long long)file_size);
	}
}

static void open_file(int i, struct fz_in *in)
{
	static const enum cg_mode modes[] = {
		CG_MODE_DONTNEED, CG_MODE_DONTNEED, CG_MODE_DONTCACHE,
		CG_MODE_DIRECT,
	};
	static const uint64_t windows[] = {64 * KiB, 1 * MiB, 8 * MiB};
	static const uint64_t gaps[] = {0, 1 * MiB, 8 * MiB, 128 * MiB};
	static const uint64_t triggers[] = {64 * KiB, 4 * MiB};
	static const uint64_t ras[] = {0, 4 * MiB};
	struct fz_open *o = &opens[i];
	uint8_t file = fz_u8(in);

	memset(o, 0, sizeof(*o));
	cg_config_init(&o->cfg);
	o->cfg.mode = FZ_PICK(in, modes);
	o->cfg.window = FZ_PICK(in, windows);
	o->cfg.reader_gap = FZ_PICK(in, gaps);
	o->cfg.stream_trigger = FZ_PICK(in, triggers);
	o->cfg.readahead = FZ_PICK(in, ras);
	o->cfg.hot_threshold = (file & 0x80) ? 50 : 0;
	o->file = (file & 0x40) ? 2 : 1;
	cg_file_init(&o->f, &o->cfg, &fz_sys, file_size, 0, FD_BASE + i);
	trace("open %d: mode %d window %llu gap %llu trigger %llu file %llu "
	      "client %d\n",
	      i,
	      (int)o->cfg.mode,
	      (unsigned long long)o->cfg.window,
	      (unsigned long long)o->cfg.reader_gap,
	      (unsigned long long)o->cfg.stream_trigger,
	      (unsigned long long)o->file,
	      (file & 0x20) ? 1 : 100 + i);
	o->f.stream.share.slot = cg_share_slot(7, o->file);
	/* by the header: one client's handle, or a client of its own */
	o->f.stream.share.client = (file & 0x20) ? 1 : 100 + (uint64_t)i;
	o->live = true;
}

static void end_read(int i, unsigned k, uint8_t how)
{
	struct fz_open *o = &opens[i];
	struct fz_read *r = &o->reads[k];
	ssize_t got = (ssize_t)r->n;

	if (how % 8 == 0) {
		got = -1;
	} else if (how % 8 == 1) {
		got = (ssize_t)(r->n / 2);
	}
	if (r->off >= file_size) {
		got = 0;
	} else if (got > 0 && r->off + (uint64_t)got > file_size) {
		got = (ssize_t)(file_size - r->off);
	}
	r->busy = false;	/* the harness's list first: it is done */
	trace("end %d [%llu, +%zd)\n", i, (unsigned long long)r->off, got);
	cg_read_end(&o->f.stream, FD_BASE + i, &r->io, got);
	check_claim(o);
}

static void end_all(int i)
{
	unsigned k;

	for (k = 0; k < MAXREADS; k++) {
		if (opens[i].reads[k].busy) {
			end_read(i, k, 2);
		}
	}
}

static void close_open(int i)
{
	struct fz_open *o = &opens[i];

	end_all(i);
	cg_stream_close(&o->f.stream, FD_BASE + i);
	if (o->f.stream.share.fd != -1) {
		fz_violation("the stream file stays open after the close");
	}
	o->live = false;
}

/* The process dies: the kernel closes its descriptors, no close runs */
static void kill_open(int i)
{
	uint64_t client = opens[i].f.stream.share.client;
	int j;

	/* the process goes with every open of its client */
	for (j = 0; j < NOPENS; j++) {
		struct fz_open *o = &opens[j];

		if (j != i &&
		    (!o->live || o->f.stream.share.client != client)) {
			continue;
		}
		if (o->f.stream.share.fd != -1) {
			close(o->f.stream.share.fd);
		}
		/* its memory goes too: nothing of it is left to see */
		o->f.stream.share.fd = -1;
		o->f.stream.share.client = 0;
		memset(o->reads, 0, sizeof(o->reads));
		o->live = false;
	}
}

static void begin_read(int i, struct fz_in *in)
{
	static const size_t sizes[] = {
		64 * KiB, 1 * MiB, 1 * MiB, 4 * MiB, 8 * MiB, 100 * KiB,
	};
	struct fz_open *o = &opens[i];
	uint8_t where = fz_u8(in);
	size_t n = FZ_PICK(in, sizes);
	uint64_t off = o->next;
	struct fz_read *r = NULL;
	enum cg_path path;
	unsigned k;

	for (k = 0; k < MAXREADS && r == NULL; k++) {
		if (!o->reads[k].busy) {
			r = &o->reads[k];
		}
	}
	if (r == NULL) {
		end_read(i, where % MAXREADS, 2);
		return;
	}
	if (where % 16 == 1) {
		off = (uint64_t)fz_u16(in) * 64 * KiB % (file_size + MiB);
	} else if (where % 16 == 2 && o->next > 4 * MiB) {
		off = o->next - 4 * MiB;
	}
	o->next = off + n;
	o->maxend = FZ_MAX(o->maxend, off + n);
	r->off = off;
	r->n = n;
	r->busy = true;
	r->io = cg_read_begin(&o->f.stream, FD_BASE + i, off, n);
	trace("read %d [%llu, +%zu): state %d, claim [%llu, %llu)\n",
	      i,
	      (unsigned long long)off,
	      n,
	      (int)o->f.stream.state,
	      (unsigned long long)o->f.stream.share.claim.off,
	      (unsigned long long)o->f.stream.share.claim.end);
	path = cg_file_choose(&o->f, &r->io, n, false);
	r->io.uncached = path != CG_PATH_NEXT;
	check_claim(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = {.p = data, .n = size};
	unsigned steps = 0;
	int i;

	if (lock_path[0] == '\0') {
		int fd;

		snprintf(lock_path, sizeof(lock_path),
			 "/tmp/cg-fuzz-share.XXXXXX");
		fd = mkstemp(lock_path);
		if (fd == -1) {
			abort();
		}
		close(fd);
		/* the path goes; the descriptors opened later keep working */
	}
	file_size = ((uint64_t)(fz_u16(&in) % 512) + 1) * MiB +
		    fz_u16(&in) % 4096;
	resident_pct = fz_u8(&in) % 101;
	for (i = 0; i < NOPENS; i++) {
		open_file(i, &in);
	}
	while (in.n > 0 && steps++ < 4000) {
		uint8_t op = fz_u8(&in);

		i = (op >> 4) % NOPENS;
		if (!opens[i].live) {
			open_file(i, &in);
			continue;
		}
		switch (op % 16) {
		case 0: case 1: case 2: case 3: case 4: case 5:
			begin_read(i, &in);
			break;
		case 6: case 7: case 8: case 9: case 10: {
			uint8_t k = fz_u8(&in);

			if (opens[i].reads[k % MAXREADS].busy) {
				end_read(i, k % MAXREADS, fz_u8(&in));
			}
			break;
		}
		case 11: case 12:
			end_all(i);
			break;
		case 13:
			close_open(i);
			break;
		case 14:
			kill_open(i);
			break;
		default:
			resident_pct = fz_u8(&in) % 101;
			break;
		}
	}
	for (i = 0; i < NOPENS; i++) {
		if (opens[i].live) {
			close_open(i);
		}
	}
	if (share_fds_open() != 0) {
		fz_violation("%d stream-file descriptors left open",
			     share_fds_open());
	}
	return 0;
}
