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

#include <errno.h>
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
	/*
	 * An active stream's own readahead, for the streams beyond
	 * readahead_memory: the kernel's is turned off on its descriptor
	 * (FADV_RANDOM) and, through the page cache, WILLNEED keeps this
	 * far ahead of the front. 0 leaves readahead to the kernel for
	 * every stream (the device's read_ahead_kb, no hint).
	 */
	uint64_t readahead;
	/*
	 * The page cache that the kernel's own readahead of streams, of all
	 * smbd processes together, may hold ahead of their clients: a
	 * stream whose two windows of twice read_ahead_kb fit in what is
	 * left keeps the kernel's readahead (FADV_SEQUENTIAL, its large
	 * requests); the others read ahead on their own (readahead).
	 * 0: none keeps it.
	 */
	uint64_t readahead_memory;
	/*
	 * Streams of one file (cg_share.c): how far behind another stream
	 * a reader may be and still find its pages cached. 0: each stream
	 * drops as if alone.
	 */
	uint64_t reader_gap;
	uint64_t direct_prefetch;
	uint64_t direct_memory;
	uint64_t direct_min_io;
	/*
	 * The I/O priority of the I/O a stream's own jobs issue (direct
	 * fills and reads, uncached reads), in ioprio_set(2)'s encoding:
	 * 0 leaves the thread's as it is (cg_sys.h, cg_ioprio_enter).
	 */
	unsigned stream_ioprio;
};

enum cg_opt_type {
	CG_OPT_MODE,
	CG_OPT_SIZE,
	CG_OPT_PERCENT,
	CG_OPT_IOPRIO,
};

/* ioprio_set(2)'s encoding: class in the top bits, level below */
#define CG_IOPRIO_CLASS_SHIFT 13
#define CG_IOPRIO_CLASS_BE 2
#define CG_IOPRIO_CLASS_IDLE 3
#define CG_IOPRIO_VALUE(class, level) \
	((unsigned)(class) << CG_IOPRIO_CLASS_SHIFT | (unsigned)(level))

struct cg_option {
	const char *name;	/* as written after "cacheguard:" */
	enum cg_opt_type type;
	const char *def;	/* default, in smb.conf syntax */
	size_t offset;		/* of the field in struct cg_config */
};

/* Every option the module reads, NULL-terminated; the docs test walks it */
extern const struct cg_option cg_options[];

const char *cg_mode_name(enum cg_mode mode);
/* cacheguard:stream ioprio's word for an encoded priority */
const char *cg_ioprio_name(unsigned ioprio);

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

/*
 * Whether name (what follows "cacheguard:") is an option, compared as
 * Samba compares parameter names: case and white space do not count.
 */
bool cg_option_known(const char *name);

/* "mode, min file size, ..." for the log line about an unknown option */
void cg_option_names(char *buf, size_t len);

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
/* Reads tracked one by one; more go into two batches (cg_stream.c) */
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

	/* Detection: the stream runs from start up to front */
	uint64_t start;
	uint64_t low;		/* lowest stream read, if below start */
	uint64_t front;
	uint64_t seq_bytes;
	uint64_t max_read;	/* the largest stream read: readahead floor */
	unsigned strays;	/* far reads in a row while active */

	/* Bookkeeping: all of [start, contig) has been read */
	uint64_t contig;
	struct cg_range done[CG_MAX_DONE];
	unsigned ndone;
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

	uint64_t inflight[CG_MAX_INFLIGHT];	/* offsets, UINT64_MAX free */
	unsigned ninflight;
	struct {
		unsigned count;	/* reads in flight beyond the table */
		uint64_t low;	/* the lowest offset among them */
	} batch[2];
	unsigned cur_batch;	/* the batch new overflow reads join */

	/* Streams of this file in other opens, any process (cg_share.c) */
	uint64_t share_slot;	/* set by the caller; UINT64_MAX: none */
	/*
	 * Set by the caller: streams with the same nonzero value are one
	 * client's handles (one smbd process), and keep nothing for each
	 * other: the client's own cache serves its readers
	 */
	uint64_t share_client;
	int share_fd;		/* the stream file, while active; or -1 */
	struct cg_range claim;	/* what this stream told others it needs */
	uint64_t kept_lo;	/* lowest byte a drop kept for another */
	bool shared;		/* another stream of the file was seen */
	/*
	 * Every read goes whole to the next module: a module below must
	 * see them (CG_BELOW_READS)
	 */
	bool next_reads;

	struct cg_stats stats;
};

