# SPDX-License-Identifier: GPL-3.0-or-later
#
# What the benchmark reads from the kernel while a configuration runs:
# page-cache samples over time, smbd's CPU time, a process's device reads,
# the smbd process serving a given client, and fio's device limit.
#
#   bench_sampler OUT CGROUP SECONDS	background: "EPOCH COPIED HOT CGFILE
#					CGUSAGE [PER-FILE...]" every
#					BENCH_SAMPLE_S; COPIED sums the files
#					being copied (BENCH_COPY_FILES), each
#					of them listed after CGUSAGE when
#					there are several
#   bench_snapshot_kernel DIR TAG	memory.stat of DIR and /proc/vmstat
#					into the run directory
#   bench_end_pid PID			TERM, then KILL after 5 s, and reap
#   bench_proc_read_bytes PID		its device reads so far
#   bench_server_pid CLIENT-PID		the smbd serving that client
#   bench_fio NAME OUT-JSON ARGS...	one fio read job on the big file
#
# CPU time is read by testsuite/lib/figures.sh (cg_tree_ticks,
# cg_machine_ticks), as everywhere.

# bench_sample_line CGROUP: one sample of bench_sampler's; $EPOCHREALTIME
# and read builtins keep it to a few short-lived processes (a cgcache
# per file). A reading that fails makes the line "-": no figure, which
# bench_parse_logs refuses
bench_sample_line()
{
	local cg=$1 key val file=- usage= f sum=0 each= b hot

	while read -r key val; do
		case $key in
		cache | total_cache) [ "$BENCH_CG_VERSION" = 1 ] || continue ;;
		file) [ "$BENCH_CG_VERSION" = 2 ] || continue ;;
		*) continue ;;
		esac
		# v1: the last of cache and total_cache wins
		file=$val
	done <"$cg/memory.stat"
	read -r usage <"$cg/$BENCH_CG_USAGE_FILE"
	for f in $BENCH_COPY_FILES; do
		b=$("$BENCH_BIN/cgcache" stat "$f") &&
			[[ "$b" =~ ^[0-9]+$ ]] || { echo -; return; }
		sum=$((sum + b))
		each+=" $b"
	done
	[ "$BENCH_COPY_FILES" = "$BENCH_BIG" ] && each=
	hot=$("$BENCH_BIN/cgcache" stat "$BENCH_HOT")
	printf '%s %s %s %s %s%s\n' "$EPOCHREALTIME" "$sum" "${hot:--}" \
		"$file" "${usage:--}" "$each"
}

# bench_sampler OUT CGROUP MAX-SECONDS: bench_sample_line every
# BENCH_SAMPLE_S into OUT, in the background (testsuite/lib/sample.sh),
# until bench_end_pid "$CG_SAMPLER" or MAX-SECONDS
bench_sampler()
{
	: >"$1"
	cg_sampler_start "$1" "$BENCH_SAMPLE_S" "$3" \
		"bench_sample_line $(printf '%q' "$2")"
}

# The kernel's own accounting at a phase change, kept raw for diagnosis:
# the cgroup's memory.stat (LRU lists, refaults) and the machine's
# /proc/vmstat (pgscan/pgsteal, allocstall, workingset_*)
bench_snapshot_kernel()
{
	cp "$1/memory.stat" "$BENCH_RUN/memory.stat.$2" 2>/dev/null
	cp /proc/vmstat "$BENCH_RUN/vmstat.$2" 2>/dev/null
	return 0
}

# Running, not a zombie waiting to be reaped
bench_alive()
{
	local stat

	read -r stat <"/proc/$1/stat" 2>/dev/null || return 1
	stat=${stat##*) }
	[ "${stat%% *}" != Z ]
}

# bench_end_pid PID: SIGTERM to a process this run started, SIGKILL if it
# is still there after 5 s (a reader stuck in an SMB read), then reap it
bench_end_pid()
{
	local pid=$1 i

	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null
	for i in $(seq 1 50); do
		bench_alive "$pid" || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

# bench_proc_read_bytes PID: read_bytes of /proc/PID/io; a message and
# false when the process is gone
bench_proc_read_bytes()
{
	awk -v p="$1" '$1 == "read_bytes:" { print $2; found = 1 }
		END { if (!found) { print "cannot read the device reads of" \
			" process " p > "/dev/stderr"; exit 1 } }' \
		"/proc/$1/io" 2>/dev/null
}

# The smbd child at the other end of CLIENT-PID's connection, from the
# kernel's socket table (ss -p names the process behind each socket)
bench_server_pid()
{
	local port

	port=$(ss -tnpH state established "( dport = :$CG_PORT )" 2>/dev/null |
		awk -v p="pid=$1," 'index($0, p) {
			n = split($3, a, ":"); print a[n]; exit }')
	[ -n "$port" ] || return 1
	ss -tnpH state established \
		"( sport = :$CG_PORT and dport = :$port )" 2>/dev/null |
		sed -n 's/.*pid=\([0-9]*\),.*/\1/p' | head -n 1
}

bench_fio_has_uncached()
{
	! fio --cmdhelp=uncached 2>&1 | grep -q 'No such command'
}

# bench_fio NAME OUT ARGS...: a sequential 1 MiB read of the big file
bench_fio()
{
	local name=$1 out=$2
	shift 2
	timeout $((BENCH_FIO_RUNTIME + 60)) fio --name="$name" \
		--filename="$BENCH_BIG" --readonly --rw=read --bs=1M \
		--runtime="$BENCH_FIO_RUNTIME" --output-format=json \
		--output="$out" "$@" >/dev/null 2>&1
}

# "MB/s p99-ms" of a fio JSON result
bench_fio_summary()
{
	python3 - "$1" <<'EOF'
import json, sys
job = json.load(open(sys.argv[1]))["jobs"][0]["read"]
p99 = job.get("clat_ns", {}).get("percentile", {}).get("99.000000", 0)
print("%.0f %.2f" % (job["bw_bytes"] / 1e6, p99 / 1e6))
EOF
}
