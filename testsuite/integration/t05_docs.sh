#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The docs and the code agree: every option in cg_options[] (as
# build/cgoptions prints it) is documented in the man page with its
# default and in README.md's option table with its default; every option
# either documents exists in the code; every "cacheguard:NAME = VALUE"
# example in them is accepted by the parser; the man page carries the
# version in VERSION. Needs no root and no smbd.
set -u
. "$(dirname "$0")/../lib/check.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
xml=$top/docs/vfs_cacheguard.8.xml
readme=$top/README.md
cgoptions=$top/build/cgoptions

for f in "$cgoptions" "$xml" "$readme"; do
	if [ ! -e "$f" ]; then
		cg_fail "docs inputs" "${f#"$top"/} is missing (run make)"
		exit 0
	fi
done

# name<TAB>default, from the code, in table order
declare -A code
names=()
while IFS=$'\t' read -r name def; do
	code[$name]=$def
	names+=("$name")
done < <("$cgoptions")
if [ ${#names[@]} -eq 0 ]; then
	cg_fail "docs inputs" "build/cgoptions printed no options"
	exit 0
fi

# The man page, tags stripped line by line. Each <term> opens an entry;
# a "Default:" line belongs to the entry above it. Comments are skipped.
# Prints: T<TAB>name for a term, D<TAB>term<TAB>name<TAB>value for a default
man_entries()
{
	awk '
	/<!--/ { incomment = 1 }
	incomment { if ($0 ~ /-->/) incomment = 0; next }
	function strip(s) {
		gsub(/<[^>]*>/, "", s)
		gsub(/^[ \t]+|[ \t]+$/, "", s)
		return s
	}
	/<term>cacheguard:/ {
		t = strip($0)
		sub(/^cacheguard:/, "", t)
		sub(/ = .*/, "", t)
		term = t
		print "T\t" term
		next
	}
	/Default:/ {
		d = strip($0)
		if (d ~ /^Default: cacheguard:[^=]* = /) {
			sub(/^Default: cacheguard:/, "", d)
			n = d; sub(/ = .*/, "", n)
			v = d; sub(/^[^=]* = /, "", v)
			print "D\t" term "\t" n "\t" v
		}
	}' "$xml"
}

declare -A man_term man_def
while IFS=$'\t' read -r kind a b c; do
	case $kind in
	T) man_term[$a]=1 ;;
	D) [ "$a" = "$b" ] && man_def[$a]=$c ;;
	esac
done < <(man_entries)

# README.md's option table: | `cacheguard:NAME` | `DEFAULT` | ...
declare -A readme_def
while IFS=$'\t' read -r name def; do
	readme_def[$name]=$def
done < <(sed -nE 's/^\| *`cacheguard:([^`]+)` *\| *`([^`]*)` *\|.*/\1\t\2/p' \
	"$readme")

# says WHAT DEFAULT DOC MISSING [GIVEN]: passes WHAT when DOC gives the
# DEFAULT; fails it with MISSING when DOC gives none (no GIVEN), or with
# what DOC says instead
says()
{
	if [ $# -lt 5 ]; then
		cg_fail "$1" "$4"
	elif [ "$5" != "$2" ]; then
		cg_fail "$1" "$3 says '$5'"
	else
		cg_pass "$1"
	fi
}

# Every option the code parses is documented, with its default
for name in "${names[@]}"; do
	def=${code[$name]}
	what="man page documents cacheguard:$name, default $def"
	if [ -z "${man_term[$name]:-}" ]; then
		cg_fail "$what" "no <term>cacheguard:$name = ...</term> entry"
	else
		says "$what" "$def" "the man page" \
			"its entry has no 'Default: cacheguard:$name = ...' line" \
			${man_def[$name]+"${man_def[$name]}"}
	fi
	says "README.md option table lists cacheguard:$name, default $def" \
		"$def" README.md "no row | \`cacheguard:$name\` | ... |" \
		${readme_def[$name]+"${readme_def[$name]}"}
done

# Every documented option exists in the code
for name in "${!man_term[@]}"; do
	if [ -z "${code[$name]+set}" ]; then
		cg_fail "man page option cacheguard:$name exists in the code" \
			"cg_options[] has no '$name'"
	fi
done
for name in "${!readme_def[@]}"; do
	if [ -z "${code[$name]+set}" ]; then
		cg_fail "README.md option cacheguard:$name exists in the code" \
			"cg_options[] has no '$name'"
	fi
done

# Every example line parses: "Example:" lines and smb.conf listings
# (a <term> line shows a placeholder, not a value)
examples()
{
	sed -e '/<term>/d' -e 's/<[^>]*>//g' "$1" |
		sed -nE 's/^[[:space:]]*(Example: )?cacheguard:([a-z ]+) = ([^[:space:]].*[^[:space:]]|[^[:space:]])[[:space:]]*$/\2\t\3/p'
}
for doc in "$xml" "$readme"; do
	label=${doc#"$top"/}
	while IFS=$'\t' read -r name value; do
		what="$label example 'cacheguard:$name = $value' is valid"
		if out=$("$cgoptions" check "$name" "$value" 2>&1); then
			cg_pass "$what"
		else
			cg_fail "$what" "$out"
		fi
	done < <(examples "$doc")
done

version=$(cat "$top/VERSION")
# Every row of packaging/releases (the samba builds the module is built,
# tested and published for) is in README.md's first table, with a
# package version of build-deb's scheme for its samba (VERSION-1+deb<N>
# +s<x.y.z>), and named in the man page; the dependency README.md shows
# is what packaging/samba-depends makes
while read -r row base debian from; do
	line=$(grep -m 1 "^| \`$row\`" "$readme")
	if [ -z "$line" ]; then
		cg_fail "README.md lists the samba of $row" \
			"no row | \`$row\` | ... | in its first table"
	else
		samba=$(awk -F'|' '{ gsub(/ /, "", $3); print $3 }' <<<"$line")
		package=$(awk -F'|' '{ gsub(/ /, "", $4); print $4 }' <<<"$line")
		up=$(sed -nE 's/^([0-9]+:)?([0-9]+\.[0-9]+\.[0-9]+).*/\2/p' \
			<<<"$samba")
		want=$version-1+deb$debian+s$up
		if [ "$package" = "$want" ]; then
			cg_pass "README.md lists $row: samba $samba, package $want"
		else
			cg_fail "README.md lists $row's package $want" \
				"it says '$package' (samba '$samba')"
		fi
	fi
	if grep -q "<literal>$row</literal>" "$xml"; then
		cg_pass "the man page names $row"
	else
		cg_fail "the man page names $row" "no <literal>$row</literal>"
	fi
done < <(awk '!/^#/ && NF' "$top/packaging/releases")
dep=$("$top/packaging/samba-depends" 2:4.17.12+dfsg-0+deb12u4)
cg_expect "README.md shows the dependency samba-depends makes: $dep" \
	grep -qF "$dep" "$readme"

# Each man page names the version it documents
for page in "$top"/docs/*.8.xml; do
	name=$(basename "$page" .xml)
	stale=$(grep -nE '<refmiscinfo class="version">|<productnumber>|part of version' \
		"$page" | grep -vF -- "$version" | tr -s '\n\t' '  ')
	if [ -z "$stale" ]; then
		cg_pass "$name: version $version, as in VERSION"
	else
		cg_fail "$name: version $version, as in VERSION" "stale: $stale"
	fi
done
exit 0
