/*
 * vfs_cacheguard engine: one tracked file: its mode, paths and fallbacks,
 * and the modules below that must see its reads or writes
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
 * The order of fallbacks: auto is direct where the filesystem has
 * O_DIRECT, else dontcache where it has RWF_DONTCACHE, else dontneed. On
 * network and FUSE filesystems (CG_FS_REMOTE) auto never reads direct:
 * their files change beyond the kernel's sight, so the prefetch could
 * serve overwritten bytes. A mode the file or filesystem lacks takes the
 * next of the order. A failure changes the mode by what it means:
 *
 *   uncached read, EOPNOTSUPP/EINVAL   no RWF_DONTCACHE on the filesystem
 *   uncached read, anything else       this read only (EIO, ENOMEM...)
 *   direct read, anything              the file's next mode from now
 *   direct setup: filesystem refuses   remembered for it, resolve again
 *   direct setup: file, lease, memory  the file's next mode
 *
 * Every failed read is read again through the next module.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cg_file.h"
#include "cg_prefetch.h"
#include "cg_sys.h"
#include "cg_util.h"

/*
 * A module below that implements reads or writes sees the file's own,
 * unless it is one of Samba's known not to need them (the table: enum
 * cg_below_kind says why each kind does not). Everything else that reads
 * or writes, full_audit and time_audit (they log each call), commit (it
 * counts the bytes written to fdatasync), readahead, cacheprime, gpfs,
 * offline, error_inject and every module the table does not know, must
 * see them.
 */

static const struct {
	const char *name;
	enum cg_below_kind kind;
} cg_below_known[] = {
	{"catia", CG_BELOW_NAMES},
	{"fruit", CG_BELOW_NAMES},
	{"streams_depot", CG_BELOW_NAMES},
	{"streams_xattr", CG_BELOW_NAMES},
	{"io_uring", CG_BELOW_ENGINE},
};

enum cg_below_kind cg_below_kind(const char *name, unsigned ops)
{
	size_t i;

	if ((ops & (CG_BELOW_READS | CG_BELOW_WRITES)) == 0) {
		return CG_BELOW_PLAIN;
	}
	for (i = 0; name != NULL && i < CG_ARRAY_SIZE(cg_below_known); i++) {
		if (strcmp(name, cg_below_known[i].name) == 0) {
			return cg_below_known[i].kind;
		}
	}
	return CG_BELOW_SEES;
}

char *cg_stack_name(char *entry)
{
	char *name = entry + strspn(entry, " ");
	size_t n;

	name[strcspn(name, ":")] = '\0';
	n = strlen(name);
	while (n > 0 && name[n - 1] == ' ') {
		name[--n] = '\0';
	}
	if (name[0] == '/') {
		name = strrchr(name, '/') + 1;
		name[strcspn(name, ".")] = '\0';
	}
	return name;
}

enum cg_mode cg_mode_resolve(enum cg_mode want, unsigned fs_lacks)
{
	if (fs_lacks & CG_BELOW_READS) {
		return CG_MODE_DONTNEED;	/* through the module below */
	}
	if (want == CG_MODE_AUTO && (fs_lacks & CG_FS_REMOTE)) {
		want = CG_MODE_DONTCACHE;
	}
	if (want == CG_MODE_AUTO || want == CG_MODE_DIRECT) {
		if ((fs_lacks & CG_FS_NO_DIRECT) == 0) {
			return CG_MODE_DIRECT;
		}
		want = CG_MODE_DONTCACHE;
	}
	if (want == CG_MODE_DONTCACHE && (fs_lacks & CG_FS_NO_DONTCACHE) == 0) {
		return CG_MODE_DONTCACHE;
	}
	return CG_MODE_DONTNEED;
}

/* The file's mode for what it lacks (CG_FS_*); its streams' hints follow */
static void cg_file_resolve(struct cg_file *f, int fd, unsigned lacks)
{
	enum cg_via via = CG_VIA_CACHE;

	f->mode = cg_mode_resolve(f->stream.cfg->mode, lacks | f->below);
	if (f->mode == CG_MODE_DONTCACHE) {
		via = CG_VIA_DONTCACHE;
	} else if (f->mode == CG_MODE_DIRECT) {
		via = CG_VIA_DIRECT;
	}
	cg_stream_set_via(&f->stream, fd, via);
}

