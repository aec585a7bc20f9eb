# SPDX-License-Identifier: GPL-3.0-or-later
#
# Memory cgroups for the benchmark, on cgroup v1 (the memory controller
# mounted on its own, memory.limit_in_bytes) or v2 (memory.max), whichever
# holds the memory controller here. Every cgroup is created below the one
# this script runs in (v2: below the root if that one cannot delegate),
# under one top directory removed at exit.
#
#   bench_cg_detect		set BENCH_CG_VERSION, BENCH_CG_HOME (this shell's
#				cgroup), BENCH_CG_USAGE_FILE; fails if none
#   bench_cg_top		create the top directory (BENCH_CG_TOP)
#   bench_cg_make DIR [BYTES] [PARENT-OF-MORE]	a cgroup, with a limit
#   bench_cg_run DIR CMD...	run CMD inside DIR (a subshell moves first)
#   bench_cg_enter DIR / bench_cg_leave	move this shell in and back out
#   bench_cg_stat DIR KEY	hierarchical memory.stat counter (v2 names)
#   bench_cg_oom_kills DIR	OOM kills so far
#   bench_cg_remove DIR		remove DIR and its children (bounded retries)
#   bench_cg_cleanup		remove the whole top directory

BENCH_CG_VERSION=
BENCH_CG_HOME=
BENCH_CG_TOP=
BENCH_CG_USAGE_FILE=

# The cgroup of this shell in the hierarchy holding the memory controller
bench_cg_detect()
{
	local mnt path

	mnt=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2;
		exit }' /proc/mounts)
	if [ -n "$mnt" ]; then
		path=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3; exit }' \
			/proc/self/cgroup)
		BENCH_CG_VERSION=1
		BENCH_CG_HOME=$mnt$path
		BENCH_CG_USAGE_FILE=memory.usage_in_bytes
		return 0
	fi
	mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	path=$(awk -F: '$1 == "0" { print $3; exit }' /proc/self/cgroup)
	# the root offers every controller the hierarchy has
	if [ -n "$mnt" ] && grep -qw memory "$mnt/cgroup.controllers" \
		2>/dev/null; then
		BENCH_CG_VERSION=2
		BENCH_CG_HOME=${mnt%/}$path
		BENCH_CG_USAGE_FILE=memory.current
		return 0
	fi
	echo "no memory cgroup controller (v1 or v2) is available" >&2
	return 1
}

# v2 only lets a cgroup's children use the memory controller when the
# parent enables it in cgroup.subtree_control, which a non-root cgroup
# holding processes may not do ("no internal processes").
bench_cg_delegate()
{
	grep -qw memory "$1/cgroup.subtree_control" && return 0
	echo +memory >"$1/cgroup.subtree_control" 2>/dev/null && return 0
	echo "cgroup v2: cannot enable the memory controller below $1" \
		"(it holds processes); run the benchmark from a cgroup whose" \
		"subtree_control has +memory, e.g. systemd-run --scope" >&2
	return 1
}

# The top directory goes below this shell's cgroup; on v2, when that
# cgroup cannot hand the memory controller down, below the root instead
# (root has no "internal processes" rule, and this shell runs as root)
bench_cg_top()
{
	local parent=$BENCH_CG_HOME root

	if [ "$BENCH_CG_VERSION" = 2 ] &&
		! bench_cg_delegate "$parent" 2>/dev/null; then
		root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
		parent=$root
		bench_cg_delegate "$parent" || return 1
	fi
	BENCH_CG_TOP=$parent/cacheguard-bench.$$
	mkdir "$BENCH_CG_TOP" || return 1
	if [ "$BENCH_CG_VERSION" = 2 ]; then
		bench_cg_delegate "$BENCH_CG_TOP" || return 1
	fi
	return 0
}

# bench_cg_make DIR [LIMIT-BYTES] [parent]: "parent" when DIR gets
# children (v2: hand them the memory controller)
bench_cg_make()
{
	local dir=$1 limit=${2:-} kind=${3:-}

	mkdir "$dir" || return 1
	if [ -n "$limit" ] && [ "$BENCH_CG_VERSION" = 1 ]; then
		echo "$limit" >"$dir/memory.limit_in_bytes" || return 1
	elif [ -n "$limit" ]; then
		echo "$limit" >"$dir/memory.max" || return 1
	fi
	if [ "$kind" = parent ] && [ "$BENCH_CG_VERSION" = 2 ]; then
		bench_cg_delegate "$dir" || return 1
	fi
	return 0
}

# bench_cg_run DIR CMD...: CMD runs inside DIR, in the foreground. (In the
# background use "(bench_cg_enter DIR && exec CMD) &": $! is then CMD.)
bench_cg_run()
{
	local dir=$1
	shift
	(bench_cg_enter "$dir" && exec "$@")
}

bench_cg_enter()
{
	echo "$BASHPID" >"$1/cgroup.procs"
}

bench_cg_leave()
{
	echo "$BASHPID" >"$BENCH_CG_HOME/cgroup.procs"
}

# bench_cg_stat DIR KEY: KEY as cgroup v2 names it (file,
# workingset_refault_file, ...); v1 has hierarchical total_ counters
bench_cg_stat()
{
	local key=$2

	if [ "$BENCH_CG_VERSION" = 1 ]; then
		[ "$key" = file ] && key=cache
		key=total_$key
	fi
	# a counter this kernel does not have is no figure, not a 0
	awk -v k="$key" -v f="$1/memory.stat" '$1 == k { print $2; found = 1 }
		END { if (!found) { print "cannot measure " k ": " f \
			" has no such counter" > "/dev/stderr"; exit 1 } }' \
		"$1/memory.stat"
}

bench_cg_usage()
{
	cat "$1/$BENCH_CG_USAGE_FILE"
}

bench_cg_oom_kills()
{
	local f=$1/memory.events

	[ "$BENCH_CG_VERSION" = 1 ] && f=$1/memory.oom_control
	awk -v f="$f" '$1 == "oom_kill" { print $2; found = 1 }
		END { if (!found) { print "cannot count OOM kills: " f \
			" has no oom_kill" > "/dev/stderr"; exit 1 } }' "$f"
}

# Children first. Tasks still inside after 2 s are ones this benchmark
# started (nothing else enters its cgroups, and smbd's helpers take a
# moment to exit): end them by pid. At most 5 s per cgroup.
bench_cg_remove()
{
	local dir=$1 sub i pids

	[ -d "$dir" ] || return 0
	for sub in "$dir"/*/; do
		[ -d "$sub" ] && bench_cg_remove "${sub%/}"
	done
	for i in $(seq 1 50); do
		pids=$(cat "$dir/cgroup.procs" 2>/dev/null | xargs)
		if [ -z "$pids" ]; then
			rmdir "$dir" 2>/dev/null && return 0
		elif [ "$i" = 20 ]; then
			echo "ending leftover tasks $pids in $dir" >&2
			kill $pids 2>/dev/null
		elif [ "$i" = 35 ]; then
			kill -KILL $pids 2>/dev/null
		fi
		sleep 0.1
	done
	echo "cannot remove cgroup $dir (tasks: $pids)" >&2
	return 1
}

bench_cg_cleanup()
{
	if [ -n "$BENCH_CG_TOP" ]; then
		bench_cg_remove "$BENCH_CG_TOP"
	fi
}
