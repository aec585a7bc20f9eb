/*
 * vfs_cacheguard engine: option parsing and validation
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

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cg_util.h"
#include "cg_options.h"

#define CG_FIELD(f) offsetof(struct cg_config, f)
/* The most of a bad value an error message quotes */
#define CG_QUOTE_MAX 32

/* The defaults, as text: the man page test and the parser share them */
const struct cg_option cg_options[] = {
	{"mode", CG_OPT_MODE, "auto", CG_FIELD(mode)},
	{"min file size", CG_OPT_SIZE, "16M", CG_FIELD(min_file_size)},
	{"stream trigger", CG_OPT_SIZE, "4M", CG_FIELD(stream_trigger)},
	{"window", CG_OPT_SIZE, "8M", CG_FIELD(window)},
	{"hot threshold", CG_OPT_PERCENT, "50", CG_FIELD(hot_threshold)},
	{"readahead", CG_OPT_SIZE, "4M", CG_FIELD(readahead)},
	{"readahead memory", CG_OPT_SIZE, "32M", CG_FIELD(readahead_memory)},
	{"reader gap", CG_OPT_SIZE, "128M", CG_FIELD(reader_gap)},
	{"direct prefetch", CG_OPT_SIZE, "8M", CG_FIELD(direct_prefetch)},
	{"direct memory", CG_OPT_SIZE, "32M", CG_FIELD(direct_memory)},
	{"direct min io", CG_OPT_SIZE, "64K", CG_FIELD(direct_min_io)},
	{"stream ioprio", CG_OPT_IOPRIO, "none", CG_FIELD(stream_ioprio)},
	{NULL, 0, NULL, 0},
};

/* A word option's words and values, as Samba's struct enum_list */
struct cg_word {
	const char *name;
	unsigned value;
};

static const struct cg_word cg_modes[] = {
	{"off", CG_MODE_OFF},
	{"auto", CG_MODE_AUTO},
	{"dontneed", CG_MODE_DONTNEED},
	{"dontcache", CG_MODE_DONTCACHE},
	{"direct", CG_MODE_DIRECT},
	{NULL, 0},
};

/*
 * idle: served when nobody else waits for the device (mq-deadline, BFQ);
 * low: best-effort level 7, which only BFQ tells from other levels
 */
static const struct cg_word cg_ioprios[] = {
	{"none", 0},
	{"idle", CG_IOPRIO_VALUE(CG_IOPRIO_CLASS_IDLE, 0)},
	{"low", CG_IOPRIO_VALUE(CG_IOPRIO_CLASS_BE, 7)},
	{NULL, 0},
};

/* Per type: its words (NULL: a number), and the valid values it tells */
static const struct {
	const struct cg_word *words;
	const char *valid;
} cg_types[] = {
	[CG_OPT_MODE] = {cg_modes, "auto, dontcache, direct, dontneed, off"},
	[CG_OPT_SIZE] = {NULL,
			 "a byte count with an optional K, M, G or T suffix"},
	[CG_OPT_PERCENT] = {NULL, "a whole percentage from 0 to 100"},
	[CG_OPT_IOPRIO] = {cg_ioprios, "none, idle, low"},
};

/* A word option's field is an unsigned, or an enum of its size */
_Static_assert(sizeof(enum cg_mode) == sizeof(unsigned), "enum cg_mode");

static const char *cg_word_name(const struct cg_word *w, unsigned value)
{
	for (; w->name != NULL; w++) {
		if (w->value == value) {
			return w->name;
		}
	}
	return "invalid";
}

static int cg_word_parse(const struct cg_word *w, const char *s, unsigned *out)
{
	for (; w->name != NULL; w++) {
		if (strcasecmp(s, w->name) == 0) {
			*out = w->value;
			return 0;
		}
	}
	return EINVAL;
}

const char *cg_mode_name(enum cg_mode mode)
{
	return cg_word_name(cg_modes, (unsigned)mode);
}

const char *cg_ioprio_name(unsigned ioprio)
{
	return cg_word_name(cg_ioprios, ioprio);
}

int cg_parse_size(const char *s, uint64_t *out)
{
	static const char suffixes[] = "KMGT";
	uint64_t v = 0;
	const char *p = s;
	const char *sfx = NULL;
	unsigned shift = 0;

	while (isspace((unsigned char)*p)) {
		p++;
	}
	if (!isdigit((unsigned char)*p)) {
		return EINVAL;
	}
	for (; isdigit((unsigned char)*p); p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10) {
			return ERANGE;
		}
		v = v * 10 + d;
	}
	if (*p != '\0' && !isspace((unsigned char)*p)) {
		sfx = strchr(suffixes, toupper((unsigned char)*p));
		if (sfx == NULL) {
			return EINVAL;
		}
		shift = 10 * (unsigned)(sfx - suffixes + 1);
		p++;
	}
	while (isspace((unsigned char)*p)) {
		p++;
	}
	if (*p != '\0') {
		return EINVAL;
	}
	if (shift != 0 && v > (UINT64_MAX >> shift)) {
		return ERANGE;
	}
	*out = v << shift;
	return 0;
}

/* Names compare as Samba's strwicmp: case and white space do not count */
static bool cg_name_equal(const char *a, const char *b)
{
	for (;;) {
		while (isspace((unsigned char)*a)) {
			a++;
		}
		while (isspace((unsigned char)*b)) {
			b++;
		}
		if (*a == '\0' || *b == '\0') {
			return *a == *b;
		}
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) {
			return false;
		}
		a++;
		b++;
	}
}