bool cg_config_watches(const struct cg_config *cfg)
{
	return cfg->mode != CG_MODE_OFF;
}

bool cg_config_probes(const struct cg_config *cfg,
		      unsigned below,
		      unsigned direction)
{
	return cfg->mode == CG_MODE_AUTO && (below & direction) == 0;
}

bool cg_file_may_track(const struct cg_config *cfg,
		       uint64_t open_size,
		       bool modified)
{
	return cfg->mode != CG_MODE_OFF &&
	       (modified || open_size >= cfg->min_file_size);
}

bool cg_file_track_read(enum cg_tracking *t,
			const struct cg_config *cfg,
			bool known,
			uint64_t size)
{
	if (*t == CG_TRACKING_UNASKED) {
		*t = known && cg_file_may_track(cfg, size, false)
			     ? CG_TRACKING_YES
			     : CG_TRACKING_NO;
	}
	return *t == CG_TRACKING_YES;
}

void cg_file_init(struct cg_file *f,
		  const struct cg_config *cfg,
		  const struct cg_sys *sys,
		  uint64_t size,
		  unsigned fs_lacks,
		  int fd)
{
	*f = (struct cg_file){
		.below = fs_lacks & (CG_BELOW_READS | CG_BELOW_WRITES),
	};
	cg_stream_init(&f->stream, cfg, sys, size);
	f->stream.next_reads = (f->below & CG_BELOW_READS) != 0;
	cg_file_resolve(f, fd, fs_lacks);
}

enum cg_path cg_file_choose(const struct cg_file *f,
			    const struct cg_io *io,
			    size_t n,
			    bool sync)
{
	if (!io->in_stream || f->stream.state != CG_ACTIVE) {
		return CG_PATH_NEXT;
	}
	/* A dontcache stream that others share reads through the cache */
	if (f->mode == CG_MODE_DONTCACHE && f->stream.via == CG_VIA_DONTCACHE) {
		return CG_PATH_UNCACHED;
	}
	if (f->stream.via == CG_VIA_DIRECT && !sync &&
	    n >= f->stream.cfg->direct_min_io) {
		return CG_PATH_DIRECT;
	}
	return CG_PATH_NEXT;
}

bool cg_file_zerocopy_ok(const struct cg_file *f)
{
	return f->stream.state != CG_ACTIVE || f->stream.via == CG_VIA_CACHE;
}

static void cg_file_fell_back(struct cg_file *f, const char *why)
{
	f->fallbacks++;
	f->fallback_why = why;
}

unsigned cg_file_direct_unavailable(struct cg_file *f,
				    int fd,
				    enum cg_direct_fail fail,
				    unsigned fs_lacks)
{
	cg_file_resolve(f, fd, fs_lacks | CG_FS_NO_DIRECT);
	if (fail == CG_DIRECT_FAIL_FS) {
		return CG_FS_NO_DIRECT;
	}
	cg_file_fell_back(f, cg_direct_fail_name(fail));
	return 0;
}

unsigned cg_file_read_failed(struct cg_file *f,
			     int fd,
			     enum cg_path path,
			     int err,
			     unsigned fs_lacks)
{
	if (path == CG_PATH_UNCACHED) {
		if (err != EOPNOTSUPP && err != EINVAL) {
			cg_file_fell_back(f, "uncached read failed");
			return 0;
		}
		cg_file_resolve(f, fd, fs_lacks | CG_FS_NO_DONTCACHE);
		cg_file_fell_back(f, "no RWF_DONTCACHE");
		return CG_FS_NO_DONTCACHE;
	}
	/* CG_DIRECT_NOT_NOW is no failure: read again, this once */
	if (path == CG_PATH_DIRECT && err != CG_DIRECT_NOT_NOW) {
		cg_file_resolve(f, fd, fs_lacks | CG_FS_NO_DIRECT);
		cg_file_fell_back(f, "direct read failed");
	}
	return 0;
}

