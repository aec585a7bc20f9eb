#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# direct mode never serves bytes older than the file, whoever changes it,
# on timestamps as coarse as any kernel's: ext4 with 128-byte inodes keeps
# whole seconds, on every kernel, so two changes within a second share a
# ctime (Debian's 6.1 and 6.12 do that within a 4 ms tick everywhere).
#   - every way smbd changes a file's bytes, from the client streaming it
#     (so in the smbd process that holds the prefetch): WRITE through
#     recvfile ("min receivefile size"; libsmbclient does not sign),
#     set-zero-data (fallocate), copy-chunk (copy_file_range), end of
#     file (ftruncate); the module must see each one (its level-10 line);
#   - a second client (another smbd process), a local process (unsynced
#     writes, several within one tick) and a truncate during a stream;
# every read compared with the file read locally at that moment.
. "$(dirname "$0")/../lib/script.sh" "direct mode on a filesystem of its own" "$@"


cg_smbd_init
cg_global "min receivefile size = 16384"
dir=$CG_ROOT/mnt/sec
if ! cg_mount_fs ext4 "$dir" 1G -I 128; then
	cg_skip "coherence on whole-second timestamps" "cannot make or" \
		"mount an ext4 with 128-byte inodes: $(tail -n 2 \
		"$CG_ROOT/log/mkfs-ext4.out" 2>/dev/null)"
	exit 0
fi
cg_share_at direct "$dir" "vfs objects = cacheguard" \
	"cacheguard:mode = direct"
cg_smbd_start || { cg_fail "smbd starts" "see above"; exit 1; }

c=$dir/c.bin
src=$dir/src.bin
head -c $((8 * MiB + 65536)) /dev/urandom >"$src"
head -c 4096 /dev/urandom >"$c"
cg_expect "the filesystem keeps whole-second timestamps ($(stat -c %z "$c"))" \
	test "$(stat -c %z "$c" | sed 's/.*\.\([0-9]*\) .*/\1/')" = 000000000

# summary NAME: the last close summary line of file NAME in the log
summary()
{
	grep -E " $1: size [0-9]+ read " "$CG_LOG" | tail -n 1
}

# fresh: a new 128 MiB c.bin, the SMB user's own, cold
fresh()
{
	head -c $((128 * MiB + 777)) /dev/urandom >"$c"
	chown "$CG_USER" "$c"
	sync
	cg_drop_cache "$c"
}

# Each of smbd's own paths, by the client that streams the file
for what in smbwrite:recvfile zerodata:fallocate \
	"copychunk:server-side copy" setsize:ftruncate; do
	mode=${what%%:*}
	hook=${what#*:}
	fresh
	before=$(grep -c "c.bin: $hook at " "$CG_LOG")
	if [ "$mode" = smbwrite ]; then
		out=$("$CG_BUILD/smb_direct_check" -p "$CG_PORT" \
			-U "$CG_USER%$CG_PASS" -s 5 smbwrite \
			"//127.0.0.1/direct/c.bin" "$c" 2>&1)
	else
		out=$("$CG_TOP/testsuite/tools/smb_write_paths.py" \
			-p "$CG_PORT" -U "$CG_USER%$CG_PASS" "$mode" \
			"//127.0.0.1/direct/c.bin" "$c" src.bin 2>&1)
	fi
	if [ $? -eq 77 ]; then
		cg_skip "$mode during a direct stream" "$out"
		continue
	fi
	cg_expect "$mode during a direct stream: the current bytes ($(tail \
		-n 1 <<<"$out"))" grep -q '^ok ' <<<"$out"
	cg_expect "$mode: the stream was direct" \
		grep -qE "direct [1-9]" <<<"$(summary c.bin)"
	cg_expect "$mode: the module saw each $hook" test \
		"$(grep -c "c.bin: $hook at " "$CG_LOG")" -gt "$before"
done

# Writers the module cannot see, and a truncate, racing the stream
for what in clientwrite localwrite tickwrite truncate; do
	fresh
	out=$("$CG_BUILD/smb_direct_check" -p "$CG_PORT" \
		-U "$CG_USER%$CG_PASS" -s 11 "$what" \
		"//127.0.0.1/direct/c.bin" "$c" 2>&1)
	cg_expect "$what during a direct stream: the current bytes ($(tail \
		-n 1 <<<"$out"))" grep -q '^ok ' <<<"$out"
	cg_expect "$what: the stream was direct" \
		grep -qE "direct [1-9]" <<<"$(summary c.bin)"
done

# A file left alone for longer than a timestamp tick (2 s for whole
# seconds) is served from the prefetch again
fresh
sleep 3
before=$(grep -cE "direct stream done: [1-9][0-9]* hits" "$CG_LOG")
cg_smbclient direct "get c.bin /dev/null" >/dev/null 2>&1
cg_expect "a quiet file is served from the prefetch" test \
	"$(grep -cE "direct stream done: [1-9][0-9]* hits" "$CG_LOG")" \
	-gt "$before"
rm -f "$c" "$src"
cg_expect "no smbd panicked" test "$(grep -c PANIC "$CG_LOG")" = 0
exit 0
