# SPDX-License-Identifier: GPL-3.0-or-later
#
# Front end for vfs_cacheguard. The real build is wscript, run by the waf of
# a Samba tree prepared to match the installed smbd (tools/prepare-samba-tree,
# cached under /var/cache/vfs-cacheguard, or $CACHEGUARD_SAMBA_CACHE).
#
#   make		install missing packages (as root), prepare the tree,
#			build cacheguard.so, the unit tests and the test tools
#   make test		unit tests, then integration tests against a real smbd
#   make test-trixie	the same in a cached Debian 13 root (Samba 4.22)
#   make test-releases	every samba build of packaging/releases: make test,
#			make test-trixie, and test-ROW for bookworm-backports,
#			trixie-backports and forky (the release subset, each
#			in its cached root)
#   make deb-trixie	the Debian 13 package, built in that root (deb-ROW:
#			any row's)
#   make repo		the apt repository: a suite per row, signed
#   make test-repo	every install and upgrade path through it, with apt
#   make refresh-forky	upgrade the forky root to the archive's samba
#			(refresh-releases: every row's root)
#   make test-kernels	a small suite under Debian 12's and 13's own
#			kernels (6.1, 6.12) in QEMU guests
#   make test-i386	a 32-bit smbd (samba:i386 in a cached i386 root,
#			under qemu-user) reads past 2 and 4 GiB, every mode
#   make torture	the fuller smbtorture parity run (t25, CG_TORTURE=full)
#   make build-asan	everything again with ASan and UBSan, into build-asan/
#   make build-i386	the engine and its unit tests for i386, into
#			build-i386/ (gcc -m32; t07 runs them under qemu)
#   make test-asan	unit and integration tests under ASan/UBSan, valgrind
#   make fuzz		the libFuzzer harnesses, CG_FUZZ_TIME seconds each
#   make demo		copy a 1 GiB file through a plain and the default
#			share, in alternating rounds
#   make bench		the benchmark: scenario S (one copy, pairs against
#			plain), small files, the mixed workload (A, B, C),
#			an upload
#   make bench-single	scenario S alone (BENCH_READ_IOPS=N: capped)
#   make bench-smallfiles  thousands of 4-64 KiB files read through a
#			watched share and a plain one, in pairs
#   make bench-upload	the mixed workload with a 4 GiB upload (make bench
#			runs it after the download scenarios)
#   make soak		a randomized client load against every mode for
#			SOAK_MINUTES (default 10); not part of make test
#   make install	cacheguard.so into smbd's modules dir (DESTDIR honoured)

MULTIARCH := $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || \
		echo x86_64-linux-gnu)
VFSDIR ?= /usr/lib/$(MULTIARCH)/samba/vfs
DESTDIR ?=
WAF = tools/waf

# Everything the build and the tests use, as Debian package names, the
# same in Debian 12 and 13: fincore (the demo's residency figure) is in
# util-linux-extra in both, which Debian 12's util-linux depends on and
# Debian 13's does not
DEB_DEPS = samba smbclient samba-testsuite libcmocka-dev dpkg-dev \
	build-essential pkg-config python3 util-linux util-linux-extra \
	fio libsmbclient-dev \
	xsltproc docbook-xsl docbook-xml gnuplot-nox xfsprogs btrfs-progs \
	debhelper fakeroot man-db rpm nocache python3-impacket \
	iproute2 procps passwd e2fsprogs valgrind clang libclang-rt-dev \
	bindfs lintian strace ctdb

# The 32-bit build of the engine (build-i386): gcc -m32, the i386 cmocka
# (multiarch: install-deps adds the architecture) and qemu-user to run
# its tests, as this host's kernel may refuse i386 executables
I386_DEB_DEPS = gcc-multilib libcmocka-dev:i386 qemu-user-static

# The rows of packaging/releases built in cached roots (tools/release-root;
# the bookworm row is this machine's own), and those of them that no whole
# suite runs (make test on the host, make test-trixie)
ROOT_ROWS = bookworm trixie bookworm-backports trixie-backports forky
ADDED_ROWS = bookworm-backports trixie-backports forky

.PHONY: all deps build build-asan build-i386 build-fuzz test test-asan fuzz \
	fuzz-corpus \
	unit soak demo bench bench-single bench-smallfiles bench-smoke \
	bench-upload \
	bench-readpath deb test-package \
	test-trixie test-releases test-subset repo test-repo \
	refresh-releases $(addprefix test-,$(ADDED_ROWS)) \
	$(addprefix deb-,$(ROOT_ROWS)) $(addprefix refresh-,$(ROOT_ROWS)) \
	test-kernels test-kernels-ci test-cluster test-i386 test-i386-ci \
	install uninstall clean distclean

all: build

deps:
	@tools/install-deps $(DEB_DEPS)

# The runners run every build*/test_* they find: a test program whose
# source is gone (a test merged or renamed) is removed, not run stale
STALE_TESTS = for t in $(1)/test_*; do \
	[ ! -e "$$t" ] || [ -f "testsuite/unit/$${t\#\#*/}.c" ] || rm -f "$$t"; \
	done

