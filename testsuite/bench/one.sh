# SPDX-License-Identifier: GPL-3.0-or-later
#
# One configuration in one scenario, from a warmed hot set and a cold
# big.bin (scenario C: BENCH_COPIES cold files copied at once), in cgroups
# of its own:
#
#   bench_one SCENARIO CONFIG	run it; append its line to results.tsv
#
# Timeline, told to the reader by SIGUSR1 at each arrow:
#
#   idle (BENCH_IDLE_S) -> copy (smbclient, big.bin to /dev/null)
#                       -> after (BENCH_AFTER_S) -> reader stopped
#
# Counters are read at the arrows: refaults and the hot set's device reads
# from the start of the copy to the end of "after" (evicted pages come back
# after the copy too), smbd's CPU and the machine's from the start of the
# copy until the smbd child that served it has exited. A counter that
# cannot be read fails the run with its name (testsuite/lib/figures.sh).

# results.tsv columns, tab-separated, "-" where a run did not get that far
BENCH_FIELDS="scenario config status mbps cpu_s_per_gib idle_p50 idle_p99
	copy_p50 copy_p99 after_p50 after_p99 copy_reads_per_s refaults
	hot_dev_mib hot_start_mib hot_end_mib peak_mib end_mib oom load copy_s
	copies slowest_mbps stream_peak_mib idle_p999 copy_p999
	machine_cpu_s_per_gib"

declare -A BENCH_R
export HOTREADER_USER=$CG_USER HOTREADER_PASS=$CG_PASS

bench_failed()
{
	BENCH_R[status]="failed: $*"
	echo "    $*" >&2
	return 1
}

# Cgroups: SMBD_CG, READER_CG, the hot set's owner WARM_CG, and STAT_CG
# whose hierarchical counters cover all of them
bench_cgroups()
{
	local scen=$1 cfg=$2 cg=$BENCH_CG_TOP/$1-$2
	local limit=$((BENCH_CGROUP_MIB << 20))

	STAT_CG=$cg
	if [ "$cfg" = smbd-cgroup ]; then
		bench_cg_make "$cg" "$limit" parent &&
			bench_cg_make "$cg/smbd" \
				$((BENCH_SMBD_CGROUP_MIB << 20)) &&
			bench_cg_make "$cg/reader" || return 1
		SMBD_CG=$cg/smbd
		READER_CG=$cg/reader
	else
		bench_cg_make "$cg" "$limit" || return 1
		SMBD_CG=$cg
		READER_CG=$cg
	fi
	# the hot set's pages belong to whoever serves it
	WARM_CG=$READER_CG
	[ "$scen" = B ] && WARM_CG=$SMBD_CG
	return 0
}

# smbd is born inside its cgroup (this shell steps in to start it), so
# every page it reads is charged there from the first one
bench_start_smbd()
{
	local cfg=$1 rc

	bench_cg_enter "$SMBD_CG" || return 1
	if [ "$cfg" = nocache ]; then
		LD_PRELOAD=$NOCACHE_SO cg_smbd_start \
			>"$BENCH_RUN/smbd-start.out" 2>&1
	else
		cg_smbd_start >"$BENCH_RUN/smbd-start.out" 2>&1
	fi
	rc=$?
	bench_cg_leave
	# the IOPS cap (BENCH_READ_IOPS): what smbd forks from now is in it
	if [ "$rc" = 0 ] && [ -n "$CG_BLKIO" ]; then
		cg_blkio_add "$CG_SMBD_PID" || rc=1
	fi
	return $rc
}

