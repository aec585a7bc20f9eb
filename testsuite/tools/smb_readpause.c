/*
 * smb_readpause: read a file through SMB (libsmbclient) from start to
 * end in 1 MiB reads, pausing once on the way, and compare every byte
 * with a local copy. For tests that change the file or the server
 * between two reads of one stream (chmod 000 mid-stream, a read that
 * must land in a new second).
 *
 *   smb_readpause [-p PORT] [-U USER%PASS] [-b BYTES] [-w FILE]
 *                 [-t SECONDS] [-r FILE] [-R MIB-PER-S]
 *                 //HOST/SHARE/PATH LOCALFILE
 *                 [//HOST/SHARE/PATH2 LOCALFILE2 ...]
 *
 * Further pairs are read after the first, whole and without a pause, in
 * the same session (so the same smbd process serves them all).
 *
 *   -b BYTES	pause once BYTES bytes have been read (default 0: at the
 *		start, after the open); the read before the pause is cut
 *		short so the pause falls exactly at BYTES
 *   -w FILE	pause until FILE exists (polled every 10 ms)
 *   -t SECONDS	pause this long (fractions allowed); with -w, the
 *		longest wait for FILE, after which reading goes on
 *   -r FILE	create FILE when the pause begins, so a script knows the
 *		stream is open and BYTES have been read
 *   -R MIB	read at most MIB MiB a second from the pause on, as a
 *		client behind a network link would: read N starts no
 *		earlier than its share of the time since the pause, so a
 *		reader held up catches up
 *
 * Without any of these it reads straight through. At the pause it
 * prints "paused at BYTES" (flushed). Exits 0 and prints "ok N bytes"
 * when every byte matched and the length is right, 1 on a mismatch
 * (offset printed), 2 on a usage or I/O error; a failed SMB read prints
 * "read at OFFSET: <strerror(errno)>" on stderr (libsmbclient's errno
 * for the NT_STATUS: NT_STATUS_IO_DEVICE_ERROR comes out as EINVAL).
 *
 * Copyright (C) 2026 The vfs_cacheguard authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "smb_common.h"

#define READ_SIZE (1 << 20)

struct pause {
	bool wanted;		/* any of -b, -w, -t, -r given */
	uint64_t at;
	const char *wait_file;
	double seconds;		/* < 0: no time limit */
	const char *ready_file;
	double rate;		/* bytes a second from the pause; 0: any */
};

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int do_pause(const struct pause *p)
{
	double end = now_seconds() + (p->seconds < 0 ? 0 : p->seconds);
	struct timespec tick = {.tv_nsec = 10 * 1000 * 1000};

	printf("paused at %" PRIu64 "\n", p->at);
	fflush(stdout);
	if (p->ready_file != NULL) {
		int fd = open(p->ready_file, O_WRONLY | O_CREAT, 0644);

		if (fd == -1) {
			fprintf(stderr, "%s: %s\n", p->ready_file,
				strerror(errno));
			return 2;
		}
		close(fd);
	}
	while (p->wait_file != NULL && access(p->wait_file, F_OK) != 0) {
		if (p->seconds >= 0 && now_seconds() >= end) {
			return 0;
		}
		nanosleep(&tick, NULL);
	}
	while (p->wait_file == NULL && now_seconds() < end) {
		nanosleep(&tick, NULL);
	}
	return 0;
}

