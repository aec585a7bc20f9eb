# SPDX-License-Identifier: GPL-3.0-or-later
#
# The figures the demo, the benchmark and the tests read from the kernel
# and from tools, read one way everywhere, and loudly: a figure that
# cannot be read (a tool that is missing, a reading that is empty or not
# a number) is an error with a message naming what is missing, never a
# 0 in a table. A demo that printed "0.0 MiB left in the page cache"
# because fincore was not installed (Debian 13 moved it to
# util-linux-extra) is what this file exists to prevent.
#
#   cg_need_tools WHAT CMD...	every CMD on PATH, else a message naming
#				its Debian package and false
#   cg_number WHAT VALUE	prints VALUE when it is a number (digits,
#				at most one dot), else a message and false
#   cg_fincore FILE		resident bytes of FILE as fincore(1), the
#				tool a user checks with, reads them
#
# CPU time, in clock ticks (USER_HZ, CG_CLK_TCK per second), as issue 50
# measures it: user + system time of a process, of the children it has
# reaped (cutime, cstime) and of its live children, which count for
# themselves. Threads are in their process's figures.
#
#   cg_proc_ticks PID		utime + stime + cutime + cstime of PID
#   cg_children PID		its live children's pids, space-separated
#				(cg_ticks_of and cg_kids_of: the same into
#				CG_TICKS and CG_KIDS, with no subshell)
#   cg_tree_ticks PID		PID's and its live children's, read
#				consistently: retried while a child is
#				reaped between the reads (its time would
#				count twice or not at all)
#   cg_machine_ticks		busy time of all cores since boot
#				(/proc/stat: user, nice, system, irq,
#				softirq; not idle, iowait or steal, the
#				hypervisor's time; guest is inside user)
#   cg_smbd_measure OUT CMD...	run CMD, a client of this test's smbd
#				(CG_SMBD_PID), its output in OUT; prints
#				"SECONDS SMBD-TICKS MACHINE-TICKS" from its
#				start until the smbd processes that served
#				it have exited (10 s at most)
#   cg_per_gib TICKS BYTES	seconds per GiB, two decimals
#
# Several rounds of the same measurement (comma-separated lists):
#
#   cg_median LIST		the median
#   cg_ratios A-LIST B-LIST	"MEDIAN MIN MAX" of the rounds' ratios
#				a[i] / b[i] ("- - -" when a b[i] is 0)

CG_CLK_TCK=$(getconf CLK_TCK)

# The Debian package of a command the figures need, for the message
cg_package_of()
{
	case $1 in
	fincore) echo util-linux-extra ;;
	ss) echo iproute2 ;;
	ps | pgrep) echo procps ;;
	gnuplot) echo gnuplot-nox ;;
	smbclient | fio | python3 | strace) echo "$1" ;;
	*) echo "the one that has it" ;;
	esac
}

cg_need_tools()
{
	local what=$1 t missing=

	shift
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 && continue
		missing+=" $t (Debian package $(cg_package_of "$t"))"
	done
	[ -z "$missing" ] && return 0
	echo "cannot measure $what: not installed:$missing;" \
		"'make deps' as root installs them" >&2
	return 1
}

