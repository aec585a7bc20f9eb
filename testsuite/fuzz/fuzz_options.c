/*
 * vfs_cacheguard fuzz harness: the option parser (cg_options.c)
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
 * The input is smb.conf text: "name = value" lines (a line without "="
 * is a value for the option its first byte picks). Each line goes
 * through cg_config_set() as the glue sends it, then the whole config
 * through cg_config_check() and cg_config_describe(), into buffers of
 * sizes the input picks. Every string is in a heap block of its exact
 * length, so ASan sees any read past its end. Checked:
 *
 * - cg_config_set() returns 0 or EINVAL, and EINVAL leaves a message
 *   NUL-terminated in errlen; for an option, in the glue's 256 bytes,
 *   the message names the option and the valid values (BRIEF.md: a
 *   bad value is a clear error naming both), whatever the value;
 * - it fails exactly for names cg_option_known() does not know, or for
 *   values the option's own parser refuses, and a refused value
 *   changes nothing in the config;
 * - a size it takes is what an independent parser makes of the text
 *   (digits, one K/M/G/T suffix, white space around, overflow refused);
 *   a mode it takes names itself back through cg_mode_name();
 * - cg_config_check() returns 0 or EINVAL, EINVAL with a message.
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "cg_options.h"
#include "fuzz_common.h"

/* The reference: what a size text means, or false */
static bool ref_size(const char *s, uint64_t *out)
{
	unsigned __int128 v = 0;
	unsigned shift = 0;
	bool digits = false;

	while (isspace((unsigned char)*s)) {
		s++;
	}
	while (isdigit((unsigned char)*s)) {
		v = v * 10 + (unsigned)(*s - '0');
		if (v > UINT64_MAX) {
			return false;
		}
		digits = true;
		s++;
	}
	if (!digits) {
		return false;
	}
	switch (toupper((unsigned char)*s)) {
	case 'K':
		shift = 10;
		break;
	case 'M':
		shift = 20;
		break;
	case 'G':
		shift = 30;
		break;
	case 'T':
		shift = 40;
		break;
	}
	if (shift != 0) {
		s++;
	}
	while (isspace((unsigned char)*s)) {
		s++;
	}
	if (*s != '\0') {
		return false;
	}
	v <<= shift;
	if (v > UINT64_MAX) {
		return false;
	}
	*out = (uint64_t)v;
	return true;
}

