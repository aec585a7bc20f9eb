#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The module's lock files (the direct memory budget, the streams and
# readahead files) live only where nobody but root can create, replace
# or hold them: a directory in the state directory that is another
# user's, or writable by group or others, is refused with one line at
# level 0, and the copies go on right without lock files; a root-owned
# one is used and kept 0700.
. "$(dirname "$0")/../lib/script.sh" "the state directory" "$@"

cg_smbd_init
cg_share direct "vfs objects = cacheguard" "cacheguard:mode = direct"
cg_smbd_start || { cg_fail "smbd starts" "see above"; exit 1; }
dir=$CG_ROOT/state/cacheguard
big=$CG_SHARE/big.bin
head -c $((64 * MiB)) /dev/urandom >"$big"
chmod 0644 "$big"

# copy: a cold copy through the direct share, byte-compared
copy()
{
	rm -f "$CG_ROOT/back.bin"
	cg_drop_cache "$big"
	cg_smbclient direct "get big.bin $CG_ROOT/back.bin" >/dev/null 2>&1 &&
		cmp -s "$big" "$CG_ROOT/back.bin"
}

# the client's own user could hold every lock file of the server
mkdir -p "$dir"
chown "$CG_USER" "$dir"
chmod 0700 "$dir"
cg_expect "a directory of the client's user: the copy is right" copy
cg_expect "... no lock file was made there" test ! -e "$dir/budget"
cg_expect "... and the log says why, at level 0" \
	grep -q "$dir is not owned by root (uid $(id -u "$CG_USER"), mode 0700): cacheguard keeps no lock files there" \
	"$CG_LOG"

# root's, but anybody may create files in it
chown root "$dir"
chmod 0777 "$dir"
: >"$CG_LOG"
cg_expect "a directory writable by others: the copy is right" copy
cg_expect "... no lock file was made there" test ! -e "$dir/budget"
cg_expect "... and the log says why" \
	grep -q "$dir is writable by group or others (uid 0, mode 0777)" \
	"$CG_LOG"

# the state directory itself, writable by others
chmod 0755 "$dir"
chmod 0777 "$CG_ROOT/state"
cg_expect "a state directory writable by others: the copy is right" copy
cg_expect "... no lock file was made below it" test ! -e "$dir/budget"
chmod 0755 "$CG_ROOT/state"

# root's and 0755: used, and tightened to 0700
cg_expect "a directory of root's: the copy is right" copy
cg_expect "... the budget file is there, root's" \
	test "$(stat -c %U "$dir/budget" 2>/dev/null)" = root
cg_expect "... and the directory is 0700 now" \
	test "$(stat -c %a "$dir")" = 700
exit 0
