#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The engine on 32-bit x86 (issue 47: Debian ships samba for i386 and
# armhf), as wscript builds it for i386 (make build-i386: build-i386/,
# gcc -m32 with the engine's own flags):
#  a. no object of the engine calls a libc function by its 32-bit off_t
#     symbol (pread for pread64, preadv2 for preadv64v2, mmap, fstat,
#     open, fcntl, posix_fadvise, ...: testsuite/lib/lfs.sh derives the
#     list from the engine's own headers), which would read, drop and
#     lock the wrong bytes past 2 GiB;
#  b. that check finds such a call where there is one: a probe built
#     without _FILE_OFFSET_BITS=64, and the list holds the calls the
#     engine makes;
#  c. every unit test passes as an i386 binary under qemu-i386-static
#     (this host's kernel may refuse i386 executables: "Exec format
#     error"; Debian's amd64 kernels run them natively), one per core,
#     the random passes with 4 of their 8 seeds.
# Needs no root and no smbd. make test-i386 (t98) runs a 32-bit smbd.
set -u
. "$(dirname "$0")/../lib/check.sh"
. "$(dirname "$0")/../lib/lfs.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
b32=${CG_I386_BUILD:-$top/build-i386}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

objs=("$b32"/source/*.o)
nsrc=$(find "$top/source" -maxdepth 1 -name '*.c' | wc -l)
if [ ! -e "${objs[0]}" ] || [ ! -x "$b32/test_stream" ]; then
	cg_fail "i386 engine" "no objects or tests in $b32: make build-i386"
	exit 0
fi
if [ "${#objs[@]}" -ne "$nsrc" ]; then
	cg_fail "i386 engine" "${#objs[@]} objects in $b32/source for" \
		"$nsrc sources: make build-i386"
	exit 0
fi
# i386 indeed: ELF class 1 (32-bit) and machine 3 (EM_386)
for f in "${objs[0]}" "$b32/test_stream"; do
	elf=$(od -An -tu1 -j4 -N1 "$f" | tr -d ' ')/$(od -An -tu2 -j18 -N2 "$f" |
		tr -d ' ')
	if [ "$elf" != 1/3 ]; then
		cg_fail "i386 engine" "${f#"$top"/} is no i386 ELF (class/machine $elf)"
		exit 0
	fi
done

# a, b: the names, from the engine's sources as the i386 compiler sees
# them, and a probe that calls two of them without the macro
# the engine takes Samba's list macros from the tree (lib/util/dlinklist.h)
tree=$("$top/tools/prepare-samba-tree" 2>/dev/null | tail -n 1)
if ! cg_lfs_names -m32 -std=gnu11 -I"$top/source" -I"$tree" -- \
	"$top"/source/*.c >"$work/names"; then
	cg_fail "the 32-bit off_t names" "gcc -m32 -E failed"
	exit 0
fi
missing=
for f in pread preadv2 pwritev2 mmap fstat fstatfs open fcntl posix_fadvise
do
	grep -qx "$f" "$work/names" || missing+=" $f"
done
if [ -z "$missing" ]; then
	cg_pass "the 32-bit off_t names hold the engine's calls" \
		"($(wc -l <"$work/names") names)"
else
	cg_fail "the 32-bit off_t names hold the engine's calls" \
		"missing:$missing"
fi
cat >"$work/probe.c" <<'EOF'
#include <sys/mman.h>
#include <unistd.h>
void *probe(int fd, void *buf, off_t off);
void *probe(int fd, void *buf, off_t off)
{
	return pread(fd, buf, 1, off) == 1 ? buf :
		mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, off);
}
EOF
gcc -m32 -c -o "$work/probe.o" "$work/probe.c"
cg_lfs_calls "$work/names" "$work/probe.o" >"$work/probe.calls"
if [ "$(awk '{ print $2 }' "$work/probe.calls" | sort | tr '\n' ' ')" = \
	"mmap pread " ]; then
	cg_pass "a probe without _FILE_OFFSET_BITS=64 is caught"
else
	cg_fail "a probe without _FILE_OFFSET_BITS=64 is caught" \
		"found: $(cat "$work/probe.calls")"
fi
cg_lfs_calls "$work/names" "${objs[@]}" | sed "s|^$b32/||" >"$work/calls"
if [ -s "$work/calls" ]; then
	cg_fail "no engine object calls libc with a 32-bit off_t" \
		"$(tr '\n' ' ' <"$work/calls")"
else
	cg_pass "no engine object calls libc with a 32-bit off_t" \
		"(${#objs[@]} objects)"
fi

# c: the unit tests under qemu-user, one per core. The random passes
# of test_prefetch and test_direct run 4 of their 8 seeds, as under
# valgrind (t02): every seed takes the same paths, and qemu makes them
# 3-5 times slower (test_direct: 52 s of CPU with 8 seeds, 37 with 4)
export CG_TEST_SEEDS=4
qemu=$(command -v qemu-i386-static || command -v qemu-i386 || true)
if [ -z "$qemu" ]; then
	cg_fail "i386 unit tests" "no qemu-i386-static: make build-i386"
	exit 0
fi
for t in "$b32"/test_*; do
	cg_per_core "$work" "${t##*/}" "$qemu" "$t"
done
wait
for t in "$b32"/test_*; do
	name=$(basename "$t")
	cg_per_core_result "$work" "$name"
	n=$(sed -n 's/.*\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$work/$name.log")
	# a test that cannot tell under qemu-user skips itself, and says why
	sed -n 's/^\[  SKIPPED \] \([a-z_0-9]*\)$/\1/p' "$work/$name.log" |
		sort -u | while read -r s; do
			cg_skip "$name $s as i386 under qemu-user" \
				"$(grep -m 1 -B 1 "SKIPPED \] $s" "$work/$name.log" |
				head -n 1)"
		done
	if [ "$rc" = 0 ] && [ -n "$n" ]; then
		cg_pass "$name as i386 under qemu-user: $n tests, ${secs}s"
	else
		cg_fail "$name as i386 under qemu-user" "exit $rc after ${secs}s:
$(grep -E -B 5 -A 10 'FAILED|ERROR|error' "$work/$name.log" | head -n 40)"
	fi
done
exit 0
