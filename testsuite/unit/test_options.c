/*
 * vfs_cacheguard unit tests: option parsing and validation (cg_options.c)
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
 * An option with a bad value must never turn into a silent default: every
 * test here checks both the return code and that the target field is left
 * alone, and the error sentence is checked for the three things an admin
 * needs in the log (the option, the value, what would have been valid).
 */

#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cg_options.h"
#include "cg_util.h"
#include "cg_test.h"

#define TiB (1ULL << 40)

/* A value no parser produces: shows that a failed parse wrote nothing */
#define SENTINEL 0x5a5a5a5a5a5a5a5aULL

/* Field by field: struct copies need not copy the padding */
static void assert_cfg_equal(const struct cg_config *a,
			     const struct cg_config *b)
{
	assert_int_equal(a->mode, b->mode);
	assert_int_equal(a->min_file_size, b->min_file_size);
	assert_int_equal(a->stream_trigger, b->stream_trigger);
	assert_int_equal(a->window, b->window);
	assert_int_equal(a->hot_threshold, b->hot_threshold);
	assert_int_equal(a->readahead, b->readahead);
	assert_int_equal(a->readahead_memory, b->readahead_memory);
	assert_int_equal(a->reader_gap, b->reader_gap);
	assert_int_equal(a->direct_prefetch, b->direct_prefetch);
	assert_int_equal(a->direct_memory, b->direct_memory);
	assert_int_equal(a->direct_min_io, b->direct_min_io);
}

struct size_case {
	const char *text;
	int ret;
	uint64_t value;		/* when ret == 0 */
};

static const struct size_case size_cases[] = {
	/* Plain byte counts */
	{"0", 0, 0},
	{"1", 0, 1},
	{"4096", 0, 4096},
	{"18446744073709551615", 0, UINT64_MAX},
	/* Suffixes are powers of 1024, either case */
	{"1K", 0, KiB},
	{"1k", 0, KiB},
	{"64K", 0, 64 * KiB},
	{"16M", 0, 16 * MiB},
	{"16m", 0, 16 * MiB},
	{"2G", 0, 2 * GiB},
	{"2g", 0, 2 * GiB},
	{"3T", 0, 3 * TiB},
	{"3t", 0, 3 * TiB},
	{"0M", 0, 0},
	/* The largest values each suffix can carry */
	{"18014398509481983K", 0, 18014398509481983ULL * KiB},
	{"17179869183G", 0, 17179869183ULL * GiB},
	{"16777215T", 0, 16777215ULL * TiB},
	/* Leading and trailing white space, as smb.conf may leave it */
	{" 8M", 0, 8 * MiB},
	{"8M ", 0, 8 * MiB},
	{"\t 8M \n", 0, 8 * MiB},
	{"  4096  ", 0, 4096},
	/* Overflow, in the digits or through the suffix */
	{"18446744073709551616", ERANGE, 0},
	{"99999999999999999999999999", ERANGE, 0},
	{"18014398509481984K", ERANGE, 0},
	{"17179869184G", ERANGE, 0},
	{"16777216T", ERANGE, 0},
	{"16777216t", ERANGE, 0},
	/* Garbage */
	{"", EINVAL, 0},
	{" ", EINVAL, 0},
	{"abc", EINVAL, 0},
	{"M", EINVAL, 0},
	{"-1", EINVAL, 0},
	{"-1M", EINVAL, 0},
	{"+5", EINVAL, 0},
	{"8Q", EINVAL, 0},
	{"8q", EINVAL, 0},
	{"1.5M", EINVAL, 0},
	{"8MB", EINVAL, 0},
	{"8MM", EINVAL, 0},
	{"0x10", EINVAL, 0},
	{"1 2", EINVAL, 0},
	{"8M x", EINVAL, 0},
};

