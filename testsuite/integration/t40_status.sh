#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The per-process counters: readable while smbd serves a copy, and after,
# with the documented command (tools/cacheguard-status).
set -u
. "$(dirname "$0")/../lib/check.sh"
cg_need_root "status counters"
. "$(dirname "$0")/../lib/smbd.sh"
cg_enter_namespace "$0" "$@"

MiB=1048576
status=$CG_TOP/tools/cacheguard-status
cg_smbd_init
cg_share guard "vfs objects = cacheguard" "cacheguard:mode = dontneed"
cg_smbd_start || { cg_fail "smbd starts" "see above"; exit 1; }
head -c $((256 * MiB)) /dev/urandom >"$CG_SHARE/big.bin"
cg_drop_cache "$CG_SHARE/big.bin"

# A client that copies, then stays connected for a while
{ echo "get big.bin /dev/null"; sleep 4; echo quit; } |
	smbclient //127.0.0.1/guard -p "$CG_PORT" -U "$CG_USER%$CG_PASS" \
	>/dev/null 2>&1 &
client=$!
for _ in $(seq 1 30); do
	sleep 0.5
	live=$("$status" -s "$CG_CONF" 2>&1 | awk '$2 == "live"')
	[ -n "$live" ] && [ "$(echo "$live" | awk '{print $4}')" -ge 1 ] &&
		break
done
echo "$live"
cg_expect "a live smbd shows one stream" \
	test "$(echo "$live" | awk '{print $4}')" = 1
cg_expect "a live smbd shows 256 MiB read and dropped" \
	test "$(echo "$live" | awk '{print int($6) "/" int($10)}')" = "256/256"
wait "$client"
sleep 0.5
out=$("$status" -s "$CG_CONF" 2>&1)
cg_expect "an exited smbd is not listed as live" \
	test -z "$(echo "$out" | awk '$2 == "live"')"
out=$("$status" -a -s "$CG_CONF" 2>&1)
echo "$out"
cg_expect "-a keeps the exited process's last counters" \
	test -n "$(echo "$out" | awk '$2 == "exited" && $4 == 1')"
cg_expect "the status file holds the raw byte counts" \
	grep -qx "bytes_dropped $((256 * MiB))" "$CG_ROOT"/state/cacheguard/[0-9]*
exit 0
