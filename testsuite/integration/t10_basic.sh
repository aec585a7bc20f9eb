#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The module loads into Debian's smbd, passes bytes through unchanged,
# refuses a share with a bad option and logs through its debug class.
. "$(dirname "$0")/../lib/script.sh" "basic" "$@"

cg_smbd_init
cg_share plain
cg_share guard "vfs objects = cacheguard" "cacheguard:mode = dontneed"
cg_share badmode "vfs objects = cacheguard" "cacheguard:mode = fast"
cg_share badsize "vfs objects = cacheguard" "cacheguard:window = 8Q"
cg_share typo "vfs objects = cacheguard" "cacheguard:windw = 4M" \
	"cacheguard:Min FileSize = 32M"
cg_smbd_start || { cg_fail "smbd starts" "see above"; exit 1; }

src=$CG_ROOT/src
mkdir -p "$src" "$CG_ROOT/back"
for size in 0 1 4095 4097 $((1048576 + 1)) $((300 * 1048576 + 123)); do
	head -c "$size" /dev/urandom >"$src/f$size"
	for share in plain guard; do
		name="put+get $size bytes through [$share]"
		rm -f "$CG_SHARE/f$size" "$CG_ROOT/back/f$size"
		if ! cg_smbclient "$share" \
			"put $src/f$size f$size; get f$size $CG_ROOT/back/f$size" \
			>"$CG_ROOT/log/client.out" 2>&1; then
			cg_fail "$name" "$(tail -n 2 "$CG_ROOT/log/client.out")"
		elif ! cmp -s "$src/f$size" "$CG_SHARE/f$size"; then
			cg_fail "$name" "the file on the share differs"
		elif ! cmp -s "$src/f$size" "$CG_ROOT/back/f$size"; then
			cg_fail "$name" "the file read back differs"
		else
			cg_pass "$name"
		fi
	done
done

for share in badmode badsize; do
	if cg_smbclient "$share" "ls" >/dev/null 2>&1; then
		cg_fail "[$share] refuses the connect" "it connected"
	else
		cg_pass "[$share] refuses the connect"
	fi
done
cg_expect "the log names mode, the bad value and the valid values" \
	grep -q "invalid value 'fast' for cacheguard:mode; valid values: auto, dontcache, direct, dontneed, off" "$CG_LOG"
cg_expect "the log names window and its bad value" \
	grep -q "invalid value '8Q' for cacheguard:window" "$CG_LOG"
cg_expect "[typo] connects: an unknown option is not a bad value" \
	cg_smbclient typo "ls"
cg_expect "the misspelt option is named at level 0 with the valid names" \
	grep -q "share \[typo\]: unknown option 'cacheguard:windw' is ignored; cacheguard options are: mode, min file size, stream trigger, window," "$CG_LOG"
cg_expect "a name Samba matches (case, spaces) is not called unknown" \
	test "$(grep -c "unknown option" "$CG_LOG")" = 1
cg_expect "... and takes effect" \
	grep -q "share \[typo\]: mode=auto min file size=33554432" "$CG_LOG"
cg_expect "effective options logged at connect through the debug class" \
	grep -q "share \[guard\]: mode=dontneed min file size=16777216" "$CG_LOG"
cg_expect "debug level 10 of the cacheguard class reaches the log" \
	grep -q "cacheguard_track.*tracking, size" "$CG_LOG"
exit 0