build: deps
	@tools/prepare-samba-tree >/dev/null
	@$(WAF) configure >build.configure.log 2>&1 || \
		{ cat build.configure.log; exit 1; }
	@$(WAF) build
	@$(call STALE_TESTS,build)

# The sanitizer variant (ASan + UBSan, gcc) in build-asan/, with a waf
# lock file of its own so that it never touches build/
ASAN_WAF = WAFLOCK=.lock-waf_asan CACHEGUARD_SANITIZE=1 $(WAF)

build-asan: build
	@$(ASAN_WAF) configure --out=build-asan >build-asan.configure.log 2>&1 \
		|| { cat build-asan.configure.log; exit 1; }
	@$(ASAN_WAF) build
	@$(call STALE_TESTS,build-asan)

# The engine and its unit tests for i386 in build-i386/ (wscript's
# CACHEGUARD_I386 variant, a waf lock file of its own), so that t07 sees
# the objects of the very flags wscript gives the engine
I386_WAF = WAFLOCK=.lock-waf_i386 CACHEGUARD_I386=1 $(WAF)

build-i386: build
	@tools/install-deps $(I386_DEB_DEPS)
	@$(I386_WAF) configure --out=build-i386 >build-i386.configure.log \
		2>&1 || { cat build-i386.configure.log; exit 1; }
	@$(I386_WAF) build
	@$(call STALE_TESTS,build-i386)

# The libFuzzer harnesses (testsuite/fuzz), clang with ASan and UBSan,
# against the engine's sources directly, with the 64-bit off_t wscript
# gives the engine everywhere (source/cg_sys.h asserts it)
FUZZERS = $(patsubst testsuite/fuzz/%.c,build-fuzz/%,\
	$(wildcard testsuite/fuzz/fuzz_*.c))
FUZZ_CFLAGS = -g -O1 -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer -Isource -D_FILE_OFFSET_BITS=64 \
	-I$(shell tools/prepare-samba-tree 2>/dev/null | tail -n 1)

build-fuzz: deps $(FUZZERS)