/* How a read in flight is tracked: one by one, or in an overflow batch */
enum cg_track {
	CG_TRACK_NONE = 0,
	CG_TRACK_SLOT,	/* inflight[idx] holds its offset */
	CG_TRACK_BATCH,	/* counted in batch[idx] */
};

/* What cg_read_begin() tells the caller to carry into cg_read_end() */
struct cg_io {
	uint64_t off;
	enum cg_track track;	/* how the stream tracks it in flight */
	unsigned idx;		/* slot in inflight[], or batch number */
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

/*
 * Streams of one file in several processes (cg_share.c): the slot of the
 * file with this device and inode in the server's stream file, for
 * cg_stream.share_slot
 */
uint64_t cg_share_slot(uint64_t dev, uint64_t ino);

/* For cg_stream.c: an active stream joins the file's streams */
void cg_share_begin(struct cg_stream *s);
/*
 * Whether another stream of the same client reads the file now: each
 * read of this one is then a piece of the client's one scan, which its
 * readahead sends through any of its handles, never a stray
 */
bool cg_share_sibling_active(const struct cg_stream *s);
/*
 * The stream still needs the file from "from" on (no read in flight
 * starts below it): move its claim (once a window), learn whether others
 * read the file, retry kept bytes. True when it has just learned that
 * others do: what the stream makes of that is cg_stream.c's.
 */
bool cg_share_update(struct cg_stream *s, int fd, uint64_t from);
/* DONTNEED [off, end) except what others claim: the lowest byte kept */
uint64_t cg_share_drop(struct cg_stream *s, int fd, uint64_t off,
		       uint64_t end);
/*
 * What streams ahead may have kept for this one that it has not read:
 * the part of its claim past its front, once it has seen another
 */
struct cg_range cg_share_leftover(const struct cg_stream *s);
/*
 * The stream ended: give up its claim. close_it (no reads in flight):
 * drop its leftover first, and close the descriptor
 */
void cg_share_end(struct cg_stream *s, int fd, bool close_it);

/*
 * Files (cg_file.c)
 * =================
 *
 * One struct cg_file per tracked open file: its stream, the mode its
 * streams are served in, and every decision about a read's path and
 * what a failure means, so that the glue only does what it is told.
 * The filesystem's capabilities are the glue's to remember (per smbd
 * process and device); the file is told them and answers with what the
 * filesystem turned out to lack.
 */

/* How one read is served */
enum cg_path {
	CG_PATH_NEXT = 0,	/* the next module: through the page cache */
	CG_PATH_UNCACHED,	/* preadv2(RWF_DONTCACHE) */
	CG_PATH_DIRECT,		/* O_DIRECT, with the private prefetch */
	CG_PATH_COUNT,
};

/* What a failure to set up direct reads for one file means */
enum cg_direct_fail {
	CG_DIRECT_FAIL_FILE = 0,	/* this file only: others keep direct */
	CG_DIRECT_FAIL_FS,		/* the filesystem refuses O_DIRECT */
	CG_DIRECT_FAIL_MEMORY,		/* over cacheguard:direct memory */
	/*
	 * smbd holds a kernel oplock (kernel oplocks = yes: a lease, for a
	 * client's batch or exclusive oplock) on the file: any second open,
	 * the O_DIRECT one too, would break it. This open only.
	 */
	CG_DIRECT_FAIL_LEASE,
};

/* What a filesystem lacks, learnt from a probe or a failure */
#define CG_FS_NO_DONTCACHE 0x2
#define CG_FS_NO_DIRECT 0x4
/*
 * ... or from its type: a network or FUSE filesystem, whose files change
 * beyond the kernel's sight and whose ctime may come from a cache (NFS
 * answers fstat from its attribute cache, up to acregmax, 60 s by
 * default), so that direct mode's prefetch could serve bytes another
 * client has overwritten. auto serves its streams with dontneed there.
 */
#define CG_FS_REMOTE 0x10

/* CG_FS_REMOTE for a statfs f_type that is one, else 0 */
unsigned cg_fs_type_lacks(uint64_t f_type);

/*
 * Mode auto's probe of a filesystem, once per device and process: one
 * uncached read of a byte, then, where it is refused, an O_DIRECT reopen.
 * cg_probe_uncached takes the read's errno (0: it worked) and says what
 * comes next; *lacks gets the CG_FS_* flags learnt so far (with
 * cg_fs_type_lacks(f_type)). NO_ANSWER: the read failed for another
 * reason (EBADF: a descriptor opened for writing only), or a reopen is
 * needed but not allowed now (may_reopen false: smbd holds a lease on the
 * file, which a second open would break); the next file asks again.
 * cg_probe_direct takes the reopen's errno (0: it opened) and returns
 * the flag it teaches.
 */
enum cg_probe {
	CG_PROBE_NO_ANSWER = 0,
	CG_PROBE_DONE,		/* *lacks is the answer */
	CG_PROBE_REOPEN,	/* try an O_DIRECT reopen (cg_probe_direct) */
};

enum cg_probe cg_probe_uncached(int err,
				bool may_reopen,
				uint64_t f_type,
				unsigned *lacks);
unsigned cg_probe_direct(int err);

/*
 * Whether a filesystem of f_type may be mounted by other machines too: a
 * network or FUSE one, or a cluster filesystem (GPFS, GFS2, OCFS2). The
 * module's lock and status files must not be on one (every node of a
 * cluster would share them).
 */
bool cg_fs_type_shared(uint64_t f_type);

/*
 * The stack (cg_stack.c)
 * ======================
 *
 * The modules listed below cacheguard in "vfs objects". The fast paths
 * (uncached and direct reads, a dontneed stream's reads in pieces,
 * uncached writes) act on the file's descriptor, past the modules below.
 * A module below that must see the file's reads or writes (it audits,
 * commits or changes them, or is not known) gets them: the file's streams
 * go through it in that direction, buffered and dropped behind in
 * windows, as dontneed. These flags go with a file's CG_FS_* flags into
 * cg_file_init() and cg_writer_init(), never into what is remembered of
 * its filesystem.
 */
#define CG_BELOW_READS 0x100	/* it reads: pread, pread_send, sendfile */
#define CG_BELOW_WRITES 0x200	/* it writes: pwrite, pwrite_send, recvfile */

enum cg_below_kind {
	CG_BELOW_PLAIN = 0,	/* no read or write of its own */
	/*
	 * Its reads and writes serve alternate data streams or map names
	 * (streams_xattr, streams_depot, fruit, catia): the file's own
	 * bytes pass through it unchanged
	 */
	CG_BELOW_NAMES,
	/*
	 * An I/O engine (io_uring): the same reads and writes, submitted
	 * another way; a stream's own I/O replaces it for that stream
	 */
	CG_BELOW_ENGINE,
	CG_BELOW_SEES,		/* it must see them: audits, commits, unknown */
};

/*
 * The kind of the module called name (NULL: no name known) that
 * implements ops (CG_BELOW_READS, CG_BELOW_WRITES)
 */
enum cg_below_kind cg_below_kind(const char *name, unsigned ops);

struct cg_file {
	struct cg_stream stream;
	enum cg_mode mode;		/* resolved: not auto, not off */
	unsigned below;			/* CG_BELOW_* of its stack */
	uint64_t bytes[CG_PATH_COUNT];	/* bytes served per path */
	uint64_t fallbacks;		/* fast-path reads retried buffered */
	const char *fallback_why;	/* the last reason, for the summary */
};

/* The mode a file gets: the wanted one, or what its filesystem allows */
enum cg_mode cg_mode_resolve(enum cg_mode want, unsigned fs_lacks);

/* Whether a share's module does anything: not in mode off */
bool cg_config_watches(const struct cg_config *cfg);

/*
 * Whether a file's streams in one direction (CG_BELOW_READS or
 * CG_BELOW_WRITES) need to know what its filesystem takes: in mode auto,
 * unless a module below must see that direction's I/O, which makes every
 * such stream dontneed anyway (below: the share's CG_BELOW_* flags)
 */
bool cg_config_probes(const struct cg_config *cfg,
		      unsigned below,
		      unsigned direction);

/*
 * Which open files get a read stream's state. Asked twice: before the
 * module keeps anything for the file, with smbd's size from the open,
 * which may be stale where this handle has written the file since
 * (modified: then only the kernel knows, and the answer is maybe); and at
 * the file's first read, with the kernel's size then, which decides for
 * the rest of the open. Files smaller than cacheguard:min file size are
 * left alone, and nothing is watched in mode off.
 */
bool cg_file_may_track(const struct cg_config *cfg,
		       uint64_t open_size,
		       bool modified);
bool cg_file_tracks(const struct cg_config *cfg, uint64_t size);

/*
 * Track a file of size bytes whose filesystem lacks fs_lacks, with the
 * CG_BELOW_* flags of its stack
 */
void cg_file_init(struct cg_file *f,
		  const struct cg_config *cfg,
		  const struct cg_sys *sys,
		  uint64_t size,
		  unsigned fs_lacks,
		  int fd);

/* The path for a read that cg_read_begin() returned io for */
enum cg_path cg_file_choose(const struct cg_file *f,
			    const struct cg_io *io,
			    size_t n);

/*
 * Direct reads could not be set up for the file (fail says why): the
 * file continues in another mode. Returns the CG_FS_* flag its
 * filesystem now lacks, or 0.
 */
unsigned cg_file_direct_unavailable(struct cg_file *f,
				    int fd,
				    enum cg_direct_fail fail,
				    unsigned fs_lacks);

/*
 * A direct request the prefetch could not serve found no room in the
 * server's budget for its bounce buffer (the errno it fails with): it is
 * read through the next module, this once, and nothing else changes
 */
#define CG_DIRECT_NO_BUDGET ENOBUFS

/*
 * A read on path failed with err; the caller reads the range again
 * through the next module. Returns the CG_FS_* flag the filesystem now
 * lacks, or 0.
 */
unsigned cg_file_read_failed(struct cg_file *f,
			     int fd,
			     enum cg_path path,
			     int err,
			     unsigned fs_lacks);

/* The call that carries out one read, for the path and the read's io */
enum cg_call {
	CG_CALL_NEXT = 0,	/* the next module's read */
	CG_CALL_DONTCACHE,	/* preadv2(RWF_DONTCACHE) in 1 MiB pieces */
	CG_CALL_PIECES,		/* 1 MiB pieces, each dropped once read */
	CG_CALL_DIRECT,		/* the file's direct stream */
};

enum cg_call cg_file_call(const struct cg_io *io, enum cg_path path);

/* What a read's end means (cg_file_read_after) */
enum cg_after {
	CG_AFTER_DONE = 0,	/* the result is the read's answer */
	CG_AFTER_AGAIN,		/* read it again, plainly */
	CG_AFTER_FELL_BACK,	/* a fast path failed: again, plainly */
};

/*
 * A read carried out as cg_file_call(io, *path) said ended with ret (-1:
 * err). DONE: ret is the answer, io->uncached says how it was read.
 * Otherwise the same range is read again through the next module (*path
 * CG_PATH_NEXT, io without pieces), which always ends DONE: AGAIN after
 * a read in pieces failed, FELL_BACK after a fast path failed, which
 * cg_file_read_failed has taken in (*learnt: the CG_FS_* flag the
 * filesystem now lacks, or 0; fs_lacks: what it was known to lack).
 */
enum cg_after cg_file_read_after(struct cg_file *f,
				 int fd,
				 struct cg_io *io,
				 enum cg_path *path,
				 ssize_t ret,
				 int err,
				 unsigned fs_lacks,
				 unsigned *learnt);

/*
 * Whether smbd may serve a read with sendfile(2), which reads through
 * the page cache: not while an active stream is served uncached or
 * direct (a dontcache stream that others share reads through the cache)
 */
bool cg_file_zerocopy_ok(const struct cg_file *f);

/* Count what a read on path returned */
void cg_file_served(struct cg_file *f, enum cg_path path, ssize_t nread);

/*
 * Counters are kept once, per file; a process's status sums them:
 * the files closed so far, plus the files open now.
 */
struct cg_totals {
	uint64_t files;
	struct cg_stats stats;
	uint64_t bytes[CG_PATH_COUNT];
	uint64_t fallbacks;
};

void cg_totals_add(struct cg_totals *t, const struct cg_file *f);

/*
 * Direct reads (cg_direct.c)
 * ==========================
 *
 * The bookkeeping behind cacheguard:mode = direct; the scheduler
 * (cg_dsched.c) drives it, the glue (modules/cacheguard_direct.c) does
 * the I/O. Two parts:
 *
 * Planning. O_DIRECT wants the file offset and the length aligned to the
 * device (512 or 4096 bytes; the buffer too, which the glue sees to). A
 * request is widened to the alignment, read, and trimmed back to exactly
 * the bytes asked for, short at end of file as pread() would be.
 *
 * Prefetch. A direct read has no kernel readahead, so each stream keeps
 * a table of segments (1 MiB, aligned) filled in the background up to
 * "ahead" bytes past the highest request. Requests are then served from
 * the table (HIT), wait for a segment still loading (PENDING) rather
 * than read it twice, or are read directly (MISS). Segments are released
 * once copied out, or reused when they fall behind the stream. Every
 * segment remembers the file's version (ctime and size) from just before
 * its read; the caller validates the table against the current version
 * before each lookup, and reports writes it knows of, so the table never
 * hands out bytes older than the file.
 */

/* Widened read for a request: [off, off + len) covers it, both aligned */
struct cg_dio_plan {
	uint64_t off;
	size_t len;
	size_t skip;	/* where the request starts in the widened read */
};

/*
 * The alignment to use: the statx STATX_DIOALIGN answer when the kernel
 * gave one (0 there means no O_DIRECT for the file: returns 0), else the
 * device's logical block size, else 4096. Values that are not powers of
 * two are ignored.
 */
size_t cg_dio_alignment(bool have_dioalign,
			uint32_t dio_mem_align,
			uint32_t dio_offset_align,
			uint32_t logical_block_size);

/* open(O_DIRECT) of a file failed with err: the file, or its filesystem? */
enum cg_direct_fail cg_direct_open_failure(int err);

/* false when align is not a power of two or the range overflows */
bool cg_dio_plan(uint64_t off, size_t n, size_t align, struct cg_dio_plan *p);

/* Bytes of the request in a widened read that returned got bytes */
size_t cg_dio_trim(const struct cg_dio_plan *p, size_t n, size_t got);

/*
 * A request read with O_DIRECT into the caller's own buffer, so that it
 * costs no bounce buffer: the body, [off, off + body), goes to buf +
 * shift, the first aligned address in buf, and is moved down by shift
 * once read; the rest of the request, the tail, is read through a bounce
 * of tail.len bytes (less than three alignment units).
 */
struct cg_dio_inplace {
	size_t n;
	size_t shift;
	size_t body;
	struct cg_dio_plan tail;	/* [off + body, off + n), widened */
};

/*
 * The in-place plan for n bytes at off into the buffer at address buf;
 * false when off is not aligned or n leaves no aligned block after the
 * shift: read the request through a bounce buffer (cg_dio_plan).
 */
bool cg_dio_inplace(uint64_t off,
		    size_t n,
		    uintptr_t buf,
		    size_t align,
		    struct cg_dio_inplace *p);

/* An aligned read of len bytes at off into buf: bytes, or -1 and errno */
typedef ssize_t (*cg_dio_read_fn)(void *ctx,
				  uint8_t *buf,
				  size_t len,
				  uint64_t off);

/*
 * Carry out plan p for the request at off into buf, bounce holding
 * p->tail.len bytes: the request's bytes (fewer at end of file), or -1
 * and errno as read left it
 */
ssize_t cg_dio_read_inplace(const struct cg_dio_inplace *p,
			    uint8_t *buf,
			    uint64_t off,
			    uint8_t *bounce,
			    cg_dio_read_fn read,
			    void *ctx);

#define CG_PREFETCH_SEG (1024 * 1024)
#define CG_PREFETCH_MIN_SEG (64 * 1024)
/* The largest segment cg_prefetch_align chooses for a device */
#define CG_PREFETCH_DEV_SEG (8 * 1024 * 1024)
#define CG_PREFETCH_MAX_SEGS 64

/*
 * What the file looked like to a fill or a lookup: ctime and size from
 * fstat(), and CLOCK_REALTIME_COARSE read just before that fstat. A change
 * means cached bytes may be stale.
 *
 * The kernel stamps a change with the coarse clock; before Linux 6.13 two
 * changes within one tick (one second on filesystems with whole-second
 * timestamps) get the same ctime. So a version is trusted ("settled") only
 * when the clock had already moved past the ctime's tick before the
 * fstat: every later change then has a later ctime and is seen.
 */
struct cg_pf_version {
	uint64_t ctime_ns;
	uint64_t size;
	uint64_t clock_ns;
};

/* The coarse clock ticks at least this often (HZ >= 100) */
#define CG_PF_TICK_NS 10000000ULL
/* Whole-second timestamps (ext4 with 128-byte inodes; FAT's are 2 s) */
#define CG_PF_COARSE_TS_NS 2000000000ULL

/* The clock from which any later change gets a ctime other than v's */
uint64_t cg_pf_version_settles(const struct cg_pf_version *v);

/* Segments read under v can be served until the version changes */
bool cg_pf_version_settled(const struct cg_pf_version *v);

enum cg_pf_state {
	CG_PF_FREE = 0,
	CG_PF_LOADING,	/* a read into the slot is in flight */
	CG_PF_READY,
};

struct cg_pf_seg {
	enum cg_pf_state state;
	/*
	 * LOADING: invalidated, discard when the read ends; READY and
	 * pinned: invalidated, serves no one, freed when unpinned
	 */
	bool stale;
	uint64_t off;	/* file offset, a multiple of seg_size */
	size_t len;	/* READY: bytes read; short means end of file */
	size_t used;	/* READY: bytes copied out so far */
	struct cg_pf_version ver;
	unsigned pins;	/* READY: copies out of it in flight */
};

enum cg_pf_lookup {
	CG_PF_MISS = 0,	/* some byte is in no segment: read directly */
	CG_PF_PENDING,	/* all covered, some segment still loading */
	CG_PF_HIT,	/* all covered by loaded segments (or end of file) */
};

struct cg_prefetch {
	size_t seg_size;
	unsigned nseg;		/* 0: no prefetch */
	uint64_t ahead;		/* keep this much loaded past the front */
	uint64_t front;		/* end of the highest request seen */
	size_t max_read;	/* the largest request seen */
	uint64_t discarded;	/* segments thrown away as possibly stale */
	uint64_t unsettled;	/* fills thrown away: the file just changed */
	uint64_t fills;		/* segment reads started */
	uint64_t clock_ns;	/* the latest clock of a version seen */
	uint64_t hold_ns;	/* no fills before this clock: file changing */
	struct cg_pf_seg seg[CG_PREFETCH_MAX_SEGS];
};

/* Geometry for "ahead" bytes of prefetch at this alignment */
void cg_prefetch_init(struct cg_prefetch *pf, uint64_t ahead, size_t align);

/*
 * The alignment to give cg_prefetch_init on a device whose requests go
 * up to max_request bytes (its queue's max_sectors_kb; 0: not known):
 * segments grow from align (a power of two: the buffer's page at least)
 * by doubling while smaller than max_request, up to CG_PREFETCH_DEV_SEG,
 * as long as "ahead" still holds two of them. A fill is then one device
 * request: on storage that counts requests, a 2 MiB segment on a device
 * that takes 4 MiB costs twice the requests.
 */
size_t cg_prefetch_align(uint64_t ahead, size_t align, uint64_t max_request);

/* Bytes of buffer the table needs: slot i is at i * seg_size */
size_t cg_prefetch_memory(const struct cg_prefetch *pf);

/*
 * Segments the table wants for the largest request seen with inflight
 * requests outstanding: their window and two requests more, at most most
 * bytes (rounded up to a segment) and CG_PREFETCH_MAX_SEGS, never fewer
 * than it has (0: prefetch is off)
 */
unsigned cg_prefetch_wanted(const struct cg_prefetch *pf,
			    unsigned inflight,
			    uint64_t most);

/*
 * The most one stream's table grows to: this share of direct memory. A
 * half: smbclient reads 8 MiB at a time, two in flight, and a table of a
 * quarter (8 MiB of a 32M budget) left most of its reads a MISS read
 * into smbd's own 4 KiB pages, small requests: 0.74-1.13x the plain
 * share at 500 read IOPS, 1.22-1.47x at a half (docs/benchmarks.md).
 * At 64M, where a half is the 32 MiB that two reads past smbclient's
 * window want, four copies in scenario C pushed 107 MiB of the hot set
 * out of its cgroup against 9.5 MiB at 32M: the default stays 32M.
 */
#define CG_PREFETCH_STREAM_SHARE 2

/*
 * The buffer now holds nseg segments (slot i still at i * seg_size):
 * the table uses them, and keeps that much loaded past the front. Only
 * ever grows; ignored when prefetch is off.
 */
void cg_prefetch_grow(struct cg_prefetch *pf, unsigned nseg);

/* A request for [off, off + n) arrived: moves the front */
void cg_prefetch_note_read(struct cg_prefetch *pf, uint64_t off, size_t n);

/*
 * Discard loaded segments read under another version of the file; a
 * version not yet settled holds fills back until it is
 */
void cg_prefetch_validate(struct cg_prefetch *pf,
			  const struct cg_pf_version *now);

/* How [off, off + n) can be served; HIT sets *avail (short at EOF) */
enum cg_pf_lookup cg_prefetch_lookup(const struct cg_prefetch *pf,
				     uint64_t off,
				     size_t n,
				     size_t *avail);

/*
 * Copy a HIT out of mem (the table's buffer) into dst, through sys
 * (cg_sys_copy); returns the bytes copied. Segments whose bytes have
 * all been copied are released.
 */
struct cg_sys;

size_t cg_prefetch_copy(struct cg_prefetch *pf,
			const struct cg_sys *sys,
			const uint8_t *mem,
			uint64_t off,
			size_t n,
			uint8_t *dst);

/*
 * A HIT copied out by another thread, in pieces of one segment each:
 * where in the table's buffer, how many bytes, and the version the
 * segment was read under, which the copying thread compares with the
 * file's now (cg_prefetch_pieces_current) before it copies
 */
struct cg_pf_piece {
	unsigned slot;
	size_t from;	/* offset in the table's buffer */
	size_t len;
	struct cg_pf_version ver;
};

/*
 * Pin the segments of a HIT for [off, off + n) (cg_prefetch_lookup said
 * so) into at most max pieces; returns how many, whose lengths add up
 * to the HIT's avail. A HIT short at end of file ends with the piece of
 * the segment holding the end (of no bytes if need be): its version
 * says whether the file still ends there. Pinned segments are never
 * handed out for a fill;
 * a write or version change meanwhile marks them stale. Every pin is
 * ended with cg_prefetch_unpin.
 */
unsigned cg_prefetch_pin(struct cg_prefetch *pf,
			 uint64_t off,
			 size_t n,
			 struct cg_pf_piece *pieces,
			 unsigned max);

/* Every piece was read under the file's version now */
bool cg_prefetch_pieces_current(const struct cg_pf_piece *pieces,
				unsigned np,
				const struct cg_pf_version *now);

/*
 * Copy the pieces out of mem into dst, in order, through sys
 * (cg_sys_copy): no table access
 */
size_t cg_prefetch_copy_pieces(const struct cg_sys *sys,
			       const uint8_t *mem,
			       const struct cg_pf_piece *pieces,
			       unsigned np,
			       uint8_t *dst);

/*
 * The copy of pinned pieces ended; copied: their bytes went out (they
 * count as used, as cg_prefetch_copy counts them)
 */
void cg_prefetch_unpin(struct cg_prefetch *pf,
		       const struct cg_pf_piece *pieces,
		       unsigned np,
		       bool copied);

/*
 * The next segment to read, if any: marks *slot LOADING for
 * [*off, *off + *len). Call until it returns false. Loaded segments
 * from keep on are not reused: requests waiting for fills start there
 * (UINT64_MAX: none wait).
 */
bool cg_prefetch_next_fill(struct cg_prefetch *pf,
			   uint64_t file_size,
			   uint64_t keep,
			   unsigned *slot,
			   uint64_t *off,
			   size_t *len);

/*
 * The read into slot ended: got bytes, or -1 on error. ver is the file's
 * version taken before the read; bytes read under a version that has not
 * settled are discarded, and fills held back until it has.
 */
void cg_prefetch_filled(struct cg_prefetch *pf,
			unsigned slot,
			ssize_t got,
			const struct cg_pf_version *ver);

/* [off, off + n) is being written: nothing overlapping may be served */
void cg_prefetch_invalidate(struct cg_prefetch *pf, uint64_t off, uint64_t n);

/* Everything is suspect (the file changed, prefetch failed) */
void cg_prefetch_reset(struct cg_prefetch *pf);

/*
 * The direct-memory budget of the whole server (cg_budget.c): a lock
 * file whose byte i is the i-th unit; a buffer holds its units as an OFD
 * write lock on its own descriptor of the file, and closing it (or the
 * process dying) gives them back.
 */
#define CG_BUDGET_UNIT (64 * 1024)

/*
 * Lock units for bytes on fd, all below limit bytes, through sys's lock
 * operation. 0, or -1 with errno (ENOSPC: they are not free; EAGAIN:
 * races with other takers lost, as if there were no room this time).
 */
int cg_budget_take(const struct cg_sys *sys,
		   int fd,
		   uint64_t bytes,
		   uint64_t limit);

/* Bytes all holders have taken below limit: for status and tests */
uint64_t cg_budget_used(const struct cg_sys *sys, int fd, uint64_t limit);

/*
 * Units for bytes from a descriptor of the budget file of its own, which
 * open_file() opens (-1 and errno on failure): that descriptor, or -1
 * and in *err why. cg_budget_absent(*err) tells the two kinds apart.
 */
int cg_budget_acquire(const struct cg_sys *sys,
		      int (*open_file)(void),
		      uint64_t bytes,
		      uint64_t limit,
		      int *err);

/*
 * Whether a failure of cg_budget_acquire() means that no budget file can
 * be had here (no state directory, no permission, a read-only one, no
 * OFD locks): then each process bounds itself. Every other failure, the
 * budget spent, lock races lost, descriptors or memory short for a
 * moment, is no room now: never no limit.
 */
bool cg_budget_absent(int err);

/*
 * Where no budget file can be had (cg_budget_absent), each process holds
 * its own direct memory, in_use bytes, to the limit: whether mem more
 * bytes fit. A bounce buffer (counted false: one request's, freed as it
 * completes) is not held to it, as the budget file does not count it
 * either when it has no room (CG_DIRECT_NO_BUDGET is for a full file).
 */
bool cg_budget_local_room(uint64_t in_use,
			  uint64_t mem,
			  uint64_t limit,
			  bool counted);

#endif /* CACHEGUARD_H */