static void test_parse_size(void **state)
{
	size_t i;

	for (i = 0; i < N_ELEM(size_cases); i++) {
		const struct size_case *c = &size_cases[i];
		uint64_t v = SENTINEL;
		int ret;

		ret = cg_parse_size(c->text, &v);
		if (ret != c->ret) {
			fail_msg("cg_parse_size(\"%s\") returned %d, "
				 "expected %d",
				 c->text,
				 ret,
				 c->ret);
		}
		if (c->ret == 0) {
			assert_int_equal(v, c->value);
		} else {
			/* The caller's value survives a bad string */
			assert_int_equal(v, SENTINEL);
		}
	}
}

/*
 * An option that parses a word or a number into one field of the
 * config (an unsigned or an enum): what a text gives
 */
struct field_case {
	const char *text;
	int ret;
	unsigned value;		/* the field after, when ret is 0 */
};

_Static_assert(sizeof(((struct cg_config *)NULL)->mode) == sizeof(unsigned),
	       "check_field_cases reads the mode as an unsigned");

/*
 * Each case set on the defaults, the field at offset first given a value
 * no text gives (777, not a real mode either), to show whether it was
 * written: the return, and the value or, on an error, the field untouched
 */
static void check_field_cases(const char *option,
			      size_t offset,
			      const struct field_case *cases,
			      size_t n)
{
	struct cg_config cfg;
	char err[256];
	unsigned v;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct field_case *c = &cases[i];
		int ret;

		cg_config_init(&cfg);
		v = 777;
		memcpy((char *)&cfg + offset, &v, sizeof(v));
		ret = cg_config_set(&cfg, option, c->text, err, sizeof(err));
		if (ret != c->ret) {
			fail_msg("%s \"%s\": returned %d, expected %d", option,
				 c->text, ret, c->ret);
		}
		memcpy(&v, (char *)&cfg + offset, sizeof(v));
		assert_int_equal(v, c->ret == 0 ? c->value : 777);
	}
}

static const struct field_case mode_cases[] = {
	{"off", 0, CG_MODE_OFF},
	{"auto", 0, CG_MODE_AUTO},
	{"dontneed", 0, CG_MODE_DONTNEED},
	{"dontcache", 0, CG_MODE_DONTCACHE},
	{"direct", 0, CG_MODE_DIRECT},
	{"OFF", 0, CG_MODE_OFF},
	{"Auto", 0, CG_MODE_AUTO},
	{"DontNeed", 0, CG_MODE_DONTNEED},
	{"DONTCACHE", 0, CG_MODE_DONTCACHE},
	{"dIrEcT", 0, CG_MODE_DIRECT},
	{"", EINVAL, 0},
	{"on", EINVAL, 0},
	{"yes", EINVAL, 0},
	{"fast", EINVAL, 0},
	{"dontneeds", EINVAL, 0},
	{"dont need", EINVAL, 0},
	{"direc", EINVAL, 0},
	{"1", EINVAL, 0},
};

static void test_mode_names(void **state)
{
	check_field_cases("mode", offsetof(struct cg_config, mode), mode_cases,
			  N_ELEM(mode_cases));
}

/* Every name cg_mode_name() prints parses back to the same mode */
static void test_mode_name_round_trip(void **state)
{
	const enum cg_mode modes[] = {
		CG_MODE_OFF,
		CG_MODE_AUTO,
		CG_MODE_DONTNEED,
		CG_MODE_DONTCACHE,
		CG_MODE_DIRECT,
	};
	struct cg_config cfg;
	const char *name = NULL;
	char err[256];
	size_t i;
	int ret;

	for (i = 0; i < N_ELEM(modes); i++) {
		cg_config_init(&cfg);
		cfg.mode = (enum cg_mode)77;
		name = cg_mode_name(modes[i]);
		ret = cg_config_set(&cfg, "mode", name, err, sizeof(err));
		assert_int_equal(ret, 0);
		assert_int_equal(cfg.mode, modes[i]);
	}
	name = cg_mode_name((enum cg_mode)77);
	assert_string_equal(name, "invalid");
}

