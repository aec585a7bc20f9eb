# SPDX-License-Identifier: GPL-3.0-or-later
#
# Result lines the runner counts: "PASS: name", "FAIL: name: why",
# "SKIPPED: name: why". A script that dies before reporting counts as
# a failure in the runner.

cg_pass()
{
	echo "PASS: $1"
}

cg_fail()
{
	echo "FAIL: $1: $2"
	CG_FAILED=1
}

cg_skip()
{
	local name=$1
	shift
	echo "SKIPPED: $name: $*"
}

# cg_expect NAME COMMAND...: pass when the command succeeds
cg_expect()
{
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		cg_pass "$name"
	else
		cg_fail "$name" "'$*' failed: $(echo "$out" | tail -n 3)"
	fi
}

# cg_expect_le NAME VALUE LIMIT, cg_expect_ge NAME VALUE LIMIT: numeric
# bounds (VALUE <= LIMIT, VALUE >= LIMIT); a VALUE that is no whole
# number (a reading that failed, empty) fails them
cg_expect_le()
{
	cg_expect_bound "$1" "$2" -le "$3" "<=" ">"
}

cg_expect_ge()
{
	cg_expect_bound "$1" "$2" -ge "$3" ">=" "<"
}

# cg_expect_bound NAME VALUE TEST-OP LIMIT HOLDS-TEXT BROKEN-TEXT
cg_expect_bound()
{
	if ! [[ "$2" =~ ^[0-9]+$ ]]; then
		cg_fail "$1" "no figure: the reading is '$2'"
	elif [ "$2" "$3" "$4" ]; then
		cg_pass "$1 ($2 $5 $4)"
	else
		cg_fail "$1" "$2 $6 $4"
	fi
}

# Scripts needing root call this first
cg_need_root()
{
	if [ "$(id -u)" != 0 ]; then
		cg_skip "$1" "needs root (a mount namespace and a bind mount" \
			"over smbd's modules dir)"
		exit 0
	fi
}

# cg_need_command NAME COMMAND WHY: without COMMAND on PATH, "SKIPPED:
# NAME: WHY" and the script ends
cg_need_command()
{
	if ! command -v "$2" >/dev/null; then
		cg_skip "$1" "$3"
		exit 0
	fi
}

# cg_cpu_slot: wait until fewer of this shell's background jobs run than
# the machine has cores, so that single-threaded CPU-bound checks
# (valgrind, the fuzzers) started in the background use every core
cg_cpu_slot()
{
	while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do
		wait -n
	done
}

# cg_per_core OUT NAME COMMAND...: COMMAND in the background once a core
# is free (cg_cpu_slot); its output in OUT/NAME.log, its exit status and
# wall seconds in OUT/NAME.rc. The caller waits, then reads each with
# cg_per_core_result.
cg_per_core()
{
	local out=$1 name=$2
	shift 2

	cg_cpu_slot
	(
		start=$(date +%s)
		"$@" >"$out/$name.log" 2>&1
		echo "$? $(($(date +%s) - start))" >"$out/$name.rc"
	) &
}

# cg_per_core_result OUT NAME: sets rc and secs ("no status" and "?" for
# a command that left none)
cg_per_core_result()
{
	rc="no status" secs=?
	[ -f "$1/$2.rc" ] && read -r rc secs <"$1/$2.rc"
}

# cg_since START PLACES: the seconds since START (date +%s.%N), with
# PLACES decimals
cg_since()
{
	awk -v s="$1" -v e="$(date +%s.%N)" -v p="$2" \
		'BEGIN { printf "%." p "f", e - s }'
}

# cg_checksum: of stdin; cksum's CRC is 5 times as fast as md5sum here
cg_checksum()
{
	cksum | cut -d' ' -f1,2
}