bench_setup()
{
	local scen=$1 cfg=$2 f

	BENCH_SHARE=plain
	case $cfg in
	off | dontneed | dontcache | direct | auto) BENCH_SHARE=cg_$cfg ;;
	*-idle) BENCH_SHARE=cg_${cfg%-idle}_idle ;;
	default | *@*) BENCH_SHARE=$(cg_guard_share_name "$cfg") ;;
	esac
	if [ "$cfg" = nocache ] && [ ! -r "$NOCACHE_SO" ]; then
		bench_failed "nocache is not installed ($NOCACHE_SO)"
		return 1
	fi
	BENCH_COPY_FILES=$BENCH_BIG
	case $scen in
	C | E) BENCH_COPY_FILES=$(echo $BENCH_MANY) ;;
	D) BENCH_COPY_FILES=$(echo $BENCH_MANY | cut -d' ' -f1) ;;
	esac
	bench_cgroups "$scen" "$cfg" ||
		{ bench_failed "cannot create the cgroups"; return 1; }
	bench_start_smbd "$cfg" ||
		{ bench_failed "smbd did not start"; return 1; }
	# warm hot set, charged to its owner; cold big file
	"$BENCH_BIN/cgcache" drop "$BENCH_HOT" &&
		bench_cg_run "$WARM_CG" "$BENCH_BIN/cgcache" load "$BENCH_HOT" ||
		{ bench_failed "cannot warm the hot set"; return 1; }
	for f in $BENCH_COPY_FILES; do
		"$BENCH_BIN/cgcache" drop "$f" ||
			{ bench_failed "cannot drop $f"; return 1; }
		if [ "$("$BENCH_BIN/cgcache" stat "$f")" != 0 ]; then
			bench_failed "${f##*/} is still cached after the drop"
			return 1
		fi
	done
	return 0
}

bench_start_reader()
{
	local scen=$1 i tool=hotreader name=$BENCH_HOT
	local how=(-r "$BENCH_RATE")

	case $scen in
	B)
		tool=smb_hotreader
		name=smb://127.0.0.1:$CG_PORT/$BENCH_SHARE/hot.bin ;;
	D | E)
		how=(-d -r "$BENCH_DB_RATE" -s 16384 -S 16384) ;;
	esac
	(bench_cg_enter "$READER_CG" && exec "$BENCH_BIN/$tool" \
		"${how[@]}" -t "$BENCH_MAX_S" -o "$BENCH_RUN/reader.log" \
		"$name" 2>"$BENCH_RUN/reader.err") &
	BENCH_READER_PID=$!
	BENCH_RUN_PIDS="$BENCH_RUN_PIDS $!"
	for i in $(seq 1 300); do
		grep -q '^ready' "$BENCH_RUN/reader.log" 2>/dev/null && break
		kill -0 "$BENCH_READER_PID" 2>/dev/null || break
		sleep 0.1
	done
	grep -q '^ready' "$BENCH_RUN/reader.log" 2>/dev/null || return 1
	# whose /proc/PID/io counts the hot set's device reads
	BENCH_HOT_IO_PID=$BENCH_READER_PID
	if [ "$scen" = B ]; then
		BENCH_HOT_IO_PID=$(bench_server_pid "$BENCH_READER_PID")
		[ -n "$BENCH_HOT_IO_PID" ] || return 1
	fi
	return 0
}

# bench_copy_one NAME OUT: one smbclient copy to /dev/null; its end time
# goes to OUT.end
bench_copy_one()
{
	local rc

	timeout "$BENCH_COPY_TIMEOUT" smbclient "//127.0.0.1/$BENCH_SHARE" \
		-p "$CG_PORT" -U "$CG_USER%$CG_PASS" \
		-c "get $1 /dev/null" >"$2" 2>&1
	rc=$?
	echo "$EPOCHREALTIME" >"$2.end"
	return $rc
}