static const struct field_case percent_cases[] = {
	{"0", 0, 0},
	{"1", 0, 1},
	{"50", 0, 50},
	{"100", 0, 100},
	{"50%", 0, 50},
	{"0%", 0, 0},
	{"100%", 0, 100},
	{"101", EINVAL, 0},
	{"101%", EINVAL, 0},
	{"1000", EINVAL, 0},
	{"99999999999999999999999", EINVAL, 0},
	{"-1", EINVAL, 0},
	{"abc", EINVAL, 0},
	{"", EINVAL, 0},
	{"%", EINVAL, 0},
	{"50%%", EINVAL, 0},
	{"%50", EINVAL, 0},
	{"5K", EINVAL, 0},
	{"0.5", EINVAL, 0},
};

static void test_percent(void **state)
{
	check_field_cases("hot threshold",
			  offsetof(struct cg_config, hot_threshold),
			  percent_cases, N_ELEM(percent_cases));
}

/* Sizes through cg_config_set land in the field the table names */
/* cacheguard:stream ioprio: the words, their encoding, and the rest */
static void test_stream_ioprio(void **state)
{
	static const struct {
		const char *text;
		int ret;
		unsigned value;
	} cases[] = {
		{"none", 0, 0},
		{"idle", 0, (3 << 13) | 0},
		{"IDLE", 0, (3 << 13) | 0},
		{"low", 0, (2 << 13) | 7},
		{"", EINVAL, 0},
		{"be7", EINVAL, 0},
		{"realtime", EINVAL, 0},
		{"7", EINVAL, 0},
	};
	struct cg_config cfg;
	char err[256];
	size_t i;

	cg_config_init(&cfg);
	assert_int_equal(cfg.stream_ioprio, 0);
	for (i = 0; i < N_ELEM(cases); i++) {
		cfg.stream_ioprio = 777;
		assert_int_equal(cg_config_set(&cfg, "stream ioprio",
					       cases[i].text, err,
					       sizeof(err)),
				 cases[i].ret);
		if (cases[i].ret == 0) {
			assert_int_equal(cfg.stream_ioprio, cases[i].value);
			assert_string_equal(cg_ioprio_name(cfg.stream_ioprio),
					    strcmp(cases[i].text, "IDLE") == 0
						    ? "idle"
						    : cases[i].text);
		} else {
			assert_int_equal(cfg.stream_ioprio, 777);
			assert_non_null(strstr(err, "none, idle, low"));
		}
	}
}

static void test_set_size_fields(void **state)
{
	struct field_case {
		const char *name;
		size_t offset;
	} cases[] = {
		{"min file size", offsetof(struct cg_config, min_file_size)},
		{"stream trigger", offsetof(struct cg_config, stream_trigger)},
		{"window", offsetof(struct cg_config, window)},
		{"readahead", offsetof(struct cg_config, readahead)},
		{"readahead memory",
		 offsetof(struct cg_config, readahead_memory)},
		{"reader gap", offsetof(struct cg_config, reader_gap)},
		{"direct prefetch",
		 offsetof(struct cg_config, direct_prefetch)},
		{"direct memory", offsetof(struct cg_config, direct_memory)},
		{"direct min io", offsetof(struct cg_config, direct_min_io)},
	};
	struct cg_config cfg;
	struct cg_config before;
	uint64_t v = 0;
	char err[256];
	size_t i;
	int ret;

	for (i = 0; i < N_ELEM(cases); i++) {
		cg_config_init(&cfg);
		before = cfg;
		ret = cg_config_set(&cfg,
				    cases[i].name,
				    "3g",
				    err,
				    sizeof(err));
		assert_int_equal(ret, 0);
		memcpy(&v, (char *)&cfg + cases[i].offset, sizeof(v));
		assert_int_equal(v, 3 * GiB);
		/* Nothing else moved */
		memcpy((char *)&cfg + cases[i].offset,
		       (char *)&before + cases[i].offset,
		       sizeof(v));
		assert_cfg_equal(&cfg, &before);
	}
	/* Option names are case-insensitive, as smb.conf parameters are */
	cg_config_init(&cfg);
	ret = cg_config_set(&cfg, "Stream Trigger", "1M", err, sizeof(err));
	assert_int_equal(ret, 0);
	assert_int_equal(cfg.stream_trigger, MiB);
}