static const struct cg_option *cg_find_option(const char *name)
{
	const struct cg_option *o = NULL;

	for (o = cg_options; o->name != NULL; o++) {
		if (cg_name_equal(o->name, name)) {
			return o;
		}
	}
	return NULL;
}

bool cg_option_known(const char *name)
{
	return cg_find_option(name) != NULL;
}

/* snprintf at buf + *used within len bytes; *used grows by what it wrote */
static void cg_append(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*used >= len) {
		return;
	}
	va_start(ap, fmt);
	n = vsnprintf(buf + *used, len - *used, fmt, ap);
	va_end(ap);
	*used += n > 0 ? (size_t)n : 0;
}

void cg_option_names(char *buf, size_t len)
{
	const struct cg_option *o = NULL;
	size_t used = 0;

	for (o = cg_options; o->name != NULL; o++) {
		cg_append(buf, len, &used, "%s%s", o == cg_options ? "" : ", ",
			  o->name);
	}
}

static int cg_parse_percent(const char *s, unsigned *out)
{
	uint64_t v = 0;
	size_t n = strlen(s);
	char buf[32];

	/* Accept "50" and "50%"; a size suffix makes no sense here */
	if (n == 0 || n >= sizeof(buf)) {
		return EINVAL;
	}
	memcpy(buf, s, n + 1);
	if (buf[n - 1] == '%') {
		buf[n - 1] = '\0';
	}
	if (buf[0] == '\0' || strspn(buf, "0123456789") != strlen(buf) ||
	    cg_parse_size(buf, &v) != 0 || v > 100) {
		return EINVAL;
	}
	*out = (unsigned)v;
	return 0;
}

int cg_config_set(struct cg_config *cfg,
		  const char *name,
		  const char *value,
		  char *err,
		  size_t errlen)
{
	const struct cg_option *o = cg_find_option(name);
	char *field = NULL;
	int ret;

	if (o == NULL) {
		snprintf(err, errlen, "cacheguard:%s is not an option", name);
		return EINVAL;
	}
	field = (char *)cfg + o->offset;
	if (cg_types[o->type].words != NULL) {
		ret = cg_word_parse(cg_types[o->type].words, value,
				    (unsigned *)(void *)field);
	} else if (o->type == CG_OPT_SIZE) {
		ret = cg_parse_size(value, (uint64_t *)(void *)field);
	} else {
		ret = cg_parse_percent(value, (unsigned *)(void *)field);
	}
	if (ret != 0) {
		/* Quoted only so far: the name and valid values stay visible */
		snprintf(err,
			 errlen,
			 "invalid value '%.*s%s' for cacheguard:%s; "
			 "valid values: %s",
			 CG_QUOTE_MAX,
			 value,
			 strlen(value) > CG_QUOTE_MAX ? "..." : "",
			 o->name,
			 cg_types[o->type].valid);
		return EINVAL;
	}
	return 0;
}

void cg_config_init(struct cg_config *cfg)
{
	const struct cg_option *o = NULL;
	char err[160];

	*cfg = (struct cg_config){.mode = CG_MODE_AUTO};
	for (o = cg_options; o->name != NULL; o++) {
		/* The table is ours; a bad default is caught by the tests */
		(void)cg_config_set(cfg, o->name, o->def, err, sizeof(err));
	}
}

int cg_config_check(const struct cg_config *cfg, char *err, size_t errlen)
{
	if (cfg->window < CG_PAGE || cfg->window % CG_PAGE != 0) {
		snprintf(err,
			 errlen,
			 "invalid value %" PRIu64 " for cacheguard:window; "
			 "valid values: a multiple of 4K, at least 4K",
			 cfg->window);
		return EINVAL;
	}
	if (cfg->direct_prefetch != 0 &&
	    cfg->direct_prefetch > cfg->direct_memory) {
		snprintf(err,
			 errlen,
			 "cacheguard:direct prefetch (%" PRIu64 ") is larger "
			 "than cacheguard:direct memory (%" PRIu64 "); "
			 "valid values: direct prefetch <= direct memory",
			 cfg->direct_prefetch,
			 cfg->direct_memory);
		return EINVAL;
	}
	return 0;
}

/* Each value as the parser reads it: bytes, words, a percentage */
void cg_config_describe(const struct cg_config *cfg, char *buf, size_t len)
{
	const struct cg_option *o = NULL;
	size_t used = 0;

	for (o = cg_options; o->name != NULL; o++) {
		const void *field = (const char *)cfg + o->offset;
		const struct cg_word *words = cg_types[o->type].words;
		const char *sep = o == cg_options ? "" : " ";

		if (words != NULL) {
			cg_append(buf, len, &used, "%s%s=%s", sep, o->name,
				  cg_word_name(words,
					       *(const unsigned *)field));
		} else if (o->type == CG_OPT_SIZE) {
			cg_append(buf, len, &used, "%s%s=%" PRIu64, sep,
				  o->name, *(const uint64_t *)field);
		} else {
			cg_append(buf, len, &used, "%s%s=%u%%", sep, o->name,
				  *(const unsigned *)field);
		}
	}
}

/* Up to the second '-': "4.22.11-Debian" of "4.22.11-Debian-4.22.11+..." */
static size_t cg_samba_release_len(const char *v)
{
	const char *dash = strchr(v, '-');

	if (dash != NULL) {
		dash = strchr(dash + 1, '-');
	}
	return dash != NULL ? (size_t)(dash - v) : strlen(v);
}

bool cg_samba_compatible(const char *built, const char *running)
{
	size_t len;

	if (built == NULL || running == NULL) {
		return false;
	}
	len = cg_samba_release_len(built);
	return len == cg_samba_release_len(running) &&
	       strncmp(built, running, len) == 0;
}
