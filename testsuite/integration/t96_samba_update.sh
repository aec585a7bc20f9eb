#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A samba the module was not built for: the module's load-time rule. The
# module runs only in the smbd of the upstream release it was built for
# (its SAMBA_VERSION_STRING); in any other it registers a pass-through
# that logs why at level 0, and the share keeps serving, unprotected.
# The other smbd is this one, and the module a copy of this build whose
# recorded version is another point release of the series (the version
# string patched in the binary, same length): smbd checks nothing else
# before it loads a module. The module of 00b5bb4 refused to load: every
# tree connect to a share naming it failed.
. "$(dirname "$0")/../lib/script.sh" "samba update" "$@"

module=$CG_MODULE
running=$(smbd -V | sed -n 's/^Version //p')
# another point release of the same series, as long as the running one
other=$(echo "$running" | awk -F. -v OFS=. '{
	p = $3; n = p + 0; sub(/^[0-9]+/, "", p)
	$3 = ((n % 10 == 9) ? n - 1 : n + 1) p; print }')
if [ -z "$running" ] || [ "${#other}" != "${#running}" ] ||
	[ "$other" = "$running" ]; then
	cg_fail "another version string of the same length" \
		"smbd -V says '$running', made '$other'"
	exit 0
fi
keep=$(mktemp -d /tmp/cacheguard-update.XXXXXX)
patched=$keep/cacheguard.so
RUNNING=$running OTHER=$other perl -0777 -pe \
	's/\Q$ENV{RUNNING}\E\0/$ENV{OTHER}\0/g' "$module" >"$patched"
cg_expect "the copy records Samba $other, not $running" \
	sh -c "grep -qaF '$other' '$patched' &&
		! cmp -s '$module' '$patched'"

# copy SHARE: the file's bytes through the share to $CG_ROOT/got
copy()
{
	rm -f "$CG_ROOT/got"
	cg_drop_cache "$CG_SHARE/big.bin"
	cg_smbclient "$1" "get big.bin $CG_ROOT/got" >"$CG_ROOT/client.log" 2>&1
}

run()
{
	local what=$1

	log=$keep/smbd.$3.log

	CG_ROOT= CG_SHARE= CG_PORT=
	CG_MODULE=$2
	cg_smbd_init
	cg_share guard "vfs objects = cacheguard" "cacheguard:mode = dontneed" \
		"cacheguard:min file size = 16M"
	if ! cg_smbd_start; then
		cg_fail "$what: smbd starts" "see above"
		return
	fi
	head -c $((64 * MiB)) /dev/urandom >"$CG_SHARE/big.bin"
	if copy guard; then
		cg_pass "$what: a client copies through the share"
	else
		cg_fail "$what: a client copies through the share" \
			"$(tail -n 2 "$CG_ROOT/client.log")"
	fi
	resident=$(cg_resident "$CG_SHARE/big.bin" 2>/dev/null || echo 0)
	echo "$what: $((resident / MiB)) MiB of the copied file cached"
	RESIDENT=$resident
	KEPT=$(cg_kept "$CG_SHARE/big.bin" 2>/dev/null || echo 0)
	# (cmp reads the file: after the residency)
	cg_expect "$what: the bytes are right" \
		cmp -s "$CG_SHARE/big.bin" "$CG_ROOT/got"
	cp "$CG_LOG" "$log" 2>/dev/null
	cg_smbd_cleanup
}

# The build as it is, for the contrast: it drops the copy
run "this Samba's build" "$module" this
cg_expect_le "this Samba's build: the copy left out of the cache (MiB)" \
	$((RESIDENT / MiB)) 16
cg_expect "this Samba's build: no pass-through line" \
	sh -c "! grep -q 'passes every call through' '$log'"

# The build for another point release: serves, unprotected, and says so
run "built for $other" "$patched" other
cg_expect_ge "built for $other: the file stays cached, as without it (MiB)" \
	$((KEPT / MiB)) 60
rm -f "$patched"
line=$(grep -h "passes every call through" "$log" |
	head -n 1)
echo "$line"
cg_expect "built for $other: smbd's log says why, at level 0" \
	grep -q "built for Samba $other .*this smbd is $running" <<<"$line"
cg_expect "built for $other: the log line says what to do" \
	grep -q 'make deb.*remove cacheguard from "vfs objects"' <<<"$line"
[ -n "${CG_KEEP:-}" ] || rm -rf "$keep"
exit 0
