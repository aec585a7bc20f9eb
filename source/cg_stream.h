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

#include "cg_options.h"
#include "cg_done.h"
#include "cg_seq.h"
#include "cg_flight.h"

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

/*
 * How a file's stream reads are served, which decides the hints: only
 * through the page cache do FADV_SEQUENTIAL and WILLNEED make sense.
 * Uncached streams drop only windows their cached reads touched, and,
 * dontcache, everything when the file was cold at stream start: its
 * uncached reads can leave pages behind (a folio still busy when the
 * read completes), and there are no one else's pages to spare.
 */
enum cg_via {
	CG_VIA_CACHE = 0,	/* dontneed, and fallbacks to it */
	CG_VIA_DONTCACHE,	/* preadv2(RWF_DONTCACHE) */
	CG_VIA_DIRECT,		/* O_DIRECT */
};

/* Abandoned streams remembered for the close; more are dropped at once */
#define CG_MAX_TAILS 4

struct cg_stats {
	uint64_t bytes_read;	/* all bytes returned to the client */
	uint64_t bytes_stream;	/* of those, part of an active stream */
	uint64_t bytes_dropped;	/* handed to DONTNEED */
	uint64_t drops;		/* DONTNEED calls */
	uint64_t streams;	/* times a stream became active */
	uint64_t hot;		/* times a stream found the file hot */
	uint64_t ra_granted;	/* of those, with the kernel's readahead */
};

struct cg_stream {
	const struct cg_config *cfg;
	const struct cg_sys *sys;
	uint64_t file_size;
	/*
	 * The kernel's readahead for the file's device in bytes, set by
	 * the caller after cg_stream_init(); 0 when unknown. Bounds what
	 * a stream's own readahead may have cached past its front.
	 */
	uint64_t kernel_ra;
	enum cg_via via;	/* cg_stream_set_via() */
	/*
	 * The readahead hint in force on the descriptor, POSIX_FADV_RANDOM
	 * (its own readahead) or POSIX_FADV_SEQUENTIAL (the kernel's, for
	 * a stream holding the readahead budget); FADV_NORMAL, none, is
	 * restored when the stream ends.
	 */
	int ra_hint;
	/*
	 * While active, a descriptor of the server's readahead budget file
	 * holding this stream's share of readahead_memory (cg_budget.c):
	 * the stream keeps the kernel's readahead. -1: it reads ahead on
	 * its own, or is not active.
	 */
	int ra_fd;
	/*
	 * Nothing of the file ahead of the stream was cached when it
	 * became active: no one else's pages to spare.
	 */
	bool cold;
	enum cg_stream_state state;

	/* Detection: the run of reads (cg_seq.h) */
	struct cg_seq seq;
	uint64_t low;		/* lowest stream read, if below the start */
	uint64_t max_read;	/* the largest stream read: readahead floor */

	/* Bookkeeping: what has been read (done.contig and above it) */
	struct cg_done done;
	uint64_t dropped_to;	/* windows below this are dropped */
	uint64_t willneed_to;	/* WILLNEED issued up to here */
	/*
	 * Stream reads that went through the page cache: the lowest not
	 * yet dropped behind, the highest end, the lowest ever. Only
	 * their windows are dropped, so an uncached stream evicts nothing
	 * that others keep cached.
	 */
	uint64_t cached_lo;
	uint64_t cached_hi;
	uint64_t cached_min;
	uint64_t lag;		/* keep drops this far behind (zero-copy) */
	/* Ranges of abandoned streams, each dropped at close on its own */
	struct cg_range tails[CG_MAX_TAILS];
	unsigned ntails;

	struct cg_flight flight;	/* reads in flight (cg_flight.h) */

	/* Streams of this file in other opens, any process (cg_share.c) */
	struct {
		uint64_t slot;	/* set by the caller; UINT64_MAX: none */
		/*
		 * Set by the caller: streams with the same nonzero value
		 * are one client's handles (one smbd process), and keep
		 * nothing for each other: the client's own cache serves
		 * its readers
		 */
		uint64_t client;
		int fd;		/* the stream file while active, or -1 */
		struct cg_range claim;	/* what it told others it needs */
		uint64_t kept_lo;	/* lowest byte kept for another */
		bool seen;	/* another stream of the file was seen */
	} share;
	/*
	 * Every read goes whole to the next module: a module below must
	 * see them (CG_BELOW_READS)
	 */
	bool next_reads;

	struct cg_stats stats;
};

/* What cg_read_begin() tells the caller to carry into cg_read_end() */
struct cg_io {
	uint64_t off;
	struct cg_flight_ref flight;	/* where the stream tracks it */
	bool in_stream;		/* counted towards the stream */
	bool zerocopy;		/* set by the caller: served by sendfile */
	/*
	 * Set by the caller: the read did not go through the page cache
	 * (RWF_DONTCACHE, O_DIRECT), so it left nothing there to drop.
	 */
	bool uncached;
	/*
	 * Set by the engine: a stream through the page cache (dontneed),
	 * alone on its file, may drop this read's pages as soon as they are
	 * copied out; the caller reads it in pieces with CG_READ_DROP. Its
	 * window drops would come a window and two client reads later.
	 */
	bool drop_pieces;
};

void cg_stream_init(struct cg_stream *s,
		    const struct cg_config *cfg,
		    const struct cg_sys *sys,
		    uint64_t file_size);

struct cg_io cg_read_begin(struct cg_stream *s, int fd, uint64_t off, size_t n);

/*
 * The path of the file's stream reads changed; an active stream that
 * starts using the page cache gets its hints now.
 */
void cg_stream_set_via(struct cg_stream *s, int fd, enum cg_via via);

/* Reads between cg_read_begin() and cg_read_end() now */
unsigned cg_stream_inflight(const struct cg_stream *s);

/* nread is what the read returned: bytes, or -1 on error */
void cg_read_end(struct cg_stream *s, int fd, struct cg_io *io, ssize_t nread);

/* Drop what is left of the file's streams; no reads are in flight */
void cg_stream_close(struct cg_stream *s, int fd);

#endif /* CG_STREAM_H */