/* With -R: sleep until a reader at that rate, from t0 at off0, is at off */
static void pace(const struct pause *p, double t0, uint64_t off0,
		 uint64_t off)
{
	double due, t;
	struct timespec ts;

	if (p->rate <= 0 || off <= off0) {
		return;
	}
	due = t0 + (double)(off - off0) / p->rate;
	t = now_seconds();
	if (due <= t) {
		return;
	}
	ts.tv_sec = (time_t)(due - t);
	ts.tv_nsec = (long)((due - t - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

/* Read the remote file to its end; 0 all matched, 1 mismatch, 2 error */
static int read_compare(SMBCCTX *ctx, SMBCFILE *remote, int local,
			uint64_t size, const struct pause *p)
{
	smbc_read_fn read_fn = smbc_getFunctionRead(ctx);
	unsigned char *rbuf = malloc(READ_SIZE);
	unsigned char *lbuf = malloc(READ_SIZE);
	uint64_t off = 0, off0 = 0;
	double t0 = now_seconds();
	bool paused = false;
	int ret = 2;

	if (rbuf == NULL || lbuf == NULL) {
		goto out;
	}
	for (;;) {
		size_t len = READ_SIZE;
		ssize_t n;

		if (!paused && !p->wanted) {
			paused = true;	/* nothing to wait for */
		}
		if (!paused && off >= p->at) {
			ret = do_pause(p);
			if (ret != 0) {
				goto out;
			}
			paused = true;
			t0 = now_seconds();
			off0 = off;
		}
		if (!paused && p->at - off < len) {
			len = p->at - off;
		}
		pace(p, t0, off0, off);
		n = read_fn(ctx, remote, rbuf, len);
		if (n < 0) {
			fprintf(stderr, "read at %" PRIu64 ": %s\n", off,
				strerror(errno));
			ret = 2;
			goto out;
		}
		if (n == 0) {
			break;
		}
		if (off + (uint64_t)n > size ||
		    pread(local, lbuf, n, (off_t)off) != n) {
			printf("MISMATCH length: more than %" PRIu64
			       " bytes\n", size);
			ret = 1;
			goto out;
		}
		if (memcmp(rbuf, lbuf, n) != 0) {
			ssize_t i = 0;

			while (rbuf[i] == lbuf[i]) {
				i++;
			}
			printf("MISMATCH bytes at %" PRIu64 "\n", off + i);
			ret = 1;
			goto out;
		}
		off += (uint64_t)n;
	}
	if (off != size) {
		printf("MISMATCH length: got %" PRIu64 " want %" PRIu64 "\n",
		       off, size);
		ret = 1;
		goto out;
	}
	printf("ok %" PRIu64 " bytes\n", off);
	ret = 0;
out:
	free(rbuf);
	free(lbuf);
	return ret;
}

int main(int argc, char **argv)
{
	struct pause p = {.seconds = -1};
	char url[4096];
	SMBCCTX *ctx = NULL;
	SMBCFILE *remote = NULL;
	struct stat st;
	int port = 445, opt, local, ret;

	while ((opt = getopt(argc, argv, "p:U:b:w:t:r:R:")) != -1) {
		if (smbt_option(opt, &port, NULL)) {
			continue;
		}
		switch (opt) {
		case 'b': p.at = strtoull(optarg, NULL, 0); break;
		case 'w': p.wait_file = optarg; break;
		case 't': p.seconds = strtod(optarg, NULL); break;
		case 'r': p.ready_file = optarg; break;
		case 'R': p.rate = strtod(optarg, NULL) * 1048576; break;
		default: goto usage;
		}
		p.wanted = p.wanted || strchr("bwtr", opt) != NULL;
	}
	if (argc - optind < 2 || (argc - optind) % 2 != 0) {
		goto usage;
	}
	ctx = smbt_connect(port);
	if (ctx == NULL) {
		return 2;
	}
	for (; optind < argc; optind += 2) {
		local = open(argv[optind + 1], O_RDONLY);
		if (local < 0 || fstat(local, &st) != 0) {
			fprintf(stderr, "%s: %s\n", argv[optind + 1],
				strerror(errno));
			return 2;
		}
		snprintf(url, sizeof(url), "smb:%s", argv[optind]);
		remote = smbc_getFunctionOpen(ctx)(ctx, url, O_RDONLY, 0);
		if (remote == NULL) {
			fprintf(stderr, "open %s: %s\n", url, strerror(errno));
			return 2;
		}
		ret = read_compare(ctx, remote, local, (uint64_t)st.st_size,
				   &p);
		smbc_getFunctionClose(ctx)(ctx, remote);
		close(local);
		if (ret != 0) {
			break;
		}
		p.wanted = false;	/* the pause is the first file's */
	}
	smbc_free_context(ctx, 1);
	return ret;
usage:
	fprintf(stderr,
		"usage: smb_readpause [-p PORT] [-U USER%%PASS] [-b BYTES] "
		"[-w FILE] [-t SECONDS] [-r FILE] [-R MIB-PER-S] "
		"//HOST/SHARE/PATH "
		"LOCALFILE [//HOST/SHARE/PATH2 LOCALFILE2 ...]\n");
	return 2;
}