cg_number()
{
	if [[ "$2" =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
		echo "$2"
		return 0
	fi
	echo "cannot measure $1: the reading is '$2', not a number" >&2
	return 1
}

cg_fincore()
{
	local out

	cg_need_tools "the page cache of $1" fincore || return 1
	if ! out=$(fincore --bytes --noheadings --output RES -- "$1" 2>&1)
	then
		echo "cannot measure the page cache of $1: fincore: $out" >&2
		return 1
	fi
	# right-aligned in its column: the blanks around it go
	read -r out <<<"$out"
	cg_number "the page cache of $1 (fincore)" "$out"
}

# cg_ticks_of PID: CG_TICKS, PID's utime + stime + cutime + cstime. It
# and cg_kids_of set variables rather than print, so that the readers
# fork no subshell: one would be a child of the shell it measures
cg_ticks_of()
{
	local stat f

	CG_TICKS=
	if ! read -r stat 2>/dev/null <"/proc/$1/stat"; then
		echo "cannot measure the CPU time of process $1: it is gone" >&2
		return 1
	fi
	# the fields after "pid (comm) ", which may itself hold ") ":
	# state is f[0], utime stime cutime cstime f[11] to f[14]
	read -r -a f <<<"${stat##*) }"
	CG_TICKS=$((f[11] + f[12] + f[13] + f[14]))
}

cg_proc_ticks()
{
	cg_ticks_of "$1" && echo "$CG_TICKS"
}

# cg_kids_of PID: CG_KIDS, PID's live children. One file per thread of
# PID lists the children that thread forked (CONFIG_PROC_CHILDREN,
# which Debian's kernels have)
cg_kids_of()
{
	local f kids

	CG_KIDS=
	for f in /proc/"$1"/task/*/children; do
		if [ ! -r "$f" ]; then
			echo "cannot list the children of process $1: no" \
				"/proc/$1/task/*/children" >&2
			return 1
		fi
		# no newline at its end: read says EOF, and has read it
		read -r -d '' kids <"$f" || true
		kids=${kids% }
		[ -z "$kids" ] || CG_KIDS+="${CG_KIDS:+ }$kids"
	done
}

cg_children()
{
	cg_kids_of "$1" && echo "$CG_KIDS"
}

cg_tree_ticks()
{
	local try kids sum p

	for ((try = 1; try <= 20; try++)); do
		cg_kids_of "$1" && kids=$CG_KIDS && cg_ticks_of "$1" ||
			return 1
		sum=$CG_TICKS
		for p in $kids; do
			# gone: reaped meanwhile, and the lists differ below
			cg_ticks_of "$p" 2>/dev/null || CG_TICKS=0
			sum=$((sum + CG_TICKS))
		done
		cg_kids_of "$1" || return 1
		if [ "$kids" = "$CG_KIDS" ]; then
			echo "$sum"
			return 0
		fi
	done
	echo "cannot measure the CPU time of process $1 and its children:" \
		"they changed in each of 20 tries" >&2
	return 1
}

cg_machine_ticks()
{
	local cpu user nice system irq softirq

	# idle and iowait, the 4th and 5th, are not busy
	read -r cpu user nice system _ _ irq softirq _ </proc/stat
	if [ "$cpu" != cpu ]; then
		echo "cannot measure the machine's CPU time: /proc/stat" \
			"starts with '$cpu'" >&2
		return 1
	fi
	cg_number "the machine's CPU time" \
		$((user + nice + system + irq + softirq))
}

# cg_smbd_wait_served BEFORE: wait until the smbd processes that are
# children of CG_SMBD_PID now and were not in BEFORE (a connection's
# process, "smbd" in its comm: not a helper such as samba-dcerpcd that
# a client's first RPC starts and that lives on) have exited and been
# reaped, their time then in smbd's cutime; 10 s at most (a live one
# counts for itself)
cg_smbd_wait_served()
{
	local p comm left _

	for _ in $(seq 1 100); do
		left=
		for p in $(cg_children "$CG_SMBD_PID"); do
			[[ " $1 " == *" $p "* ]] && continue
			read -r comm 2>/dev/null <"/proc/$p/comm" || continue
			[[ "$comm" == smbd* ]] && left=1
		done
		[ -z "$left" ] && return 0
		sleep 0.1
	done
	return 0
}

cg_smbd_measure()
{
	local out=$1 before s0 m0 t0 t1 s1 m1 rc

	shift
	before=$(cg_children "$CG_SMBD_PID") &&
		s0=$(cg_tree_ticks "$CG_SMBD_PID") &&
		m0=$(cg_machine_ticks) || return 1
	t0=$EPOCHREALTIME
	rc=0
	"$@" >"$out" 2>&1 || rc=$?
	t1=$EPOCHREALTIME
	cg_smbd_wait_served "$before"
	s1=$(cg_tree_ticks "$CG_SMBD_PID") && m1=$(cg_machine_ticks) ||
		return 1
	if [ "$rc" != 0 ]; then
		echo "the client failed (exit $rc): $(tail -n 3 "$out")" >&2
		return "$rc"
	fi
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
	echo " $((s1 - s0)) $((m1 - m0))"
}

cg_per_gib()
{
	awk -v t="$1" -v b="$2" -v hz="$CG_CLK_TCK" \
		'BEGIN { printf "%.2f\n", t / hz / (b / 2^30) }'
}

cg_median()
{
	awk -v a="$1" 'BEGIN {
		n = split(a, r, ",")
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
			if (r[j] + 0 < r[i] + 0) {
				t = r[i]; r[i] = r[j]; r[j] = t
			}
		if (n % 2) print r[(n + 1) / 2] + 0
		else print (r[n / 2] + r[n / 2 + 1]) / 2 }'
}

cg_ratios()
{
	awk -v a="$1" -v b="$2" 'BEGIN {
		n = split(a, x, ","); split(b, y, ",")
		for (i = 1; i <= n; i++) {
			if (y[i] + 0 == 0) { print "- - -"; exit }
			r[i] = x[i] / y[i]
		}
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
			if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
		m = n % 2 ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2
		printf "%.2f %.2f %.2f\n", m, r[1], r[n] }'
}
