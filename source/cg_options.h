/*
 * vfs_cacheguard engine: the share's options
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

#ifndef CG_OPTIONS_H
#define CG_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One per share, filled at tree connect, read-only afterwards */

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
	 * One fadvise per window; also how far from the front a read may
	 * land and still belong to the stream
	 */
	uint64_t window;
	/* Percent of a file resident at stream start that marks it hot */
	unsigned hot_threshold;
	/* How far ahead a stream without kernel readahead reads; 0: kernel */
	uint64_t readahead;
	/* Kernel readahead of streams, all smbd processes together */
	uint64_t readahead_memory;
	/* How far behind another stream a reader still finds pages cached */
	uint64_t reader_gap;
	uint64_t direct_prefetch;
	uint64_t direct_memory;
	uint64_t direct_min_io;
	/* A stream's own jobs' ioprio_set(2) value; 0: the thread's */
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

void cg_config_init(struct cg_config *cfg);

/* Set one option; on error EINVAL and a sentence in err */
int cg_config_set(struct cg_config *cfg,
		  const char *name,
		  const char *value,
		  char *err,
		  size_t errlen);

/* Whether name (after "cacheguard:") is an option, as Samba compares */
bool cg_option_known(const char *name);

/* "mode, min file size, ..." for the log line about an unknown option */
void cg_option_names(char *buf, size_t len);

/* Cross-option checks after all values are set; same error contract */
int cg_config_check(const struct cg_config *cfg, char *err, size_t errlen);

/* "mode=auto min file size=16777216 ...", for the connect log line */
void cg_config_describe(const struct cg_config *cfg, char *buf, size_t len);

/* Sizes with an optional K/M/G/T suffix (powers of 1024) */
int cg_parse_size(const char *s, uint64_t *out);

/*
 * Whether the module built against built may run in an smbd of release
 * running: VFS structures may change with any upstream release, and smbd
 * checks only SMB_VFS_INTERFACE_VERSION. The vendor's package version
 * after the vendor name changes with security updates only: not compared.
 */
bool cg_samba_compatible(const char *built, const char *running);

#endif /* CG_OPTIONS_H */
