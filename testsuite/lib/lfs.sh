# SPDX-License-Identifier: GPL-3.0-or-later
#
# Calls with a 32-bit off_t (issue 47). On a 32-bit build glibc's headers
# give each function that takes or returns an off_t (pread, preadv2,
# mmap, fstat, open, fcntl, posix_fadvise, lseek, ...) a second symbol
# for _FILE_OFFSET_BITS=64 (pread64, preadv64v2, mmap64, fstat64, open64,
# fcntl64, posix_fadvise64, lseek64, ...): a declaration then carries an
# asm label naming it. An object compiled without the macro calls the
# first, which truncates every offset past 2 GiB and fails with
# EOVERFLOW on a file past it.
#
#   cg_lfs_names CC-ARG... -- SOURCE...
#	the names whose symbol _FILE_OFFSET_BITS=64 changes, one a line:
#	the SOURCEs preprocessed by $CC (gcc) with the arguments (-m32, -I...)
#	with the macro and without it, every label the first gives and
#	the second does not (scanf's __isoc99_scanf is the same in both).
#	Derived from the headers the sources include, so that a call added
#	later is judged by its own declaration, not by a list kept here.
#   cg_lfs_calls NAMES OBJECT...
#	"OBJECT: NAME" for each undefined symbol of an OBJECT (nm -u)
#	that is one of the names in file NAMES; nothing when none is

# cg_lfs_labels CC-ARG... -- SOURCE...: "name label" per declaration
# with an asm label (glibc's __REDIRECT), one a line
cg_lfs_labels()
{
	local args=() src

	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	for src in "$@"; do
		${CC:-gcc} "${args[@]}" -E -P "$src" || return 1
	done |
		tr '\n' ' ' | tr ';{}' '\n\n\n' |
		grep -oE '[A-Za-z_][A-Za-z0-9_]* *\([^;]*__asm__ *\( *"" "[A-Za-z0-9_]+"' |
		sed -E 's/^([A-Za-z0-9_]+) *\(.*"" "([A-Za-z0-9_]+)"$/\1 \2/' |
		awk '$1 !~ /^__(attribute|extension|typeof|asm)__$/' | sort -u
}

cg_lfs_names()
{
	local args=() with without

	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	with=$(cg_lfs_labels "${args[@]}" -D_FILE_OFFSET_BITS=64 "$@") ||
		return 1
	without=$(cg_lfs_labels "${args[@]}" "$@") || return 1
	# a name labelled with the macro, and not so (or not at all) without
	awk 'NR == FNR { plain[$1] = $2; next }
	     $2 != $1 && plain[$1] != $2 { print $1 }' \
		<(echo "$without") <(echo "$with") | sort -u
}

cg_lfs_calls()
{
	local names=$1 o
	shift

	for o in "$@"; do
		# a linked object's names carry their version (pread@GLIBC_2.1)
		nm -u "$o" | awk -v o="$o" 'NR == FNR { bad[$1] = 1; next }
			{ sub(/@.*/, "", $NF) } ($NF in bad) { print o ": " $NF }' \
			"$names" -
	done
}