struct error_case {
	const char *option;
	const char *value;
	/* What the sentence must contain besides option and value */
	const char *valid[6];
};

static const struct error_case error_cases[] = {
	{"mode",
	 "fast",
	 {"off", "auto", "dontneed", "dontcache", "direct", NULL}},
	{"min file size", "16Q", {"K, M, G or T", NULL}},
	{"stream trigger", "-4M", {"K, M, G or T", NULL}},
	{"window", "1.5M", {"K, M, G or T", NULL}},
	{"window", "99999999999999999999999", {"K, M, G or T", NULL}},
	{"readahead", "lots", {"K, M, G or T", NULL}},
	{"direct prefetch", "", {"K, M, G or T", NULL}},
	{"direct memory", "8 M", {"K, M, G or T", NULL}},
	{"direct min io", "4KB", {"K, M, G or T", NULL}},
	{"hot threshold", "101", {"0 to 100", NULL}},
	{"hot threshold", "-1", {"0 to 100", NULL}},
};

static void test_set_error_text(void **state)
{
	struct cg_config cfg;
	char err[256];
	char want[128];
	size_t i, k;
	int ret;

	for (i = 0; i < N_ELEM(error_cases); i++) {
		const struct error_case *c = &error_cases[i];

		cg_config_init(&cfg);
		err[0] = '\0';
		ret = cg_config_set(&cfg,
				    c->option,
				    c->value,
				    err,
				    sizeof(err));
		assert_int_equal(ret, EINVAL);

		snprintf(want, sizeof(want), "cacheguard:%s", c->option);
		if (strstr(err, want) == NULL) {
			fail_msg("\"%s\" does not name %s", err, want);
		}
		snprintf(want, sizeof(want), "'%s'", c->value);
		if (strstr(err, want) == NULL) {
			fail_msg("\"%s\" does not quote the value %s",
				 err,
				 want);
		}
		for (k = 0; c->valid[k] != NULL; k++) {
			if (strstr(err, c->valid[k]) == NULL) {
				fail_msg("\"%s\" does not list \"%s\"",
					 err,
					 c->valid[k]);
			}
		}
	}
}

/* The mode error lists every mode cg_mode_name() knows, so none is hidden */
static void test_mode_error_lists_every_mode(void **state)
{
	struct cg_config cfg;
	const char *name = NULL;
	char err[256];
	int m;
	int ret;

	cg_config_init(&cfg);
	ret = cg_config_set(&cfg, "mode", "bogus", err, sizeof(err));
	assert_int_equal(ret, EINVAL);
	for (m = 0; m < 64; m++) {
		name = cg_mode_name((enum cg_mode)m);
		if (strcmp(name, "invalid") == 0) {
			break;
		}
		if (strstr(err, name) == NULL) {
			fail_msg("\"%s\" does not list mode %s", err, name);
		}
	}
	assert_int_equal(m, 5);
}

static void test_unknown_option(void **state)
{
	struct cg_config cfg;
	struct cg_config before;
	char err[256];
	int ret;

	cg_config_init(&cfg);
	before = cfg;
	ret = cg_config_set(&cfg, "windows", "8M", err, sizeof(err));
	assert_int_equal(ret, EINVAL);
	assert_non_null(strstr(err, "cacheguard:windows"));
	assert_cfg_equal(&cfg, &before);

	/* A short error buffer is truncated, never overrun */
	memset(err, 'x', sizeof(err));
	ret = cg_config_set(&cfg, "window", "huge", err, 16);
	assert_int_equal(ret, EINVAL);
	assert_int_equal(strlen(err), 15);
	assert_int_equal(err[16], 'x');
}

