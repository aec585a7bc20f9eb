#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The per-process counters: readable while smbd serves a copy to an
# unprivileged client, with the documented command
# (tools/cacheguard-status); the files are root's alone (0600 in a 0700
# directory, one an older version made 0755 tightened: they say which
# files a client's reads found cached), and those of exited processes go
# away.
set -u
. "$(dirname "$0")/../lib/check.sh"
cg_need_root "status counters"
. "$(dirname "$0")/../lib/smbd.sh"
cg_enter_namespace "$0" "$@"

MiB=1048576
status=$CG_TOP/tools/cacheguard-status
cg_smbd_init
cg_share guard "vfs objects = cacheguard" "cacheguard:mode = dontneed"
cg_share off "vfs objects = cacheguard" "cacheguard:mode = off"
# the directory as an older version made it
mkdir -p -m 0755 "$CG_ROOT/state/cacheguard"
cg_smbd_start || { cg_fail "smbd starts" "see above"; exit 1; }
head -c $((256 * MiB)) /dev/urandom >"$CG_SHARE/big.bin"
cg_drop_cache "$CG_SHARE/big.bin"

# A client that copies, then stays connected for a while
{ echo "get big.bin /dev/null"; sleep 4; echo quit; } |
	smbclient //127.0.0.1/guard -p "$CG_PORT" -U "$CG_USER%$CG_PASS" \
	>/dev/null 2>&1 &
client=$!
# Until the copy is done (the client then idles for 4 s): the file is
# rewritten at least once a second while the stream runs
for _ in $(seq 1 60); do
	sleep 0.5
	live=$("$status" -s "$CG_CONF" 2>&1 | awk '$2 == "live"')
	[ "$(echo "$live" | awk '{print int($6)}')" = 256 ] && break
done
echo "$live"
cg_expect "a live smbd shows one stream" \
	test "$(echo "$live" | awk '{print $4}')" = 1
cg_expect "a live smbd shows 256 MiB read and dropped" \
	test "$(echo "$live" | awk '{print int($6) "/" int($10)}')" = "256/256"
dir=$CG_ROOT/state/cacheguard
pid=$(echo "$live" | awk '{print $1}')
cg_expect "the status file is root's, mode 0600, while $CG_USER streams" \
	test "$(stat -c '%U %a' "$dir/$pid" 2>&1)" = "root 600"
cg_expect "the status directory made 0755 before is root's, 0700, now" \
	test "$(stat -c '%U %a' "$dir" 2>&1)" = "root 700"
# (the state directory above it is 0755, as cg_smbd_init makes it)
if su -s /bin/sh "$CG_USER" -c "cat '$dir/$pid'" >/dev/null 2>&1; then
	cg_fail "$CG_USER cannot read the status file" "it could"
else
	cg_pass "$CG_USER cannot read the status file"
fi
# a copy the user can run wherever the checkout is (CI's may be 0700)
install -m 0755 "$status" "$CG_ROOT/cacheguard-status"
out=$(su -s /bin/sh "$CG_USER" -c "'$CG_ROOT/cacheguard-status' -d '$dir'" \
	2>&1)
cg_expect "cacheguard-status as $CG_USER says it needs root ($out)" \
	grep -q "run as root" <<<"$out"
wait "$client"
sleep 0.5
cg_expect "the status file holds the raw byte counts" \
	grep -qx "bytes_dropped $((256 * MiB))" "$dir/$pid"
out=$("$status" -s "$CG_CONF" 2>&1)
cg_expect "an exited smbd is not listed as live" \
	test -z "$(echo "$out" | awk '$2 == "live"')"
cg_expect "cacheguard-status removes the file of an exited smbd" \
	test ! -e "$dir/$pid"

# Left-overs of exited processes, a pid now used by another process, and
# a symlink where a temporary file would go: the next smbd process that
# writes its file removes them, and writes through no link
dead=$(( $(cat /proc/sys/kernel/pid_max) - 1 ))
while kill -0 "$dead" 2>/dev/null; do dead=$((dead - 1)); done
printf 'pid %s\nstart 1\nstreams 7\n' "$dead" >"$dir/$dead"
printf 'pid %s\nstart 1\nstreams 7\n' "$$" >"$dir/$$"
echo target >"$CG_ROOT/target"
ln -s "$CG_ROOT/target" "$dir/$((dead - 1)).tmp"
cg_smbclient guard "ls" >/dev/null 2>&1
cg_expect "a new smbd process removes files of exited processes" \
	test ! -e "$dir/$dead"
cg_expect "... and of a reused pid (another start time)" test ! -e "$dir/$$"
cg_expect "... and a stale temporary symlink, not its target" \
	test ! -L "$dir/$((dead - 1)).tmp" -a "$(cat "$CG_ROOT/target")" = target
# besides the server's lock files: the direct budget, the streams and
# the readahead budget
cg_expect "the directory keeps only live processes' files" \
	test "$(ls "$dir" | grep -cvx -e budget -e streams -e readahead)" -le 1

# mode = off: no state and no system calls, not even the status file of
# the process that serves the share
"$status" -s "$CG_CONF" >/dev/null 2>&1	# removes exited processes' files
before=$(ls "$dir" | sort)
{ echo ls; sleep 2; echo quit; } |
	smbclient //127.0.0.1/off -p "$CG_PORT" -U "$CG_USER%$CG_PASS" \
	>/dev/null 2>&1 &
client=$!
sleep 1
cg_expect "a connected mode = off share writes no status file" \
	test "$(ls "$dir" | sort)" = "$before"
wait "$client"
exit 0
