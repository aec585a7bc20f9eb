/*
 * vfs_cacheguard engine: a tracked file: its mode, read paths and
 * fallbacks, and the modules below that must see its reads or writes
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

#ifndef CG_FILE_H
#define CG_FILE_H

#include "cg_dev.h"
#include "cg_stream.h"

/*
 * The modules below cacheguard: the fast paths act on the descriptor,
 * past them, so a module that must see a file's reads or writes gets
 * them as dontneed. These flags go with the file's CG_FS_* flags into
 * cg_file_init() and cg_writer_init(), never into its filesystem's.
 */
#define CG_BELOW_READS 0x100	/* it reads: pread, pread_send, sendfile */
#define CG_BELOW_WRITES 0x200	/* it writes: pwrite, pwrite_send, recvfile */

enum cg_below_kind {
	CG_BELOW_PLAIN = 0,	/* no read or write of its own */
	CG_BELOW_NAMES,		/* streams or names: bytes pass unchanged */
	CG_BELOW_ENGINE,	/* I/O engine: a stream's own I/O replaces it */
	CG_BELOW_SEES,		/* it must see them: audits, commits, unknown */
};

/* The kind of module name (NULL: unknown) implementing ops (CG_BELOW_*) */
enum cg_below_kind cg_below_kind(const char *name, unsigned ops);

/*
 * The module name of a "vfs objects" entry, as smbd's vfs_init_custom
 * finds it (for cg_below_kind): up to a ':', blanks trimmed, of a path
 * the file name up to its first '.'. Cuts entry, which it points into.
 */
char *cg_stack_name(char *entry);

/*
 * One per tracked open file: its stream, its mode, and every decision
 * about a read's path and what a failure means; the glue does as told
 * and remembers what a filesystem lacks (cg_dev.h).
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
	CG_DIRECT_FAIL_LEASE,	/* a kernel oplock a second open would break */
	CG_DIRECT_FAIL_ROOM,	/* no room in direct memory for its buffer */
	CG_DIRECT_OK,			/* set up: no failure */
};

/* What smbd's hooks did with a tracked file, for its close summary */
struct cg_calls {
	uint64_t pread_send;	/* reads per smbd read path */
	uint64_t pread;
	uint64_t sendfile;
	/* Longest hold of the event loop by a read's send, done, or close */
	uint64_t loop_max_ns;
	const char *loop_max_where;	/* "send", "done" or "close" */
};

struct cg_file {
	struct cg_stream stream;
	enum cg_mode mode;		/* resolved: not auto, not off */
	unsigned below;			/* CG_BELOW_* of its stack */
	uint64_t bytes[CG_PATH_COUNT];	/* bytes served per path */
	uint64_t fallbacks;		/* fast-path reads retried buffered */
	const char *fallback_why;	/* the last reason, for the summary */
	struct cg_calls calls;		/* counted by the glue */
};

void cg_calls_loop_took(struct cg_calls *c, const char *where, uint64_t ns);

/* The close's log line in buf; false with nothing to say (no stream) */
bool cg_file_summary(const struct cg_file *f, char *buf, size_t len);

/* The mode a file gets: the wanted one, or what its filesystem allows */
enum cg_mode cg_mode_resolve(enum cg_mode want, unsigned fs_lacks);

/* Whether a share's module does anything: not in mode off */
bool cg_config_watches(const struct cg_config *cfg);

/* Whether an open is the module's: a plain file's data, mode not off */
bool cg_file_watches(const struct cg_config *cfg,
		     bool pathref,
		     bool directory,
		     bool alternate_stream);

/*
 * Whether smbd's I/O descriptor is a kernel descriptor of the file itself:
 * /proc fds exist (none under vfs_ceph, vfs_glusterfs) and its fstat gave
 * the file's device and inode. Otherwise the module leaves the open alone.
 */
bool cg_file_fd_is_own(bool proc_fds, bool stat_ok, bool same_file);

/* How smbd changes a file's bytes other than through a read stream */
enum cg_change {
	CG_CHANGE_WRITE = 0,	/* pwrite, its async form, recvfile */
	CG_CHANGE_COPY,		/* server-side copy into it */
	CG_CHANGE_ALLOCATE,	/* fallocate that keeps the size */
	CG_CHANGE_GROW,		/* fallocate that may move the end */
	CG_CHANGE_TRUNCATE,	/* ftruncate */
};

