/*
 * vfs_cacheguard engine: the policy, free of Samba types.
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

#ifndef CACHEGUARD_H
#define CACHEGUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Options (cg_options.c)
 *
 * One struct per share, filled at tree connect from smb.conf
 * "cacheguard:<name> = <value>" lines and read-only afterwards.
 */

enum cg_mode {
	CG_MODE_OFF = 0,
	CG_MODE_AUTO,
	CG_MODE_DONTNEED,
	CG_MODE_DONTCACHE,
	CG_MODE_DIRECT,
};

struct cg_config {
	enum cg_mode mode;
	/* Files smaller than this are never tracked: no state, no syscalls */
	uint64_t min_file_size;
	/* Sequential bytes before a stream counts as a large copy */
	uint64_t stream_trigger;
	/*
	 * Drop-behind granularity: one fadvise per window. Also how far
	 * behind the stream front a read may land and still belong to the
	 * stream (clients keep several reads in flight).
	 */
	uint64_t window;
	/* Percent of a file resident at stream start that marks it hot */
	unsigned hot_threshold;
	/* WILLNEED this far ahead of the front; 0 leaves it to the kernel */
	uint64_t readahead;
	uint64_t direct_prefetch;
	uint64_t direct_memory;
	uint64_t direct_min_io;
};

enum cg_opt_type {
	CG_OPT_MODE,
	CG_OPT_SIZE,
	CG_OPT_PERCENT,
};

struct cg_option {
	const char *name;	/* as written after "cacheguard:" */
	enum cg_opt_type type;
	const char *def;	/* default, in smb.conf syntax */
	size_t offset;		/* of the field in struct cg_config */
};

/* Every option the module reads, NULL-terminated; the docs test walks it */
extern const struct cg_option cg_options[];

const char *cg_mode_name(enum cg_mode mode);

/* The built-in defaults */
void cg_config_init(struct cg_config *cfg);

/*
 * Set one option from its smb.conf text. On error returns EINVAL and
 * writes a sentence naming the option, the value and what is valid.
 */
int cg_config_set(struct cg_config *cfg,
		  const char *name,
		  const char *value,
		  char *err,
		  size_t errlen);

/* Cross-option checks after all values are set; same error contract */
int cg_config_check(const struct cg_config *cfg, char *err, size_t errlen);

/* "mode=dontneed min file size=16M ..." for the connect log line */
void cg_config_describe(const struct cg_config *cfg, char *buf, size_t len);

/* Sizes with an optional K/M/G/T suffix (powers of 1024) */
int cg_parse_size(const char *s, uint64_t *out);

/*
 * Streams (cg_stream.c)
 *
 * One struct cg_stream per open file that is at least min file size
 * long. The caller brackets every read of that file with
 * cg_read_begin() and cg_read_end(), and calls cg_stream_close() before
 * the file is closed. All three run in smbd's main thread.
 */

struct cg_sys;

enum cg_stream_state {
	CG_DETECTING = 0,	/* counting sequential bytes */
	CG_ACTIVE,		/* a large sequential stream: drop behind it */
	CG_HOT,			/* the file was cached already: hands off */
};

struct cg_range {
	uint64_t off;
	uint64_t end;
};

/* Reads tracked in flight at once; more are counted, and block drops */
#define CG_MAX_INFLIGHT 64
/* Completed ranges above the contiguous front kept to merge later */
#define CG_MAX_DONE 16

struct cg_stats {
	uint64_t bytes_read;	/* all bytes returned to the client */
	uint64_t bytes_stream;	/* of those, part of an active stream */
	uint64_t bytes_dropped;	/* handed to DONTNEED */
	uint64_t drops;		/* DONTNEED calls */
	uint64_t streams;	/* times a stream became active */
	uint64_t hot;		/* times a stream found the file hot */
};

struct cg_stream {
	const struct cg_config *cfg;
	const struct cg_sys *sys;
	uint64_t file_size;
	enum cg_stream_state state;

	/* Detection: the stream runs from start up to front */
	uint64_t start;
	uint64_t front;
	uint64_t seq_bytes;
	unsigned strays;	/* far reads in a row while active */

	/* Bookkeeping: all of [start, contig) has been read */
	uint64_t contig;
	struct cg_range done[CG_MAX_DONE];
	unsigned ndone;
	uint64_t dropped_to;	/* windows below this are dropped */
	uint64_t willneed_to;	/* WILLNEED issued up to here */
	uint64_t lag;		/* keep drops this far behind (zero-copy) */
	struct cg_range tail;	/* abandoned streams, dropped at close */

	uint64_t inflight[CG_MAX_INFLIGHT];	/* offsets, UINT64_MAX free */
	unsigned ninflight;
	unsigned untracked;	/* in flight beyond CG_MAX_INFLIGHT */

	struct cg_stats stats;
};

/* What cg_read_begin() tells the caller to carry into cg_read_end() */
struct cg_io {
	uint64_t off;
	int slot;		/* index in inflight[], or < 0 */
	bool in_stream;		/* counted towards the stream */
	bool zerocopy;		/* set by the caller: served by sendfile */
};

void cg_stream_init(struct cg_stream *s,
		    const struct cg_config *cfg,
		    const struct cg_sys *sys,
		    uint64_t file_size);

struct cg_io cg_read_begin(struct cg_stream *s, int fd, uint64_t off, size_t n);

/* nread is what the read returned: bytes, or -1 on error */
void cg_read_end(struct cg_stream *s, int fd, struct cg_io *io, ssize_t nread);

/* Drop what is left of the file's streams; no reads are in flight */
void cg_stream_close(struct cg_stream *s, int fd);

#endif /* CACHEGUARD_H */