/* A heap copy of exactly [p, p + n) and its NUL */
static char *dup_exact(const char *p, size_t n)
{
	char *s = malloc(n + 1);

	if (s == NULL) {
		abort();
	}
	memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

static const struct cg_option *find(const char *name)
{
	const struct cg_option *o = NULL;

	for (o = cg_options; o->name != NULL; o++) {
		if (strcasecmp(o->name, name) == 0) {
			return o;
		}
	}
	return NULL;
}

static void check_taken(const struct cg_config *cfg,
			const struct cg_option *o,
			const char *value)
{
	const char *field = (const char *)cfg + o->offset;
	uint64_t want = 0;
	uint64_t got = 0;

	switch (o->type) {
	case CG_OPT_SIZE:
		memcpy(&got, field, sizeof(got));
		if (!ref_size(value, &want) || want != got) {
			fz_violation("cacheguard:%s = '%s' taken as %" PRIu64,
				     o->name, value, got);
		}
		break;
	case CG_OPT_MODE:
		if (strcasecmp(cg_mode_name(cfg->mode), value) != 0) {
			fz_violation("cacheguard:mode = '%s' taken as %s",
				     value, cg_mode_name(cfg->mode));
		}
		break;
	case CG_OPT_PERCENT:
		if (cfg->hot_threshold > 100) {
			fz_violation("hot threshold '%s' taken as %u",
				     value, cfg->hot_threshold);
		}
		break;
	case CG_OPT_IOPRIO:
		if (strcasecmp(cg_ioprio_name(cfg->stream_ioprio), value) != 0) {
			fz_violation("cacheguard:%s = '%s' taken as %s",
				     o->name, value,
				     cg_ioprio_name(cfg->stream_ioprio));
		}
		break;
	}
}

/*
 * The glue logs a refused value from a 256-byte buffer (GLUE_ERRLEN):
 * the line must name the option and what is valid, whatever the value.
 */
#define GLUE_ERRLEN 256

static void check_message(const struct cg_config *cfg,
			  const struct cg_option *o,
			  const char *value)
{
	struct cg_config copy = *cfg;
	char err[GLUE_ERRLEN];
	char want[64];

	snprintf(want, sizeof(want), "cacheguard:%s", o->name);
	(void)cg_config_set(&copy, o->name, value, err, sizeof(err));
	if (strstr(err, want) == NULL || strstr(err, "valid values") == NULL) {
		fz_violation("refusing %zu bytes of value, the %d-byte "
			     "message lost '%s' or the valid values: %s",
			     strlen(value), GLUE_ERRLEN, want, err);
	}
}

static void set_one(struct cg_config *cfg, const char *name,
		    const char *value, size_t errlen)
{
	const struct cg_option *o = find(name);
	struct cg_config before = *cfg;
	char *err = malloc(errlen + 1);
	uint64_t v;
	int ret;

	if (err == NULL) {
		abort();
	}
	memset(err, 'x', errlen + 1);
	ret = cg_config_set(cfg, name, value, err, errlen);
	if (ret != 0 && ret != EINVAL) {
		fz_violation("cg_config_set returned %d", ret);
	}
	if (ret == 0 && !cg_option_known(name)) {
		fz_violation("'%s' taken, but it is no option", name);
	}
	if (ret == EINVAL && errlen > 0 &&
	    memchr(err, '\0', errlen) == NULL) {
		fz_violation("error message not terminated within %zu", errlen);
	}
	if (ret == EINVAL && o != NULL) {
		check_message(cfg, o, value);
	}
	if (ret == EINVAL && memcmp(&before, cfg, sizeof(before)) != 0) {
		fz_violation("refused '%s' = '%s' changed the config",
			     name, value);
	}
	if (ret == 0 && o != NULL) {
		check_taken(cfg, o, value);
	}
	/* A size the reference takes, the size options take too */
	if (o != NULL && o->type == CG_OPT_SIZE && ref_size(value, &v) &&
	    ret != 0) {
		fz_violation("cacheguard:%s refused the size '%s'",
			     o->name, value);
	}
	free(err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cg_config cfg;
	const char *p = (const char *)data;
	const char *end = p + size;
	size_t errlen = size > 0 ? data[0] % 200 : 80;
	char *buf = NULL;
	unsigned nopt = 0;
	uint64_t v;
	int ret;

	while (cg_options[nopt].name != NULL) {
		nopt++;
	}
	cg_config_init(&cfg);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eq = NULL;
		size_t len = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		char *name = NULL;
		char *value = NULL;

		eq = memchr(p, '=', len);
		if (eq != NULL) {
			name = dup_exact(p, (size_t)(eq - p));
			value = dup_exact(eq + 1, len - (size_t)(eq - p) - 1);
		} else {
			const struct cg_option *o =
				&cg_options[len > 0 ? (unsigned char)*p % nopt
						    : 0];

			name = dup_exact(o->name, strlen(o->name));
			value = dup_exact(p, len);
		}
		set_one(&cfg, name, value, errlen);
		/* the parser alone, on the raw value */
		if (cg_parse_size(value, &v) == 0 &&
		    !ref_size(value, &(uint64_t){0})) {
			fz_violation("cg_parse_size took '%s'", value);
		}
		free(name);
		free(value);
		p += len + (nl != NULL ? 1 : 0);
	}
	buf = malloc(errlen + 1);
	if (buf == NULL) {
		abort();
	}
	ret = cg_config_check(&cfg, buf, errlen);
	if (ret != 0 && ret != EINVAL) {
		fz_violation("cg_config_check returned %d", ret);
	}
	if (ret == EINVAL && errlen > 0 && memchr(buf, '\0', errlen) == NULL) {
		fz_violation("check message not terminated within %zu", errlen);
	}
	cg_config_describe(&cfg, buf, errlen);
	cg_option_names(buf, errlen);
	free(buf);
	return 0;
}