# Scenarios C, D, E: every copy at once, one client each; all must
# succeed
bench_copy()
{
	local i pids= rc=0 size=$((BENCH_COPY_MIB << 20)) f

	if [ "$1" = A ] || [ "$1" = B ]; then
		bench_copy_one big.bin "$BENCH_RUN/smbclient.out" &&
			grep -q "of size $((BENCH_FILE_MIB << 20)) " \
				"$BENCH_RUN/smbclient.out"
		return
	fi
	for f in $BENCH_COPY_FILES; do
		f=${f##*/}
		bench_copy_one "$f" "$BENCH_RUN/smbclient-${f%.bin}.out" &
		pids+=" $!"
	done
	for i in $pids; do
		wait "$i" || rc=1
	done
	for f in $BENCH_COPY_FILES; do
		f=${f##*/}
		grep -q "of size $size " "$BENCH_RUN/smbclient-${f%.bin}.out" ||
			rc=1
	done
	return $rc
}

# The slowest copy's MB/s (scenario C; A and B: the copy's)
bench_slowest()
{
	local f end slow=

	for f in "$BENCH_RUN"/smbclient*.out.end; do
		read -r end <"$f" || continue
		if [ -z "$slow" ] || awk -v a="$end" -v b="$slow" \
			'BEGIN { exit !(a > b) }'; then
			slow=$end
		fi
	done
	awk -v b="$1" -v t0="${BENCH_R[t0]}" -v t1="${slow:-${BENCH_R[t1]}}" \
		'BEGIN { printf "%.0f", b / (t1 - t0) / 1e6 }'
}

# BENCH_STACKS=1: sample the local hot reader's kernel stack every 10 ms
# during the copy, so slow reads show where they wait
bench_stack_sampler()
{
	local pid=$1 out=$2 line stack

	while kill -0 "$pid" 2>/dev/null; do
		stack=
		while read -r line; do
			line=${line#*] }
			stack+="${stack:+;}${line%%+*}"
		done <"/proc/$pid/stack"
		echo "$stack"
		sleep 0.01
	done >"$out" 2>/dev/null
}

bench_hot_ticks()
{
	if [ "$1" = B ]; then
		cg_proc_ticks "$BENCH_HOT_IO_PID"
	else
		echo 0
	fi
}

# bench_read KEY WHAT COMMAND...: BENCH_R[KEY] is the figure COMMAND
# prints; one it cannot read is added to BENCH_R[unread], which fails
# the run at its end (bench_measure) rather than count as 0
bench_read()
{
	local key=$1 what=$2 v

	shift 2
	if v=$("$@") && v=$(cg_number "$what" "$v"); then
		BENCH_R[$key]=$v
	else
		BENCH_R[unread]+="${BENCH_R[unread]:+, }$what"
	fi
}

bench_stop_reader()
{
	bench_end_pid "$BENCH_READER_PID"
	bench_end_pid "$BENCH_SAMPLER_PID"
	BENCH_RUN_PIDS=
}

# Counters at a phase change: refaults, hot-set device reads, smbd CPU
bench_snapshot()
{
	local tag=$1 scen=$2

	bench_read "ref_$tag" refaults \
		bench_cg_stat "$STAT_CG" workingset_refault_file
	bench_read "io_$tag" "the hot set's device reads" \
		bench_proc_read_bytes "$BENCH_HOT_IO_PID"
	bench_cpu_snapshot "$tag" "$scen"
	bench_snapshot_kernel "$STAT_CG" "$tag"
}

bench_cpu_snapshot()
{
	bench_read "cpu_$1" "smbd's CPU time" cg_tree_ticks "$CG_SMBD_PID"
	bench_read "mcpu_$1" "the machine's CPU time" cg_machine_ticks
	bench_read "hcpu_$1" "the CPU time of the hot set's smbd" \
		bench_hot_ticks "$2"
}

bench_measure()
{
	local scen=$1 marks=$BENCH_RUN/marks kids f

	bench_sampler "$BENCH_RUN/samples" "$STAT_CG" "$BENCH_MAX_S"
	BENCH_SAMPLER_PID=$CG_SAMPLER
	BENCH_RUN_PIDS="$BENCH_RUN_PIDS $CG_SAMPLER"
	bench_start_reader "$scen" ||
		{ bench_failed "the hot-set reader did not start"; return 1; }
	echo "idle $EPOCHREALTIME" >"$marks"
	sleep "$BENCH_IDLE_S"

	kids=$(cg_children "$CG_SMBD_PID") ||
		{ bench_failed "cannot list smbd's processes"; return 1; }
	BENCH_R[load]=$(cut -d' ' -f1 /proc/loadavg)
	bench_snapshot 0 "$scen"
	kill -USR1 "$BENCH_READER_PID"
	BENCH_R[t0]=$EPOCHREALTIME
	if [ "${BENCH_STACKS:-0}" = 1 ] && [ "$scen" != B ]; then
		bench_stack_sampler "$BENCH_READER_PID" "$BENCH_RUN/stacks" &
		BENCH_STACK_PID=$!
	fi
	bench_copy "$scen"
	BENCH_R[copy_rc]=$?
	BENCH_R[t1]=$EPOCHREALTIME
	kill -USR1 "$BENCH_READER_PID"
	bench_snapshot_kernel "$STAT_CG" 1
	if [ -n "${BENCH_STACK_PID:-}" ]; then
		kill "$BENCH_STACK_PID" 2>/dev/null
		wait "$BENCH_STACK_PID" 2>/dev/null
		BENCH_STACK_PID=
	fi
	printf 'copy %s\nafter %s\n' "${BENCH_R[t0]}" "${BENCH_R[t1]}" \
		>>"$marks"
	# the copy's smbd exits after the client hangs up; its CPU time
	# reaches the main smbd's cutime when it is reaped
	cg_smbd_wait_served "$kids"
	bench_cpu_snapshot 1 "$scen"
	BENCH_R[end_bytes]=0
	for f in $BENCH_COPY_FILES; do
		bench_read end_one "the page cache of ${f##*/}" \
			"$BENCH_BIN/cgcache" stat "$f"
		BENCH_R[end_bytes]=$((BENCH_R[end_bytes] +
			${BENCH_R[end_one]:-0}))
	done

	sleep "$BENCH_AFTER_S"
	bench_snapshot 2 "$scen"
	echo "end $EPOCHREALTIME" >>"$marks"
	bench_stop_reader
	bench_read oom "OOM kills" bench_oom_kills
	if ! grep -q '^done' "$BENCH_RUN/reader.log"; then
		bench_failed "the hot-set reader died (OOM kills:" \
			"${BENCH_R[oom]}; see $BENCH_RUN/reader.err)"
		return 1
	fi
	if [ "${BENCH_R[copy_rc]}" != 0 ]; then
		bench_failed "the copy failed (OOM kills: ${BENCH_R[oom]};" \
			"see $BENCH_RUN/smbclient.out)"
		return 1
	fi
	if [ -n "${BENCH_R[unread]:-}" ]; then
		bench_failed "cannot measure ${BENCH_R[unread]}"
		return 1
	fi
	return 0
}

bench_oom_kills()
{
	local d sum=0 n

	for d in "$STAT_CG" "$STAT_CG"/*/; do
		[ -d "$d" ] || continue
		n=$(bench_cg_oom_kills "${d%/}") || return 1
		sum=$((sum + n))
	done
	echo "$sum"
}

# key value lines from the reader's phase totals and the samples; a
# sample with no figure in it (a reading failed: "-") is counted in
# samples_failed
bench_parse_logs()
{
	awk 'BEGIN { n[0] = "idle"; n[1] = "copy"; n[2] = "after" }
		$1 == "phase" && ($2 in n) {
			print n[$2] "_p50", $5; print n[$2] "_p99", $6
			if (NF >= 10) print n[$2] "_p999", $10
			if ($2 == 1)
				printf "copy_reads_per_s %.0f\n",
					($4 > 0 ? $3 / $4 : 0)
		}' "$BENCH_RUN/reader.log"
	# the peak includes the figure taken right after the copy
	awk -v t0="${BENCH_R[t0]}" -v t1="${BENCH_R[t1]}" \
		-v peak="${BENCH_R[end_bytes]}" '
		{ for (i = 1; i <= NF; i++) if ($i !~ /^[0-9]+(\.[0-9]+)?$/) {
			failed++; next } }
		$1 <= t0 { hs = $3 }
		$1 >= t0 && $1 <= t1 && $2 > peak { peak = $2 }
		$1 >= t0 && $1 <= t1 { for (i = 6; i <= NF; i++)
			if ($i > speak) speak = $i }
		{ last = $3 }
		END { m = 1048576
			if (failed) printf "samples_failed %d\n", failed
			printf "hot_start_mib %.0f\nhot_end_mib %.0f\n",
				hs / m, last / m
			printf "peak_mib %.1f\n", peak / m
			if (NF > 5) printf "stream_peak_mib %.1f\n", speak / m }' \
		"$BENCH_RUN/samples"
}

bench_results()
{
	local k v b=$((BENCH_FILE_MIB << 20)) n=1

	case ${BENCH_R[scenario]} in
	C | D | E)
		n=$(echo $BENCH_COPY_FILES | wc -w)
		b=$((n * (BENCH_COPY_MIB << 20))) ;;
	esac
	BENCH_R[copies]=$n
	BENCH_R[slowest_mbps]=$(bench_slowest $((b / n)))

	while read -r k v; do
		BENCH_R[$k]=$v
	done < <(bench_parse_logs; awk -v b="$b" \
		-v t0="${BENCH_R[t0]}" -v t1="${BENCH_R[t1]}" \
		-v cpu=$((BENCH_R[cpu_1] - BENCH_R[cpu_0] -
			(BENCH_R[hcpu_1] - BENCH_R[hcpu_0]))) \
		-v mcpu=$((BENCH_R[mcpu_1] - BENCH_R[mcpu_0])) \
		-v tck="$CG_CLK_TCK" -v end="${BENCH_R[end_bytes]}" \
		-v io=$((BENCH_R[io_2] - BENCH_R[io_0])) 'BEGIN {
			printf "mbps %.0f\ncopy_s %.2f\n", b / (t1 - t0) / 1e6,
				t1 - t0
			printf "cpu_s_per_gib %.2f\n", cpu / tck / (b / 2^30)
			printf "machine_cpu_s_per_gib %.2f\n",
				mcpu / tck / (b / 2^30)
			printf "hot_dev_mib %.1f\n", io / 2^20
			printf "end_mib %.1f\n", end / 2^20 }')
	BENCH_R[refaults]=$((BENCH_R[ref_2] - BENCH_R[ref_0]))
	if [ -n "${BENCH_R[samples_failed]:-}" ]; then
		bench_failed "${BENCH_R[samples_failed]} page-cache samples" \
			"had no figure (see $BENCH_RUN/samples)"
		return 1
	fi
	return 0
}

bench_result_line()
{
	local f line=

	for f in $BENCH_FIELDS; do
		line+="${line:+	}${BENCH_R[$f]:--}"
	done
	echo "$line"
}

bench_one()
{
	local scen=$1 cfg=$2

	BENCH_R=([scenario]=$scen [config]=$cfg [status]=ok)
	SECONDS=0
	BENCH_RUN=$BENCH_RESULTS/runs/$scen-$cfg
	mkdir -p "$BENCH_RUN"
	echo "==> Scenario $scen, $cfg"
	if bench_setup "$scen" "$cfg" && bench_measure "$scen" &&
		bench_results; then
		awk -v m="${BENCH_R[mbps]:-}" -v i="${BENCH_R[idle_p99]:-}" \
			-v c="${BENCH_R[copy_p99]:-}" \
			-v r="${BENCH_R[refaults]:-}" \
			-v p="${BENCH_R[peak_mib]:-}" 'BEGIN {
			printf "    %s MB/s; hot p99 idle %.0f us, copy %.0f" \
				" us; %s refaults; copy peak %s MiB cached;",
				m, i / 1000, c / 1000, r, p }'
		echo " ${SECONDS} s"
	fi
	bench_stop_run
	bench_cg_remove "$BENCH_CG_TOP/$scen-$cfg"
	bench_result_line >>"$BENCH_RESULTS/results.tsv"
}
