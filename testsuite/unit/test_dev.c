/*
 * Unit tests of devices and filesystems (cg_dev.c): a block queue's
 * numbers from a sysfs tree of the test's own, what a device is known to
 * lack, filesystems by type, the state directory's name and trust rule,
 * and mode auto's probe over a fake syscall table
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

#include <stdbool.h>
#include <stdint.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "cg_dev.h"
#include "cg_file.h"
#include "cg_sys.h"
#include "cg_test.h"
#include "cg_write.h"

#define EXT4_MAGIC 0xEF53
#define NFS_MAGIC 0x6969
#define NONE 0
#define NO_DC CG_FS_NO_DONTCACHE
#define NO_DIO CG_FS_NO_DIRECT
#define REMOTE CG_FS_REMOTE

/* ---- a sysfs of the test's own ------------------------------------- */

static char sysfs[64];

static void put(const char *rel, const char *text)
{
	char path[256];
	FILE *f = NULL;

	snprintf(path, sizeof(path), "%s/%s", sysfs, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void dir(const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", sysfs, rel);
	assert_int_equal(mkdir(path, 0700), 0);
}

/*
 * As the kernel lays it out: dev/block/8:0 a link to the disk, 8:1 to its
 * partition inside it, which has no queue of its own
 */
/* The module keeps its table for the process; a test empties its own */
static void devs_free(struct cg_devs *t)
{
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

static int sysfs_setup(void **state)
{
	char path[256];

	snprintf(sysfs, sizeof(sysfs), "/tmp/cg_dev.XXXXXX");
	assert_non_null(mkdtemp(sysfs));
	dir("dev");
	dir("dev/block");
	dir("devices");
	dir("devices/sda");
	dir("devices/sda/queue");
	dir("devices/sda/sda1");
	put("devices/sda/queue/read_ahead_kb", "128\n");
	put("devices/sda/queue/max_sectors_kb", "1280\n");
	snprintf(path, sizeof(path), "%s/dev/block/8:0", sysfs);
	assert_int_equal(symlink("../../devices/sda", path), 0);
	snprintf(path, sizeof(path), "%s/dev/block/8:1", sysfs);
	assert_int_equal(symlink("../../devices/sda/sda1", path), 0);
	return 0;
}

static int sysfs_teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sysfs);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/* A disk's numbers, its partition's (its disk's), none for tmpfs's 0:40 */
static void test_queue(void **state)
{
	struct cg_devs t = {.sysfs = sysfs};

	assert_int_equal(cg_dev_queue_value(sysfs, makedev(8, 0),
					    "read_ahead_kb"),
			 128);
	assert_int_equal(cg_dev_queue_value(sysfs, makedev(8, 1),
					    "max_sectors_kb"),
			 1280);
	assert_int_equal(cg_dev_queue_value(sysfs, makedev(0, 40),
					    "read_ahead_kb"),
			 0);
	assert_int_equal(cg_dev_readahead(&t, makedev(8, 1)), 128 * 1024);
	assert_int_equal(cg_dev_max_request(&t, makedev(8, 1)), 1280 * 1024);
	assert_int_equal(cg_dev_max_request(&t, makedev(0, 40)), 0);

	/* read once, when the device is first met */
	put("devices/sda/queue/read_ahead_kb", "4096\n");
	assert_int_equal(cg_dev_readahead(&t, makedev(8, 1)), 128 * 1024);
	assert_int_equal(cg_dev_readahead(&t, makedev(8, 0)), 4096 * 1024);
	put("devices/sda/queue/read_ahead_kb", "128\n");
	assert_int_equal(t.n, 3);
	devs_free(&t);
}

/* What a device lacks: learnt once (logged once), its own only */
static void test_learn(void **state)
{
	struct cg_devs t = {.sysfs = sysfs};
	dev_t a = makedev(8, 1), b = makedev(0, 40);

	assert_int_equal(cg_dev_lacks(&t, a), 0);
	assert_true(cg_dev_learn(&t, a, CG_FS_NO_DONTCACHE));
	assert_false(cg_dev_learn(&t, a, CG_FS_NO_DONTCACHE));
	assert_true(cg_dev_learn(&t, a, CG_FS_NO_DONTCACHE_WRITE));
	assert_int_equal(cg_dev_lacks(&t, a),
			 CG_FS_NO_DONTCACHE | CG_FS_NO_DONTCACHE_WRITE);
	assert_int_equal(cg_dev_lacks(&t, b), 0);

	/* the probe's own mark is not something the device lacks */
	assert_true(cg_dev_learn(&t, b, CG_DEV_PROBED));
	assert_int_equal(cg_dev_lacks(&t, b), 0);
	devs_free(&t);
	assert_int_equal(t.n, 0);
}

/* ---- filesystems by type, the state directory, the probe's verdicts -- */

/*
 * Which filesystems auto treats as network or FUSE, by statfs f_type;
 * f_type is a signed long on some architectures, so a magic with the
 * high bit set may arrive sign-extended
 */
static void test_fs_type(void **state)
{
	static const struct {
		uint64_t f_type;
		unsigned lacks;
	} cases[] = {
		{0xEF53, 0},			/* ext4 */
		{0x58465342, 0},		/* xfs */
		{0x9123683E, 0},		/* btrfs */
		{0x01021994, 0},		/* tmpfs */
		{0x6969, REMOTE},		/* NFS */
		{0x65735546, REMOTE},		/* FUSE */
		{0xFE534D42, REMOTE},		/* SMB2 */
		{0xFFFFFFFFFF534D42ULL, REMOTE},	/* CIFS, sign-extended */
		{0x00C36400, REMOTE},		/* Ceph */
		{0x01021997, REMOTE},		/* 9p */
	};
	size_t i;

	for (i = 0; i < N_ELEM(cases); i++) {
		if (cg_fs_type_lacks(cases[i].f_type) != cases[i].lacks) {
			fail_msg("f_type %#" PRIx64 ": %u, want %u",
				 cases[i].f_type,
				 cg_fs_type_lacks(cases[i].f_type),
				 cases[i].lacks);
		}
	}
}

/* The filesystems other machines may mount: no place for lock files */
static void test_fs_shared(void **state)
{
	static const struct {
		uint64_t f_type;
		bool shared;
	} cases[] = {
		{0xEF53, false},	/* ext4 */
		{0x58465342, false},	/* XFS */
		{0x9123683E, false},	/* btrfs */
		{0x01021994, false},	/* tmpfs */
		{0x6969, true},		/* NFS */
		{0x65735546, true},	/* FUSE */
		{0xFE534D42, true},	/* SMB2 */
		{0x00C36400, true},	/* Ceph */
		{0x47504653, true},	/* GPFS */
		{0x01161970, true},	/* GFS2 */
		{0x7461636F, true},	/* OCFS2 */
	};
	size_t i;

	for (i = 0; i < N_ELEM(cases); i++) {
		assert_int_equal(cg_fs_type_shared(cases[i].f_type),
				 cases[i].shared);
	}
}

/*
 * The module's directory in smbd's state directory: one per node where
 * a cluster's nodes would otherwise share it, else the plain name
 */
static void test_state_dir_name(void **state)
{
	char name[32];

	(void)state;
	assert_false(cg_state_dir_name(false, false, 3, name, sizeof(name)));
	assert_string_equal(name, "cacheguard");
	/* a shared filesystem without clustering: smbd's own choice */
	assert_false(cg_state_dir_name(false, true, 3, name, sizeof(name)));
	assert_string_equal(name, "cacheguard");
	assert_false(cg_state_dir_name(true, false, 3, name, sizeof(name)));
	assert_string_equal(name, "cacheguard");
	assert_true(cg_state_dir_name(true, true, 3, name, sizeof(name)));
	assert_string_equal(name, "cacheguard.node3");
	assert_true(cg_state_dir_name(true, true, 4294967295U, name,
				      sizeof(name)));
	assert_string_equal(name, "cacheguard.node4294967295");
}

/* Lock files only where nobody but root can create or hold them */
static void test_state_dir_trust(void **state)
{
	(void)state;
	assert_null(cg_state_dir_untrusted(0, 040700));
	assert_null(cg_state_dir_untrusted(0, 040755));
	assert_null(cg_state_dir_untrusted(0, 041755 & ~022));
	assert_string_equal(cg_state_dir_untrusted(1000, 040700),
			    "not owned by root");
	assert_string_equal(cg_state_dir_untrusted(0, 040775),
			    "writable by group or others");
	assert_string_equal(cg_state_dir_untrusted(0, 040757),
			    "writable by group or others");
	assert_string_equal(cg_state_dir_untrusted(0, 041777),
			    "writable by group or others");
}

/* Mode auto's probe: which errno teaches what, and when to reopen */
static void test_probe(void **state)
{
	static const struct {
		const char *what;
		int err;
		bool may_reopen;
		uint64_t f_type;
		enum cg_probe probe;
		unsigned lacks;
	} cases[] = {
		/* O_DIRECT is learnt too, by a reopen, wherever it may be */
		{"uncached read works", 0, true, 0xEF53, CG_PROBE_REOPEN,
		 NONE},
		{"works, a lease held", 0, false, 0xEF53, CG_PROBE_NO_ANSWER,
		 NONE},
		{"no RWF_DONTCACHE", EOPNOTSUPP, true, 0xEF53, CG_PROBE_REOPEN,
		 NO_DC},
		{"RWF_DONTCACHE refused", EINVAL, true, 0xEF53,
		 CG_PROBE_REOPEN, NO_DC},
		{"no RWF_DONTCACHE, a lease held", EOPNOTSUPP, false, 0xEF53,
		 CG_PROBE_NO_ANSWER, NO_DC},
		/* network and FUSE never read direct: no reopen to try */
		{"works on NFS", 0, true, 0x6969, CG_PROBE_DONE, CG_FS_REMOTE},
		{"NFS, a lease held", 0, false, 0x6969, CG_PROBE_DONE,
		 CG_FS_REMOTE},
		{"NFS without RWF_DONTCACHE", EOPNOTSUPP, true, 0x6969,
		 CG_PROBE_DONE, CG_FS_REMOTE | NO_DC},
		{"write-only descriptor", EBADF, true, 0xEF53,
		 CG_PROBE_NO_ANSWER, NONE},
		{"EIO", EIO, true, 0xEF53, CG_PROBE_NO_ANSWER, NONE},
	};
	size_t i;

	(void)state;
	for (i = 0; i < N_ELEM(cases); i++) {
		unsigned lacks = 99;
		enum cg_probe p = cg_probe_uncached(cases[i].err,
						    cases[i].may_reopen,
						    cases[i].f_type,
						    &lacks);

		if (p != cases[i].probe || lacks != cases[i].lacks) {
			fail_msg("%s: probe %d, lacks %#x", cases[i].what, p,
				 lacks);
		}
	}
	/* open(2) says EINVAL where the filesystem has no O_DIRECT */
	assert_int_equal(cg_probe_direct(0), 0);
	assert_int_equal(cg_probe_direct(EINVAL), NO_DIO);
	assert_int_equal(cg_probe_direct(EACCES), 0);
	assert_int_equal(cg_probe_direct(EMFILE), 0);
}

/* ---- the probe, over a fake syscall table --------------------------- */

static struct {
	uint64_t f_type;
	int fs_type_err;
	int read_err;		/* the uncached read's errno, 0: it works */
	int reopen_err;		/* the O_DIRECT reopen's, 0: it opens */
	unsigned fs_types, reads, reopens;
	int read_flags;
} fake;

static int fake_fs_type(int fd, uint64_t *f_type)
{
	fake.fs_types++;
	*f_type = fake.f_type;
	return fake.fs_type_err;
}

static ssize_t fake_preadv2(int fd, void *buf, size_t n, uint64_t off,
			    int flags)
{
	fake.reads++;
	fake.read_flags = flags;
	if (fake.read_err != 0) {
		errno = fake.read_err;
		return -1;
	}
	return (ssize_t)n;
}

static int fake_reopen(int fd)
{
	fake.reopens++;
	if (fake.reopen_err != 0) {
		errno = fake.reopen_err;
		return -1;
	}
	return dup(fd);		/* closed by the probe */
}

static const struct cg_sys fake_sys = {
	.preadv2 = fake_preadv2,
	.fs_type = fake_fs_type,
	.reopen_direct = fake_reopen,
};

static int fake_reset(void **state)
{
	memset(&fake, 0, sizeof(fake));
	fake.f_type = EXT4_MAGIC;
	return 0;
}

static bool probe(struct cg_devs *t, bool may_reopen)
{
	return cg_dev_probe(t, &fake_sys, makedev(8, 1), 0, may_reopen);
}

/* What the probed filesystem lacks, as learnt */
static unsigned lacks(struct cg_devs *t)
{
	return cg_dev_lacks(t, makedev(8, 1));
}

/* The mode auto resolves to on the probed filesystem */
static enum cg_mode auto_mode(struct cg_devs *t)
{
	return cg_mode_resolve(CG_MODE_AUTO, lacks(t));
}

/*
 * RWF_DONTCACHE works and so does O_DIRECT: nothing lacking, auto reads
 * direct; both are asked once
 */
static void test_probe_uncached(void **state)
{
	struct cg_devs t = {.sysfs = sysfs};

	assert_true(probe(&t, true));
	assert_int_equal(fake.read_flags, CG_RWF_DONTCACHE);
	assert_int_equal(fake.reopens, 1);
	assert_int_equal(lacks(&t), 0);
	assert_int_equal(auto_mode(&t), CG_MODE_DIRECT);
	assert_false(probe(&t, true));
	assert_int_equal(fake.reads, 1);
	assert_int_equal(fake.reopens, 1);
	assert_int_equal(fake.fs_types, 1);
	devs_free(&t);

	/* XFS on 6.15+ without O_DIRECT for its files: dontcache then */
	fake_reset(state);
	fake.reopen_err = EINVAL;
	assert_true(probe(&t, true));
	assert_int_equal(lacks(&t), CG_FS_NO_DIRECT);
	assert_int_equal(auto_mode(&t), CG_MODE_DONTCACHE);
	devs_free(&t);
}

/* Refused (an old kernel: EOPNOTSUPP, or EINVAL), then O_DIRECT asked */
static void test_probe_no_dontcache(void **state)
{
	struct cg_devs t = {.sysfs = sysfs};

	fake.read_err = EOPNOTSUPP;
	assert_true(probe(&t, true));
	assert_int_equal(fake.reopens, 1);
	assert_int_equal(lacks(&t), CG_FS_NO_DONTCACHE);
	assert_int_equal(auto_mode(&t), CG_MODE_DIRECT);
	devs_free(&t);

	/* tmpfs: no O_DIRECT either (open(2) says EINVAL) */
	fake_reset(state);
	fake.read_err = EINVAL;
	fake.reopen_err = EINVAL;
	assert_true(probe(&t, true));
	assert_int_equal(lacks(&t), CG_FS_NO_DONTCACHE | CG_FS_NO_DIRECT);
	devs_free(&t);

	/* a reopen refused for the file's sake teaches nothing of the fs */
	fake_reset(state);
	fake.read_err = EOPNOTSUPP;
	fake.reopen_err = EACCES;
	assert_true(probe(&t, true));
	assert_int_equal(lacks(&t), CG_FS_NO_DONTCACHE);
	devs_free(&t);
}

/*
 * No answer yet: the reopen not allowed (a lease a second open would
 * break), a descriptor that cannot read, the type unknown. The next file
 * asks again, and answers.
 */
static void test_probe_later(void **state)
{
	struct cg_devs t = {.sysfs = sysfs};

	fake.read_err = EOPNOTSUPP;
	assert_false(probe(&t, false));
	assert_int_equal(fake.reopens, 0);
	assert_int_equal(lacks(&t), 0);
	fake.read_err = 0;
	assert_false(probe(&t, false));
	assert_int_equal(fake.reopens, 0);

	fake.read_err = EBADF;
	assert_false(probe(&t, true));

	fake.read_err = 0;
	fake.fs_type_err = EIO;
	assert_false(probe(&t, true));
	assert_int_equal(fake.reads, 3);	/* not read without a type */

	fake.fs_type_err = 0;
	fake.read_err = EOPNOTSUPP;
	assert_true(probe(&t, true));
	assert_int_equal(fake.reopens, 1);
	assert_int_equal(lacks(&t), CG_FS_NO_DONTCACHE);
	devs_free(&t);
}

/*
 * NFS: remote, never direct (no reopen tried), also under a lease;
 * auto reads uncached where the client takes RWF_DONTCACHE (6.18+),
 * else drops behind
 */
static void test_probe_remote(void **state)
{
	struct cg_devs t = {.sysfs = sysfs};

	fake.f_type = NFS_MAGIC;
	assert_true(probe(&t, false));
	assert_int_equal(fake.reopens, 0);
	assert_int_equal(lacks(&t), CG_FS_REMOTE);
	assert_int_equal(auto_mode(&t), CG_MODE_DONTCACHE);
	devs_free(&t);

	fake_reset(state);
	fake.f_type = NFS_MAGIC;
	fake.read_err = EOPNOTSUPP;
	assert_true(probe(&t, true));
	assert_int_equal(fake.reopens, 0);
	assert_int_equal(auto_mode(&t), CG_MODE_DONTNEED);
	devs_free(&t);
}

/* The real syscalls: a tmpfs or disk file of this machine answers */
static void test_probe_linux(void **state)
{
	struct cg_devs t = {0};
	int fd = cg_test_unlinked("x", 1);
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	assert_true(cg_dev_probe(&t, &cg_sys_linux, st.st_dev, fd, true));
	assert_true(cg_dev_get(&t, st.st_dev)->flags & CG_DEV_PROBED);
	assert_false(cg_dev_probe(&t, &cg_sys_linux, st.st_dev, fd, true));
	close(fd);
	devs_free(&t);
}

CG_TEST_MAIN(sysfs_setup, sysfs_teardown,
	     cmocka_unit_test(test_queue),
	     cmocka_unit_test(test_learn),
	     cmocka_unit_test(test_fs_type),
	     cmocka_unit_test(test_fs_shared),
	     cmocka_unit_test(test_state_dir_name),
	     cmocka_unit_test(test_state_dir_trust),
	     cmocka_unit_test(test_probe),
	     cmocka_unit_test_setup(test_probe_uncached, fake_reset),
	     cmocka_unit_test_setup(test_probe_no_dontcache, fake_reset),
	     cmocka_unit_test_setup(test_probe_later, fake_reset),
	     cmocka_unit_test_setup(test_probe_remote, fake_reset),
	     cmocka_unit_test(test_probe_linux))