/* What of a direct prefetch a change drops: *drop_off -1 for all */
void cg_file_change(enum cg_change how,
		    int64_t off,
		    uint64_t n,
		    int64_t *drop_off,
		    uint64_t *drop_n);

/* Whether streams in direction need the probe: auto, nothing below */
bool cg_config_probes(const struct cg_config *cfg,
		      unsigned below,
		      unsigned direction);

/*
 * Which open files get a read stream: none in mode off or smaller than
 * min file size. Asked at open with smbd's size (stale if this handle
 * wrote: maybe), and at the first read with the kernel's, which decides.
 */
bool cg_file_may_track(const struct cg_config *cfg,
		       uint64_t open_size,
		       bool modified);

/* Where one open stands with the module's read side */
enum cg_tracking {
	CG_TRACKING_UNASKED = 0,	/* not read yet: came with a write */
	CG_TRACKING_NO,			/* left alone until it is closed */
	CG_TRACKING_YES,		/* its reads have a stream */
};

/* A read of an open: the first asks cg_file_may_track, the rest remember */
bool cg_file_track_read(enum cg_tracking *t,
			const struct cg_config *cfg,
			bool known,
			uint64_t size);

/* Track a file; fs_lacks: its CG_FS_* and its stack's CG_BELOW_* flags */
void cg_file_init(struct cg_file *f,
		  const struct cg_config *cfg,
		  const struct cg_sys *sys,
		  uint64_t size,
		  unsigned fs_lacks,
		  int fd);

/*
 * The path for a read cg_read_begin() returned io for; sync (on the
 * event loop, where no fill can report) never goes direct
 */
enum cg_path cg_file_choose(const struct cg_file *f,
			    const struct cg_io *io,
			    size_t n,
			    bool sync);

/* Direct could not be set up: another mode; the CG_FS_* flag, or 0 */
unsigned cg_file_direct_unavailable(struct cg_file *f,
				    int fd,
				    enum cg_direct_fail fail,
				    unsigned fs_lacks);

/* A direct request's errno when no fault of the file: read plainly once */
#define CG_DIRECT_NOT_NOW ENOBUFS

/* A read on path failed with err: the CG_FS_* flag learnt, or 0 */
unsigned cg_file_read_failed(struct cg_file *f,
			     int fd,
			     enum cg_path path,
			     int err,
			     unsigned fs_lacks);

/* The call that carries out one read */
enum cg_call {
	CG_CALL_NEXT = 0,	/* the next module's read */
	CG_CALL_DONTCACHE,	/* preadv2(RWF_DONTCACHE) in 1 MiB pieces */
	CG_CALL_PIECES,		/* 1 MiB pieces, each dropped once read */
	CG_CALL_DIRECT,		/* the file's direct stream */
};

enum cg_call cg_file_call(const struct cg_io *io, enum cg_path path);

/* The cg_pread_full flags of a CG_CALL_DONTCACHE or CG_CALL_PIECES read */
int cg_file_call_flags(enum cg_call call);

/* What a read's end means (cg_file_read_after) */
enum cg_after {
	CG_AFTER_DONE = 0,	/* the result is the read's answer */
	CG_AFTER_AGAIN,		/* read it again, plainly */
	CG_AFTER_FELL_BACK,	/* a fast path failed: again, plainly */
};

/*
 * A read as cg_file_call said ended with ret (-1: err). DONE: ret is the
 * answer. Else read it again through the next module (*path NEXT): AGAIN
 * after pieces failed, FELL_BACK after a fast path failed (*learnt).
 */
enum cg_after cg_file_read_after(struct cg_file *f,
				 int fd,
				 struct cg_io *io,
				 enum cg_path *path,
				 ssize_t ret,
				 int err,
				 unsigned fs_lacks,
				 unsigned *learnt);

/* sendfile(2) reads through the cache: not for uncached or direct streams */
bool cg_file_zerocopy_ok(const struct cg_file *f);

void cg_file_served(struct cg_file *f, enum cg_path path, ssize_t nread);

#endif /* CG_FILE_H */