/*
 * cg_options[] is the one source of the defaults: each must parse, and
 * cg_config_init() must give exactly what parsing them gives. Every
 * field of struct cg_config must be reachable through the table.
 */
static void test_defaults_match_table(void **state)
{
	const size_t fields[] = {
		offsetof(struct cg_config, mode),
		offsetof(struct cg_config, min_file_size),
		offsetof(struct cg_config, stream_trigger),
		offsetof(struct cg_config, window),
		offsetof(struct cg_config, hot_threshold),
		offsetof(struct cg_config, readahead),
		offsetof(struct cg_config, readahead_memory),
		offsetof(struct cg_config, reader_gap),
		offsetof(struct cg_config, direct_prefetch),
		offsetof(struct cg_config, direct_memory),
		offsetof(struct cg_config, direct_min_io),
		offsetof(struct cg_config, stream_ioprio),
	};
	const struct cg_option *o = NULL;
	struct cg_config init;
	struct cg_config parsed;
	char err[256];
	size_t nopts = 0;
	size_t i;
	int ret;

	cg_config_init(&init);
	for (o = cg_options; o->name != NULL; o++) {
		memset(&parsed, 0xa5, sizeof(parsed));
		err[0] = '\0';
		ret = cg_config_set(&parsed, o->name, o->def, err, sizeof(err));
		if (ret != 0) {
			fail_msg("default of %s does not parse: %s",
				 o->name,
				 err);
		}
		switch (o->type) {
		case CG_OPT_MODE:
			assert_int_equal(parsed.mode, init.mode);
			break;
		case CG_OPT_PERCENT:
		case CG_OPT_IOPRIO:
			assert_int_equal(*(unsigned *)((char *)&parsed +
						       o->offset),
					 *(unsigned *)((char *)&init +
						       o->offset));
			break;
		case CG_OPT_SIZE:
			assert_int_equal(*(uint64_t *)((char *)&parsed +
						       o->offset),
					 *(uint64_t *)((char *)&init +
						       o->offset));
			break;
		}
		nopts++;
	}
	assert_int_equal(nopts, N_ELEM(fields));
	for (i = 0; i < N_ELEM(fields); i++) {
		for (o = cg_options; o->name != NULL; o++) {
			if (o->offset == fields[i]) {
				break;
			}
		}
		if (o->name == NULL) {
			fail_msg("field at offset %zu has no option",
				 fields[i]);
		}
	}
	/* The defaults pass the cross-option checks */
	ret = cg_config_check(&init, err, sizeof(err));
	assert_int_equal(ret, 0);
}

struct check_case {
	uint64_t window;
	uint64_t direct_prefetch;
	uint64_t direct_memory;
	int ret;
	const char *names[3];	/* options the error must name */
};

static const struct check_case check_cases[] = {
	{8 * MiB, 8 * MiB, 64 * MiB, 0, {NULL}},
	{4 * KiB, 8 * MiB, 64 * MiB, 0, {NULL}},
	{8 * MiB + 4 * KiB, 8 * MiB, 64 * MiB, 0, {NULL}},
	{0, 8 * MiB, 64 * MiB, EINVAL, {"cacheguard:window", NULL}},
	{512, 8 * MiB, 64 * MiB, EINVAL, {"cacheguard:window", NULL}},
	{4095, 8 * MiB, 64 * MiB, EINVAL, {"cacheguard:window", NULL}},
	{6000, 8 * MiB, 64 * MiB, EINVAL, {"cacheguard:window", NULL}},
	{8 * MiB + 1, 8 * MiB, 64 * MiB, EINVAL, {"cacheguard:window", NULL}},
	/* Prefetch may equal the budget; 0 turns prefetch off */
	{8 * MiB, 64 * MiB, 64 * MiB, 0, {NULL}},
	{8 * MiB, 0, 0, 0, {NULL}},
	{8 * MiB,
	 64 * MiB + 1,
	 64 * MiB,
	 EINVAL,
	 {"cacheguard:direct prefetch", "cacheguard:direct memory", NULL}},
	{8 * MiB,
	 128 * MiB,
	 64 * MiB,
	 EINVAL,
	 {"cacheguard:direct prefetch", "cacheguard:direct memory", NULL}},
	{8 * MiB,
	 4 * KiB,
	 0,
	 EINVAL,
	 {"cacheguard:direct prefetch", "cacheguard:direct memory", NULL}},
};

