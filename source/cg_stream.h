/*
 * vfs_cacheguard engine: a file's read stream
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

#ifndef CG_STREAM_H
#define CG_STREAM_H

#include <sys/types.h>

#include "cg_options.h"
#include "cg_seq.h"

/*
 * One per open file of at least min file size. The caller brackets every
 * read with cg_read_begin() and cg_read_end() and calls
 * cg_stream_close() before the close, all in smbd's main thread.
 */

struct cg_sys;

enum cg_stream_state {
	CG_DETECTING = 0,	/* counting sequential bytes */
	CG_ACTIVE,		/* a large sequential stream: drop behind it */
	CG_HOT,			/* the file was cached already: hands off */
};

/* How a file's stream reads are served, which decides hints and drops */
enum cg_via {
	CG_VIA_CACHE = 0,	/* dontneed, and fallbacks to it */
	CG_VIA_DONTCACHE,	/* preadv2(RWF_DONTCACHE) */
	CG_VIA_DIRECT,		/* O_DIRECT */
};

/* Abandoned streams remembered for the close; more are dropped at once */
#define CG_MAX_TAILS 4

struct cg_stats {
	uint64_t bytes_read;	/* all bytes returned to the client */
	uint64_t bytes_dropped;	/* handed to DONTNEED */
	uint64_t drops;		/* DONTNEED calls */
	uint64_t streams;	/* times a stream became active */
	uint64_t hot;		/* times a stream found the file hot */
	uint64_t ra_granted;	/* streams given the kernel's readahead */
};

/* Reads tracked one by one; more go into two batches */
#define CG_FLIGHT_SLOTS 64
/* An offset that holds none: a free slot, nothing cached, no claim */
#define CG_FREE UINT64_MAX

/* How a read in flight is tracked: one by one, or in an overflow batch */
enum cg_track {
	CG_TRACK_NONE = 0,
	CG_TRACK_SLOT,	/* slot[idx] holds its offset */
	CG_TRACK_BATCH,	/* counted in batch[idx] */
};

/* Where one read is tracked, from cg_flight_add to cg_flight_remove */
struct cg_flight_ref {
	enum cg_track track;
	unsigned idx;	/* in slot[], or the batch */
};

/*
 * A stream's reads in flight, so drops never reach below the lowest:
 * one by one up to CG_FLIGHT_SLOTS, beyond in two batches of count and
 * lowest offset. Spills switch batch whenever the other has drained, so
 * a batch's low is never older than the queue and drops keep moving.
 */
struct cg_flight {
	uint64_t slot[CG_FLIGHT_SLOTS];	/* offsets, UINT64_MAX free */
	unsigned nslots;		/* of them in use */
	struct {
		unsigned count;	/* reads in flight beyond the slots */
		uint64_t low;	/* the lowest offset among them */
	} batch[2];
	unsigned cur;		/* the batch new spills join */
};

void cg_flight_init(struct cg_flight *f);

/* A read at off is in flight: *ref says where it is tracked */
void cg_flight_add(struct cg_flight *f,
		   uint64_t off,
		   struct cg_flight_ref *ref);

/* The read of ref ended (a ref tracked nowhere is left alone) */
void cg_flight_remove(struct cg_flight *f, struct cg_flight_ref *ref);

unsigned cg_flight_count(const struct cg_flight *f);

/* The lowest offset of a read in flight; UINT64_MAX: none */
uint64_t cg_flight_lowest(const struct cg_flight *f);

struct cg_stream {
	const struct cg_config *cfg;
	const struct cg_sys *sys;
	uint64_t file_size;
	/* The device's read_ahead_kb in bytes, set by the caller; 0: unknown */
	uint64_t kernel_ra;
	enum cg_via via;	/* cg_stream_set_via() */
	int ra_hint;	/* the POSIX_FADV_* in force on the descriptor */
	int ra_fd;	/* holds its readahead budget units, or -1 */
	bool cold;	/* nothing ahead of it was cached when it began */
	enum cg_stream_state state;

	struct cg_seq seq;	/* detection: the run of reads */
	uint64_t low;		/* lowest stream read, if below the start */
	uint64_t max_read;	/* the largest stream read: readahead floor */

	struct cg_done done;	/* what has been read */
	uint64_t dropped_to;	/* windows below this are dropped */
	uint64_t willneed_to;	/* WILLNEED issued up to here */
	/* cached stream reads: lowest not dropped, highest end, lowest */
	uint64_t cached_lo;
	uint64_t cached_hi;
	uint64_t cached_min;
	uint64_t lag;		/* keep drops this far behind (zero-copy) */
	/* Ranges of abandoned streams, each dropped at close on its own */
	struct cg_range tails[CG_MAX_TAILS];
	unsigned ntails;

	struct cg_flight flight;	/* reads in flight */

	/* Streams of this file in other opens, any process (cg_share.c) */
	struct {
		uint64_t slot;	/* set by the caller; UINT64_MAX: none */
		uint64_t client; /* set by the caller: siblings share it */
		int fd;		/* the stream file while active, or -1 */
		struct cg_range claim;	/* what it told others it needs */
		uint64_t kept_lo;	/* lowest byte kept for another */
		bool seen;	/* another stream of the file was seen */
	} share;
	/* a module below must see every read whole (CG_BELOW_READS) */
	bool next_reads;

	struct cg_stats stats;
};

/* What cg_read_begin() tells the caller to carry into cg_read_end() */
struct cg_io {
	uint64_t off;
	struct cg_flight_ref flight;	/* where the stream tracks it */
	bool in_stream;		/* counted towards the stream */
	bool zerocopy;		/* set by the caller: served by sendfile */
	bool uncached;		/* set by the caller: not via the cache */
	/* set by the engine: read in pieces, each dropped (CG_READ_DROP) */
	bool drop_pieces;
};

void cg_stream_init(struct cg_stream *s,
		    const struct cg_config *cfg,
		    const struct cg_sys *sys,
		    uint64_t file_size);

struct cg_io cg_read_begin(struct cg_stream *s, int fd, uint64_t off, size_t n);

/* The path of stream reads changed; an active stream's hints follow */
void cg_stream_set_via(struct cg_stream *s, int fd, enum cg_via via);

/* nread is what the read returned: bytes, or -1 on error */
void cg_read_end(struct cg_stream *s, int fd, struct cg_io *io, ssize_t nread);

/* Drop what is left of the file's streams; no reads are in flight */
void cg_stream_close(struct cg_stream *s, int fd);

#endif /* CG_STREAM_H */