/* Pieces first: cg_read_begin asks for them only through the cache */
enum cg_call cg_file_call(const struct cg_io *io, enum cg_path path)
{
	if (io->drop_pieces) {
		return CG_CALL_PIECES;
	}
	switch (path) {
	case CG_PATH_UNCACHED:
		return CG_CALL_DONTCACHE;
	case CG_PATH_DIRECT:
		return CG_CALL_DIRECT;
	default:
		return CG_CALL_NEXT;
	}
}

int cg_file_call_flags(enum cg_call call)
{
	return call == CG_CALL_PIECES ? CG_READ_DROP : CG_RWF_DONTCACHE;
}

bool cg_file_watches(const struct cg_config *cfg,
		     bool pathref,
		     bool directory,
		     bool alternate_stream)
{
	return cg_config_watches(cfg) && !pathref && !directory &&
	       !alternate_stream;
}

bool cg_file_fd_is_own(bool proc_fds, bool stat_ok, bool same_file)
{
	return proc_fds && stat_ok && same_file;
}

void cg_file_change(enum cg_change how,
		    int64_t off,
		    uint64_t n,
		    int64_t *drop_off,
		    uint64_t *drop_n)
{
	bool all = how == CG_CHANGE_TRUNCATE || how == CG_CHANGE_GROW ||
		   off < 0;

	*drop_off = all ? -1 : off;
	*drop_n = all ? 0 : n;
}

enum cg_after cg_file_read_after(struct cg_file *f,
				 int fd,
				 struct cg_io *io,
				 enum cg_path *path,
				 ssize_t ret,
				 int err,
				 unsigned fs_lacks,
				 unsigned *learnt)
{
	enum cg_call call = cg_file_call(io, *path);

	*learnt = 0;
	if (ret != -1 || call == CG_CALL_NEXT) {
		io->uncached = *path != CG_PATH_NEXT;
		return CG_AFTER_DONE;
	}
	if (call == CG_CALL_PIECES) {
		/* nothing to learn: the same read, whole, as it was */
		io->drop_pieces = false;
		*path = CG_PATH_NEXT;
		return CG_AFTER_AGAIN;
	}
	*learnt = cg_file_read_failed(f, fd, *path, err, fs_lacks);
	*path = CG_PATH_NEXT;
	return CG_AFTER_FELL_BACK;
}

void cg_file_served(struct cg_file *f, enum cg_path path, ssize_t nread)
{
	if (nread > 0 && path < CG_PATH_COUNT) {
		f->bytes[path] += (uint64_t)nread;
	}
}

void cg_calls_loop_took(struct cg_calls *c, const char *where, uint64_t ns)
{
	if (ns > c->loop_max_ns) {
		c->loop_max_ns = ns;
		c->loop_max_where = where;
	}
}

bool cg_file_summary(const struct cg_file *f, char *buf, size_t len)
{
	const struct cg_stats *st = &f->stream.stats;
	const struct cg_calls *c = &f->calls;
	const char *why = f->fallback_why;

	if (st->streams == 0 && st->hot == 0 && f->fallbacks == 0) {
		return false;
	}
	snprintf(buf, len,
		 "size %" PRIu64 " read %" PRIu64 " mode %s; served buffered "
		 "%" PRIu64 " dontcache %" PRIu64 " direct %" PRIu64 "; "
		 "dropped %" PRIu64 " in %" PRIu64 " calls; streams %" PRIu64
		 " (kernel readahead %" PRIu64 ") hot %" PRIu64 "; reads via "
		 "pread_send %" PRIu64 " pread %" PRIu64 " sendfile %" PRIu64
		 "; on the event loop at most %" PRIu64 " us (%s); fallbacks "
		 "%" PRIu64 "%s%s",
		 f->stream.file_size, st->bytes_read, cg_mode_name(f->mode),
		 f->bytes[CG_PATH_NEXT], f->bytes[CG_PATH_UNCACHED],
		 f->bytes[CG_PATH_DIRECT], st->bytes_dropped, st->drops,
		 st->streams, st->ra_granted, st->hot, c->pread_send, c->pread,
		 c->sendfile, c->loop_max_ns / 1000,
		 c->loop_max_where != NULL ? c->loop_max_where : "-",
		 f->fallbacks, why != NULL ? ": " : "", why != NULL ? why : "");
	return true;
}