static void test_config_check(void **state)
{
	struct cg_config cfg;
	char err[256];
	size_t i, k;
	int ret;

	for (i = 0; i < N_ELEM(check_cases); i++) {
		const struct check_case *c = &check_cases[i];

		cg_config_init(&cfg);
		cfg.window = c->window;
		cfg.direct_prefetch = c->direct_prefetch;
		cfg.direct_memory = c->direct_memory;
		err[0] = '\0';
		ret = cg_config_check(&cfg, err, sizeof(err));
		if (ret != c->ret) {
			fail_msg("case %zu: returned %d, expected %d (%s)",
				 i,
				 ret,
				 c->ret,
				 err);
		}
		for (k = 0; c->names[k] != NULL; k++) {
			if (strstr(err, c->names[k]) == NULL) {
				fail_msg("case %zu: \"%s\" does not name %s",
					 i,
					 err,
					 c->names[k]);
			}
		}
		if (c->ret != 0) {
			assert_non_null(strstr(err, "valid values"));
		}
	}
}

/* The connect log line shows every option, so a log shows the whole setup */
static void test_describe(void **state)
{
	const struct cg_option *o = NULL;
	struct cg_config cfg;
	char err[256];
	char buf[1024];
	char want[64];
	int ret;

	cg_config_init(&cfg);
	ret = cg_config_set(&cfg, "mode", "dontneed", err, sizeof(err));
	assert_int_equal(ret, 0);
	ret = cg_config_set(&cfg, "window", "2M", err, sizeof(err));
	assert_int_equal(ret, 0);
	cg_config_describe(&cfg, buf, sizeof(buf));
	for (o = cg_options; o->name != NULL; o++) {
		snprintf(want, sizeof(want), "%s=", o->name);
		if (strstr(buf, want) == NULL) {
			fail_msg("\"%s\" lacks option %s", buf, o->name);
		}
	}
	assert_non_null(strstr(buf, "mode=dontneed"));
	assert_non_null(strstr(buf, "window=2097152"));

	/* A short buffer is truncated, never overrun */
	memset(buf, 'x', sizeof(buf));
	cg_config_describe(&cfg, buf, 10);
	assert_int_equal(strlen(buf), 9);
	assert_int_equal(buf[10], 'x');
}

/*
 * However long a bad value, the message (logged from a 256-byte buffer)
 * still names the option and the valid values: the value is cut short
 */
static void test_long_bad_value(void **state)
{
	const struct cg_option *o = NULL;
	struct cg_config cfg;
	char value[4096];
	char err[256];
	char want[128];

	memset(value, 'x', sizeof(value) - 1);
	value[sizeof(value) - 1] = '\0';
	for (o = cg_options; o->name != NULL; o++) {
		cg_config_init(&cfg);
		assert_int_equal(cg_config_set(&cfg, o->name, value, err,
					       sizeof(err)),
				 EINVAL);
		snprintf(want, sizeof(want), "...' for cacheguard:%s; valid "
			 "values: ", o->name);
		if (strstr(err, want) == NULL) {
			fail_msg("'%s' lacks '%s'", err, want);
		}
		assert_true(strlen(err) < sizeof(err) - 1);
	}
}

/*
 * A misspelt name is reported at connect; names compare as Samba's
 * strwicmp compares them, so the spellings smbd accepts are known.
 */
