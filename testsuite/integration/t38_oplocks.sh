#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# kernel oplocks = yes: a client's batch oplock is a Linux write lease on
# smbd's descriptor, which any other open of the file breaks. Direct
# reads need a second open (O_DIRECT), so a file whose client holds such
# an oplock is read without them, and the summary says why; the lease is
# never broken by the module (smbd logs each break it receives at
# locking:10). A client without an oplock on the same share still reads
# direct. The module of 00b5bb4 reopened the file, broke the lease (the
# client's oplock with it) and fell back to dontneed all the same.
CG_LOG_LEVEL="1 cacheguard:10 locking:10"
. "$(dirname "$0")/../lib/script.sh" "kernel oplocks" "$@"

tool=$CG_TOP/testsuite/tools/smb_oplock_read.py
cg_smbd_init
for mode in direct dontneed; do
	cg_share "ko_$mode" "vfs objects = cacheguard" \
		"cacheguard:mode = $mode" "kernel oplocks = yes"
done
cg_smbd_start || { cg_fail "smbd starts" "see above"; exit 1; }
local_copy=$CG_ROOT/local.bin

# read SHARE FILE: through the batch-oplock client, bytes compared
read_batch()
{
	/usr/bin/python3 "$tool" -p "$CG_PORT" -U "$CG_USER%$CG_PASS" \
		"//127.0.0.1/$1/$2" "$local_copy" 2>&1
}

for mode in direct dontneed; do
	f=k_$mode.bin
	head -c $((128 * MiB)) /dev/urandom >"$CG_SHARE/$f"
	cp "$CG_SHARE/$f" "$local_copy"
	cg_drop_cache "$CG_SHARE/$f"
	out=$(read_batch "ko_$mode" "$f")
	if [ "$?" = 77 ]; then
		cg_skip "[ko_$mode] a batch-oplock client" "$out"
		continue
	fi
	cg_expect "[ko_$mode] a batch-oplock client reads the right bytes" \
		grep -q "^ok " <<<"$out"
	cg_expect "[ko_$mode] smbd got a kernel oplock for it (a lease)" \
		grep -q "got kernel oplock on file $f" "$CG_LOG"
	cg_expect "[ko_$mode] the lease was never broken" \
		sh -c "! grep -q 'Got kernel oplock break message' '$CG_LOG'"
	cg_expect_le "[ko_$mode] what the copy left cached (MiB)" \
		$(($(cg_resident "$CG_SHARE/$f") / MiB)) 16
done
cg_expect "[ko_direct] no direct reads, and the summary says why" \
	grep -qE "k_direct.bin: size .*direct 0;.*fallbacks 1: smbd holds a kernel oplock" \
	"$CG_LOG"

# without an oplock (smbclient asks for none): direct as usual
f=plain.bin
head -c $((128 * MiB)) /dev/urandom >"$CG_SHARE/$f"
cg_drop_cache "$CG_SHARE/$f"
cg_smbclient ko_direct "get $f /dev/null" >/dev/null 2>&1
cg_expect "[ko_direct] a client without an oplock reads direct" \
	grep -qE "$f: size .*direct [1-9]" "$CG_LOG"
exit 0