build-fuzz/%: testsuite/fuzz/%.c testsuite/fuzz/fuzz_common.h \
		testsuite/unit/cg_model_file.h \
		$(wildcard source/*.c source/*.h)
	@mkdir -p build-fuzz
	@clang $(FUZZ_CFLAGS) -o $@ $< $(wildcard source/*.c)

# CG_ONCE_ELSEWHERE (testsuite/run): the scripts that are the same in
# every release skipped, and the fuzzers and the i386 engine not built
export CG_ONCE_ELSEWHERE
test: build build-asan $(if $(CG_ONCE_ELSEWHERE),,build-fuzz build-i386)
	@testsuite/run

# The sanitizer scripts (t01, t02, t12) alone; t12 runs smbd with the
# sanitized module through the scripts CG_ASAN_SCRIPTS names
test-asan: build build-asan
	@CG_ASAN_SCRIPTS="$${CG_ASAN_SCRIPTS:-t10 t15 t20 t35}" \
		testsuite/run sanitize

# t97: CG_FUZZ_TIME seconds per harness (default 60); fuzz-corpus
# fuzzes longer and merges what found new coverage into the tree
fuzz: build-fuzz
	@testsuite/run fuzz

fuzz-corpus: build-fuzz
	@testsuite/fuzz/merge

unit: build
	@testsuite/run --unit

# A mixed, randomized load for SOAK_MINUTES (default 10), checking bytes,
# counters and smbd's memory; as root
soak: build
	@testsuite/soak

# smbtorture parity with more suites than make test runs (about 14 minutes)
.PHONY: torture
torture: build
	@CG_TORTURE=full testsuite/run t25_torture

demo: build
	@tools/demo

# The mixed-workload benchmark (testsuite/bench); smoke: tiny sizes.
# Scenario S (one copy, no memory pressure, pairs against plain), small
# files (pairs against plain), the download scenarios, then the upload
# one (BENCH_UPLOAD=0: without); BENCH_READ_IOPS=500 caps smbd's reads
# in S and the mixed workload
bench: build
	@testsuite/bench/pairs.sh
	@testsuite/bench/smallfiles.sh
	@testsuite/bench/run
	@if [ "$${BENCH_UPLOAD:-1}" != 0 ]; then testsuite/bench/upload.sh; fi

# Scenario S alone: one cold copy per mode against plain, in pairs
bench-single: build
	@testsuite/bench/pairs.sh

# Small files through the default share against plain, in pairs: what
# the module costs the reads it does not watch
bench-smallfiles: build
	@testsuite/bench/smallfiles.sh

bench-smoke: build
	@BENCH_SMOKE=1 testsuite/bench/run

# Scenario A with an upload instead of a download (testsuite/bench/upload.sh)
bench-upload: build
	@testsuite/bench/upload.sh

# The read paths alone (build/cgbench) beside fio on the same file
bench-readpath: build
	@testsuite/bench/readpath.sh

deb: build
	@packaging/build-deb

test-package: deb
	@testsuite/package-test

# Three CTDB nodes and their clustered smbds on this machine (t60)
test-cluster: build
	@testsuite/run t60

# Debian 13 (trixie, Samba 4.22): a minbase root cached in
# /var/cache/vfs-cacheguard/root-trixie (tools/release-root), in which
# "make test" installs what it needs, prepares the 4.22 tree and runs the
# suite against Debian 13's own smbd, smbclient and smbtorture (in a
# network namespace of its own: see tools/in-root), all but the scripts
# that are the same in every release (testsuite/run, once_*), which the
# host suite runs
test-trixie:
	@tools/in-root trixie make build
	@tools/in-root --private-net trixie make test \
		CG_ONCE_ELSEWHERE="run once by the host suite (make test)"

# A 32-bit smbd: Debian 12's samba:i386 in a cached i386 root, run by
# qemu-user (testsuite/i386/run), with only what that needs installed
I386_ROOT_DEPS = samba smbclient libcmocka-dev libsmbclient-dev dpkg-dev \
	build-essential pkg-config python3 xsltproc docbook-xsl docbook-xml \
	util-linux iproute2 procps passwd

test-i386:
	@I386_ROOT_DEPS="$(I386_ROOT_DEPS)" testsuite/i386/run

# CI's part: the same where the i386 root and its tree are prepared
# (about 80 s then), SKIPPED where they are not
test-i386-ci:
	@CG_I386_PREPARED_ONLY=1 I386_ROOT_DEPS="$(I386_ROOT_DEPS)" \
		testsuite/i386/run

# Debian 12's 6.1 and Debian 13's 6.12 kernels under QEMU (TCG), each
# with a root of its release and the module built there
# (testsuite/kernel/run; about 20 minutes)
test-kernels:
	@testsuite/kernel/run

# Their CI subset (.ci/run): ext4 only, every mode's copy and upload, the
# hot keep, auto's choice and coherence (testsuite/kernel/guest-suite.sh)
test-kernels-ci:
	@CG_GUEST_SET=ci testsuite/kernel/run

# The rows no whole suite runs, each in its cached root (tools/test-row):
# the release subset (CG_SUBSET=release, testsuite/run) against the row's
# own smbd, smbclient and smbtorture, in a network namespace of its own;
# a row whose samba source the archive lacks is SKIPPED, saying why
$(addprefix test-,$(ADDED_ROWS)):
	@tools/test-row $(@:test-%=%)

test-subset: build
	@CG_SUBSET=release testsuite/run

# Every row: the parts run as CI runs them (.ci/run: every part always,
# a table of their times, the counts summed on the last line)
test-releases:
	@bash .ci/run test test-trixie $(addprefix test-,$(ADDED_ROWS))

# A row's package, built in its root, copied to packaging/out
$(addprefix deb-,$(ROOT_ROWS)):
	@tools/in-root $(@:deb-%=%) make deb
	@mkdir -p packaging/out
	@cp -v "$$(tools/release-root $(@:deb-%=%) | tail -n 1)$$(tools/in-root \
		$(@:deb-%=%) packaging/build-deb --name | tail -n 1)" packaging/out/

# The apt repository (tools/make-repo): a suite per row, each row's build
# made in its root where the pool lacks it, signed with a key of its own
repo:
	@tools/make-repo

# Every path through it with apt (testsuite/repo-test; about N minutes)
test-repo: build
	@testsuite/repo-test

# A root keeps the samba it was made with until refreshed: forky (Debian
# testing) moves every week; its next make build prepares the new tree
$(addprefix refresh-,$(ROOT_ROWS)):
	@tools/release-root --refresh $(@:refresh-%=%)

refresh-releases: $(addprefix refresh-,$(ROOT_ROWS))

MANDIR ?= /usr/share/man

install: build
	install -d "$(DESTDIR)$(VFSDIR)"
	install -m 0644 build/cacheguard.so "$(DESTDIR)$(VFSDIR)/cacheguard.so"
	if [ -f build/vfs_cacheguard.8 ]; then \
		install -D -m 0644 build/vfs_cacheguard.8 \
			"$(DESTDIR)$(MANDIR)/man8/vfs_cacheguard.8"; \
	fi

uninstall:
	rm -f "$(DESTDIR)$(VFSDIR)/cacheguard.so"
	rm -f "$(DESTDIR)$(MANDIR)/man8/vfs_cacheguard.8"

clean:
	rm -rf build build.configure.log .lock-waf_* build-asan \
		build-asan.configure.log build-fuzz build-i386 \
		build-i386.configure.log

# The prepared Samba tree is a cache outside the checkout; this removes it
distclean: clean
	rm -rf "$${CACHEGUARD_SAMBA_CACHE:-/var/cache/vfs-cacheguard}"