static void test_option_known(void **state)
{
	static const struct {
		const char *name;
		bool known;
	} cases[] = {
		{"mode", true},
		{"MODE", true},
		{"min file size", true},
		{"minfilesize", true},
		{" Min  File Size ", true},
		{"direct min io", true},
		{"windw", false},
		{"min file", false},
		{"min file sizes", false},
		{"", false},
		{"cacheguard:mode", false},
	};
	const struct cg_option *o = NULL;
	char names[512];
	size_t i;

	for (i = 0; i < N_ELEM(cases); i++) {
		if (cg_option_known(cases[i].name) != cases[i].known) {
			fail_msg("cg_option_known(\"%s\") != %d",
				 cases[i].name, cases[i].known);
		}
	}
	cg_option_names(names, sizeof(names));
	for (o = cg_options; o->name != NULL; o++) {
		assert_non_null(strstr(names, o->name));
	}
	assert_string_equal(strstr(names, "mode, min file size"), names);

	/* A short buffer is truncated, never overrun */
	memset(names, 'x', sizeof(names));
	cg_option_names(names, 8);
	assert_int_equal(strlen(names), 7);
	assert_int_equal(names[8], 'x');
}

/*
 * The module runs only in the smbd of the release it was built for: the
 * structures it uses may change with any upstream release. Debian's
 * version string carries its package version since 4.20, which a
 * security update changes: the same release all the same.
 */
static void test_samba_compatible(void **state)
{
	(void)state;
	assert_true(cg_samba_compatible("4.17.12-Debian", "4.17.12-Debian"));
	assert_true(cg_samba_compatible("4.22.6-Debian-4.22.6+dfsg-0+deb13u1",
					"4.22.6-Debian-4.22.6+dfsg-0+deb13u1"));
	assert_true(cg_samba_compatible(
		"4.22.11-Debian-4.22.11+dfsg-0+deb13u1",
		"4.22.11-Debian-4.22.11+dfsg-0+deb13u2"));
	assert_true(cg_samba_compatible(
		"4.22.6-Debian-4.22.6+dfsg-0+deb13u1~bpo12+1",
		"4.22.6-Debian-4.22.6+dfsg-0+deb13u2~bpo12+1"));
	assert_false(cg_samba_compatible(
		"4.22.11-Debian-4.22.11+dfsg-0+deb13u1",
		"4.22.12-Debian-4.22.12+dfsg-0+deb13u1"));
	assert_false(cg_samba_compatible("4.22.11-Debian-4.22.11+dfsg-0",
					 "4.22.11-Ubuntu-4.22.11+dfsg-0"));
	assert_false(cg_samba_compatible("4.22.1-Debian", "4.22.11-Debian"));
	assert_false(cg_samba_compatible("4.22.11-Debian", "4.22.1-Debian"));
	assert_false(cg_samba_compatible("4.17.12-Debian", "4.17.13-Debian"));
	assert_false(cg_samba_compatible("4.17.12-Debian", "4.17.12"));
	assert_false(cg_samba_compatible("4.17.12", "4.17.12-Debian"));
	assert_false(cg_samba_compatible("4.17.12-Debian", ""));
	assert_false(cg_samba_compatible("4.17.12-Debian", NULL));
}

CG_TEST_MAIN(NULL, NULL,
	     cmocka_unit_test(test_parse_size),
	     cmocka_unit_test(test_mode_names),
	     cmocka_unit_test(test_mode_name_round_trip),
	     cmocka_unit_test(test_percent),
	     cmocka_unit_test(test_stream_ioprio),
	     cmocka_unit_test(test_set_size_fields),
	     cmocka_unit_test(test_set_error_text),
	     cmocka_unit_test(test_mode_error_lists_every_mode),
	     cmocka_unit_test(test_unknown_option),
	     cmocka_unit_test(test_defaults_match_table),
	     cmocka_unit_test(test_config_check),
	     cmocka_unit_test(test_describe),
	     cmocka_unit_test(test_option_known),
	     cmocka_unit_test(test_long_bad_value),
	     cmocka_unit_test(test_samba_compatible))
