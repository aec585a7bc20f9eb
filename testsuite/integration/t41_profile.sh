#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# smbd's profile (smbd profiling level = on, smbstatus --profile) counts
# the reads and writes the module does itself, as vfs_default counts its
# own: a cold 64 MiB get through a dontcache and a direct share adds at
# least 64 MiB to the pread bytes (syscall_asys_pread and syscall_pread),
# as on the plain share; a 64 MiB upload through dontcache adds 64 MiB to the
# pwrite bytes. The module of 3a655fa counted none of its own.
. "$(dirname "$0")/../lib/script.sh" "smbd's profile" "$@"

SIZE=$((64 * MiB))
small=("cacheguard:min file size = 1M" "cacheguard:stream trigger = 1M")
cg_smbd_init
cg_global "smbd profiling level = on"
cg_share plain
cg_share dontcache "vfs objects = cacheguard" "cacheguard:mode = dontcache" \
	"${small[@]}"
cg_share direct "vfs objects = cacheguard" "cacheguard:mode = direct" \
	"${small[@]}"
cg_smbd_start || { cg_fail "smbd starts" "see above"; exit 1; }

big=$CG_SHARE/big.bin
head -c "$SIZE" /dev/urandom >"$big"
chmod 0644 "$big"

# counted KIND: the bytes smbd's profile has for KIND (pread or pwrite),
# async and sync together, once the processes wrote their counters
counted()
{
	sleep 2
	smbstatus -s "$CG_CONF" --profile 2>/dev/null | awk -v k="$1" '
		$1 == "syscall_asys_" k "_bytes:" || $1 == "syscall_" k "_bytes:" {
			n += $2 }
		END { print n + 0 }'
}

before=$(counted pread)
cg_expect_ge "smbd's profile is on" "$(smbstatus -s "$CG_CONF" --profile \
	2>/dev/null | grep -c '_count:')" 10
for share in plain dontcache direct; do
	cg_drop_cache "$big"
	cg_smbclient "$share" "get big.bin $CG_ROOT/back.bin" \
		>"$CG_ROOT/get.out" 2>&1
	cg_expect "[$share] get is byte-identical" cmp "$big" "$CG_ROOT/back.bin"
	now=$(counted pread)
	cg_expect_ge "[$share] the profile counts the get's read bytes" \
		$((now - before)) "$SIZE"
	before=$now
done
cg_expect "the direct share read direct" \
	test "$(grep -cE 'big.bin: size .* direct [1-9]' "$CG_LOG")" = 1

before=$(counted pwrite)
cg_smbclient dontcache "put $big up.bin" >"$CG_ROOT/put.out" 2>&1
cg_expect "[dontcache] put is byte-identical" cmp "$big" "$CG_SHARE/up.bin"
cg_expect "[dontcache] the upload went uncached" \
	grep -qE "up.bin: written $SIZE mode dontcache; .*uncached [1-9]" \
	"$CG_LOG"
cg_expect_ge "[dontcache] the profile counts the put's write bytes" \
	$(($(counted pwrite) - before)) "$SIZE"
