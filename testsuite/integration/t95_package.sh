#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The packaging: the RPM spec parses and carries VERSION; the Debian
# package is (re)built when missing or older than its sources, then
# testsuite/package-test installs it, copies through a share served by
# the installed module and removes it again, leaving the system as it
# found it; testsuite/upgrade-test installs it with apt in an overlay of
# the system and takes samba through a security update (the add-on
# stays and works), its next point release (upgraded, nothing kept
# back; the add-on stays and passes calls through) and its next series
# (kept back: another VFS interface).
set -u
. "$(dirname "$0")/../lib/check.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
version=$(tr -d '[:space:]' <"$top/VERSION")
spec=$top/packaging/rpm/samba-vfs-cacheguard.spec

# The RPM spec: needs neither root nor an RPM system
spec_version=$(sed -nE 's/^Version:[[:space:]]*([^[:space:]]+).*/\1/p' "$spec")
if [ "$spec_version" = "$version" ]; then
	cg_pass "the RPM spec's Version is $version, as in VERSION"
else
	cg_fail "the RPM spec's Version is $version, as in VERSION" \
		"it is '$spec_version'"
fi
if ! command -v rpmspec >/dev/null; then
	cg_skip "rpmspec --parse of the RPM spec" \
		"rpmspec is not installed (Debian: apt-get install rpm)"
elif out=$(rpmspec --parse "$spec" 2>&1 >/dev/null) &&
	rpmspec --parse --define 'fedora 40' \
		--define 'samba_version 2:4.20.1-1.fc40' "$spec" 2>/dev/null |
		grep -qE '^Requires: +samba.* = 2:4\.20\.1-1\.fc40$'; then
	cg_pass "rpmspec --parse of the RPM spec (Requires: samba = the exact build)"
else
	cg_fail "rpmspec --parse of the RPM spec" \
		"$(echo "${out:-no 'Requires: samba = <samba_version>' line}" |
			tail -n 3)"
fi

if [ "$(id -u)" != 0 ]; then
	cg_skip "Debian package" "needs root (dpkg -i, dpkg -r and a private smbd)"
	exit 0
fi

# The .deb of this version, rebuilt when a source is newer than it or it
# was built for another samba
deb=$("$top/packaging/build-deb" --name)
samba=$(dpkg-query -W -f='${Version}' samba)
why=
if [ ! -f "$deb" ]; then
	why="no $deb"
elif [ "$(dpkg-deb -f "$deb" Samba-Built-Against)" != "$samba" ]; then
	why="it was built for another samba"
elif newer=$(find "$top/VERSION" "$top/wscript" "$top/README.md" \
	"$top/source" "$top/modules" "$top/docs" "$top/packaging/debian" \
	"$top/packaging/samba-depends" \
	-type f -newer "$deb" 2>/dev/null | head -n 1) && [ -n "$newer" ]; then
	why="${newer#"$top"/} is newer"
fi
if [ -n "$why" ]; then
	echo "building the package ($why)"
	log=$(mktemp)
	# the runner runs the unit tests and t05_docs itself
	if DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-} nocheck" \
		"$top/packaging/build-deb" >"$log" 2>&1; then
		cg_pass "packaging/build-deb builds ${deb#"$top"/}"
		rm -f "$log"
	else
		cg_fail "packaging/build-deb builds ${deb#"$top"/}" \
			"$(tail -n 5 "$log")"
		rm -f "$log"
		exit 0
	fi
fi

# lintian on the package: no error and no warning; the tags kept are
# overridden, each with its reason, in packaging/debian/*.lintian-overrides
if command -v lintian >/dev/null; then
	out=$(lintian --tag-display-limit 0 "$deb" 2>/dev/null)
	echo "$out" | sed -n '1,20p'
	cg_expect "lintian $(lintian --version | awk '{print $2}'): no error" \
		sh -c "! grep -q '^E:' <<'EOF'
$out
EOF"
	cg_expect "lintian: no warning (the kept ones are overridden)" \
		sh -c "! grep -q '^W:' <<'EOF'
$out
EOF"
else
	cg_skip "lintian on the package" "lintian is not installed (make deps)"
fi

bash "$top/testsuite/package-test" "$deb" || true
bash "$top/testsuite/upgrade-test" "$deb" || true
exit 0
