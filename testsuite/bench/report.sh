# SPDX-License-Identifier: GPL-3.0-or-later
#
# The benchmark's report: markdown from results.tsv and fio's summary,
# and gnuplot PNGs over time, each configuration against the plain share.
#
#   bench_machine		markdown: the machine, disk, versions, load
#   bench_report		markdown: parameters, device limit, a table
#				per scenario, notes on failed runs
#   bench_plots			plots/SCENARIO-CONFIG.png, three panels

DEFAULT_CONFIGS="plain off dontneed dontcache direct auto nocache smbd-cgroup"
ALL_CONFIGS="$DEFAULT_CONFIGS dontcache-idle direct-idle auto-idle"

# The block device under a path: "vda" for /dev/vda, the disk of a partition
bench_disk_of()
{
	local dev sys

	dev=$(stat -c '%Hd:%Ld' "$1" 2>/dev/null) || return 1
	sys=$(readlink -f "/sys/dev/block/$dev") || return 1
	[ -d "$sys/queue" ] || sys=$(dirname "$sys")
	basename "$sys"
}

bench_machine()
{
	local disk q model

	disk=$(bench_disk_of "$CG_SHARE")
	q=/sys/block/$disk/queue
	model=$(cat "/sys/block/$disk/device/model" 2>/dev/null | xargs)
	[ -d "/sys/block/$disk/device/driver" ] &&
		[ -z "$model" ] && model=$(basename "$(readlink -f \
			"/sys/block/$disk/device/driver")")
	echo "| | |"
	echo "|---|---|"
	echo "| CPU | $(nproc) cores, $(awk -F': ' '/^model name/ {
		print $2; exit }' /proc/cpuinfo) |"
	echo "| memory | $(awk '/^MemTotal/ { printf "%.1f GiB",
		$2 / 1048576 }' /proc/meminfo) |"
	echo "| kernel | $(uname -r) |"
	echo "| disk | $disk (${model:-unknown}), rotational=$(cat \
		"$q/rotational" 2>/dev/null), read_ahead_kb=$(cat \
		"$q/read_ahead_kb" 2>/dev/null), scheduler $(sed \
		's/.*\[\(.*\)\].*/\1/' "$q/scheduler" 2>/dev/null) |"
	echo "| filesystem | $(findmnt -n -o FSTYPE --target "$CG_SHARE") on" \
		"/dev/$disk |"
	echo "| page-cache LRU | $(bench_lru) |"
	echo "| memory cgroup | v$BENCH_CG_VERSION |"
	echo "| smbd | $(smbd --version 2>/dev/null) |"
	echo "| smbclient | $(smbclient --version 2>/dev/null) |"
	echo "| fio | $(fio --version 2>/dev/null) |"
	echo "| cacheguard.so | $(bench_module_id) |"
	echo "| load average at start | $(cut -d' ' -f1-3 /proc/loadavg) |"
}

# Which module was measured: the commit, whether the module's sources had
# uncommitted changes, and the first bytes of the binary's sha256
bench_module_id()
{
	local commit dirty sum

	commit=$(git -C "$CG_TOP" rev-parse --short HEAD 2>/dev/null)
	dirty=$(git -C "$CG_TOP" status --porcelain -- source modules \
		2>/dev/null | wc -l)
	sum=$(sha256sum "$CG_ROOT/vfs/cacheguard.so" 2>/dev/null | cut -c1-12)
	printf 'built from commit %s' "${commit:-unknown}"
	[ "$dirty" -gt 0 ] && printf ' plus uncommitted changes to %s file(s)' \
		"$dirty"
	printf ', sha256 %s\n' "${sum:-unknown}"
}

bench_lru()
{
	local f=/sys/kernel/mm/lru_gen/enabled

	if [ -r "$f" ] && [ "$(($(cat "$f")))" != 0 ]; then
		echo "multi-gen LRU ($(cat "$f"))"
	else
		echo "classic active/inactive lists"
	fi
}

bench_parameters()
{
	echo "- hot set: $BENCH_HOT_MIB MiB, read at random in 4-64 KiB"
	echo "  reads at $BENCH_RATE reads/s; idle ${BENCH_IDLE_S} s before"
	echo "  the copy, ${BENCH_AFTER_S} s after it"
	echo "- copied file: $BENCH_FILE_MIB MiB, cold, smbclient to"
	echo "  /dev/null over 127.0.0.1; scenario C: ${BENCH_COPIES:-4}" \
		"clients at once, each copying a distinct cold file of" \
		"${BENCH_COPY_MIB:-1024} MiB"
	echo "- smbd and the reader in one memory cgroup of" \
		"$BENCH_CGROUP_MIB MiB; for smbd-cgroup, smbd in a child"
	echo "  limited to $BENCH_SMBD_CGROUP_MIB MiB, the reader in a" \
		"sibling, both under the $BENCH_CGROUP_MIB MiB"
	echo "- configurations: $BENCH_CONFIGS; scenarios: $BENCH_SCENARIOS"
	[ -z "${BENCH_OPTIONS:-}" ] ||
		echo "- every cacheguard share also has: $BENCH_OPTIONS"
	[ -z "${BENCH_READ_IOPS:-}" ] ||
		echo "- smbd's reads capped at $BENCH_READ_IOPS IOPS (blkio)"
}

bench_fio_table()
{
	local f=$BENCH_RESULTS/fio/summary

	echo "| fio job on big.bin (sequential 1 MiB reads) | MB/s |" \
		"p99 read latency (ms) |"
	echo "|---|---:|---:|"
	if [ ! -s "$f" ]; then
		echo "| not run (BENCH_FIO=0) | | |"
		return
	fi
	awk 'BEGIN {
		l["direct-qd16"] = "--direct=1, libaio, iodepth 16"
		l["direct-qd1"] = "--direct=1, psync (one read at a time)"
		l["buffered-cold"] = "buffered, cold (kernel readahead)"
		l["uncached"] = "--uncached=1 (RWF_DONTCACHE)" }
	$2 == "unsupported" {
		printf "| %s | unsupported by this fio | |\n", l[$1]; next }
	$2 == "failed" { printf "| %s | failed | |\n", l[$1]; next }
	{ printf "| %s | %s | %s |\n", l[$1], $2, $3 }' "$f"
}

bench_label()
{
	case $1 in
	plain) echo "plain share" ;;
	nocache) echo "nocache (LD_PRELOAD on smbd)" ;;
	smbd-cgroup) echo "smbd in its own cgroup ($BENCH_SMBD_CGROUP_MIB MiB)" ;;
	*-idle) echo "cacheguard, mode ${1%-idle}, stream ioprio idle" ;;
	default) echo "cacheguard, no option (the default)" ;;
	*@*) echo "cacheguard, mode ${1%%@*}, $(tr @_ ', ' <<<"${1#*@}")" ;;
	*) echo "cacheguard, mode $1" ;;
	esac
}

# "config=label;" for every configuration, for the tables' awk
bench_labels()
{
	local c

	for c in $ALL_CONFIGS ${BENCH_CONFIGS:-}; do
		printf '%s=%s;' "$c" "$(bench_label "$c")"
	done
}

# The start of a table's awk program over results.tsv (-v labels=
# "$(bench_labels)"): us(ns), label[config], c[column name]
BENCH_TABLE_AWK='
	# a latency with its unit: 4.9 µs, 51 µs, 2.7 ms, 97 ms
	function us(ns) {
		if (ns == "-" || ns == "nan" || ns == "") return "-"
		if (ns < 10000) return sprintf("%.1f µs", ns / 1000)
		if (ns < 1000000) return sprintf("%.0f µs", ns / 1000)
		if (ns < 10000000) return sprintf("%.1f ms", ns / 1000000)
		return sprintf("%.0f ms", ns / 1000000)
	}
	BEGIN { n = split(labels, a, ";")
		for (i = 1; i <= n; i++) {
			split(a[i], kv, "="); label[kv[1]] = kv[2] } }
	NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }'

# bench_table SCENARIO: one markdown row per configuration run
bench_table()
{
	awk -F'\t' -v scen="$1" -v labels="$(bench_labels)" \
		"$BENCH_TABLE_AWK"'
	$c["scenario"] != scen { next }
	{ row[++rows] = $0 }
	$c["config"] == "plain" && $c["status"] == "ok" { plain = $c["mbps"] }
	END {
		many = scen == "C"
		printf "| configuration | %s | vs plain |",
			many ? "copies MB/s, summed" : "share MB/s"
		print "" \
			" smbd CPU s/GiB | machine CPU s/GiB |" \
			" hot p50 / p99 idle |" \
			" hot p50 / p99 during copy |" \
			" hot reads/s during copy | refaults (pages) |" \
			" hot set from device (MiB) |" \
			" hot set cached before → after (MiB) |" \
			" copied file cached peak / end (MiB) | load |" \
			(many ? " slowest copy MB/s |" \
				" one copy cached, peak (MiB) |" : "")
		print "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" \
			"---:|" (many ? "---:|---:|" : "")
		for (r = 1; r <= rows; r++) {
			split(row[r], f, "\t")
			name = label[f[c["config"]]]
			if (f[c["status"]] != "ok") {
				printf "| %s | %s | | | | | | | | | | | |%s\n",
					name, f[c["status"]], many ? " | |" : ""
				continue
			}
			ratio = plain > 0 ? sprintf("%.2fx",
				f[c["mbps"]] / plain) : "-"
			printf "| %s | %s | %s | %s | %s | %s / %s |" \
				" %s / %s |", name, f[c["mbps"]], ratio,
				f[c["cpu_s_per_gib"]],
				f[c["machine_cpu_s_per_gib"]],
				us(f[c["idle_p50"]]), us(f[c["idle_p99"]]),
				us(f[c["copy_p50"]]), us(f[c["copy_p99"]])
			printf " %s | %s | %s | %s → %s | %s / %s | %s |",
				f[c["copy_reads_per_s"]], f[c["refaults"]],
				f[c["hot_dev_mib"]], f[c["hot_start_mib"]],
				f[c["hot_end_mib"]], f[c["peak_mib"]],
				f[c["end_mib"]], f[c["load"]]
			if (many)
				printf " %s | %s |", f[c["slowest_mbps"]],
					f[c["stream_peak_mib"]]
			print ""
		}
	}' "$BENCH_RESULTS/results.tsv"
}

# bench_table_device SCENARIO (D, E): the disk-bound neighbour's latency
# and what the copies gave up for it, against scenario C's copies where
# the same configuration ran C
bench_table_device()
{
	awk -F'\t' -v scen="$1" -v labels="$(bench_labels)" \
		"$BENCH_TABLE_AWK"'
	# the same copies without a neighbour on the device
	scen == "E" && $c["scenario"] == "C" && $c["status"] == "ok" {
		alone[$c["config"]] = $c["mbps"] }
	$c["scenario"] != scen { next }
	{ row[++rows] = $0 }
	$c["config"] == "plain" && $c["status"] == "ok" { plain = $c["mbps"] }
	END {
		print "| configuration | copies | copies MB/s, summed |" \
			" vs plain | vs scenario C |" \
			" neighbour p50 / p99 / p99.9 idle |" \
			" during the copies | p99 / idle p99 |"
		print "|---|---:|---:|---:|---:|---:|---:|---:|"
		for (r = 1; r <= rows; r++) {
			split(row[r], f, "\t")
			name = label[f[c["config"]]]
			if (f[c["status"]] != "ok") {
				printf "| %s | %s | | | | | | |\n", name,
					f[c["status"]]
				continue
			}
			cfg = f[c["config"]]
			vp = vc = vi = "-"
			if (plain > 0)
				vp = sprintf("%.2fx", f[c["mbps"]] / plain)
			if (alone[cfg] > 0)
				vc = sprintf("%.2fx", f[c["mbps"]] / alone[cfg])
			if (f[c["idle_p99"]] > 0)
				vi = sprintf("%.0fx",
					f[c["copy_p99"]] / f[c["idle_p99"]])
			printf "| %s | %s | %s | %s | %s |", name,
				f[c["copies"]], f[c["mbps"]], vp, vc
			printf " %s / %s / %s | %s / %s / %s | %s |\n",
				us(f[c["idle_p50"]]), us(f[c["idle_p99"]]),
				us(f[c["idle_p999"]]), us(f[c["copy_p50"]]),
				us(f[c["copy_p99"]]), us(f[c["copy_p999"]]), vi
		}
	}' "$BENCH_RESULTS/results.tsv"
}

# Runs worth a remark: OOM kills, failures, a busy machine
bench_notes()
{
	awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$c["oom"] != "-" && $c["oom"] > 0 {
		printf "- %s %s: %s OOM kill(s) in its cgroups\n",
			$c["scenario"], $c["config"], $c["oom"] }
	$c["status"] != "ok" {
		printf "- %s %s: %s\n", $c["scenario"], $c["config"],
			$c["status"] }
	$c["load"] != "-" { printf "%s %s\n", "load", $c["load"] }' \
		"$BENCH_RESULTS/results.tsv" | awk '
	$1 == "load" { if (min == "" || $2 < min) min = $2
		if ($2 > max) max = $2; next }
	{ print }
	END { if (min != "")
		printf "- 1-minute load average at the start of the copies:" \
			" %s to %s (2 cores; other work on the machine adds" \
			" noise)\n", min, max }'
}

bench_report()
{
	local scen

	echo "# vfs_cacheguard mixed-workload benchmark"
	echo
	echo "$BENCH_DATE, testsuite/bench/run" \
		"${BENCH_SMOKE:+(BENCH_SMOKE=1: tiny sizes, figures" \
		"meaningless)}"
	echo
	bench_parameters
	echo
	echo "## Machine"
	echo
	cat "$BENCH_RESULTS/machine.md"
	echo
	echo "## Device limit (fio on the copied file, same run)"
	echo
	bench_fio_table
	for scen in $BENCH_SCENARIOS; do
		echo
		case $scen in
		A) echo "## Scenario A: local hot set, copy through SMB" ;;
		B) echo "## Scenario B: hot set on the share, read by a" \
			"second SMB client" ;;
		C) echo "## Scenario C: local hot set, $BENCH_COPIES" \
			"copies at once through SMB" ;;
		D) echo "## Scenario D: a disk-bound neighbour (O_DIRECT" \
			"16 KiB random reads, $BENCH_DB_RATE/s), one copy" ;;
		E) echo "## Scenario E: a disk-bound neighbour (O_DIRECT" \
			"16 KiB random reads, $BENCH_DB_RATE/s)," \
			"$BENCH_COPIES copies at once" ;;
		esac
		echo
		case $scen in
		D | E) bench_table_device "$scen" ;;
		*) bench_table "$scen" ;;
		esac
	done
	echo
	echo "## Plots"
	echo
	bench_plot_links
	echo
	echo "## Notes"
	echo
	bench_notes
	bench_columns
}

# run --report DIR: the same report and plots from a finished run's files
bench_report_again()
{
	BENCH_RESULTS=$(cd "$1" && pwd) || return 1
	if [ ! -r "$BENCH_RESULTS/params" ] ||
		[ ! -r "$BENCH_RESULTS/results.tsv" ]; then
		echo "$1: no params or results.tsv of a benchmark run" >&2
		return 1
	fi
	. "$BENCH_RESULTS/params"
	bench_plots || return 1
	bench_report >"$BENCH_RESULTS/results.md" || return 1
	cat "$BENCH_RESULTS/results.md"
}

bench_plot_links()
{
	local png

	for png in "$BENCH_RESULTS"/plots/*.png; do
		[ -s "$png" ] || continue
		echo "- [$(basename "$png" .png)](plots/$(basename "$png"))"
	done
}

bench_columns()
{
	cat <<'EOF2'
- share MB/s: big.bin bytes / wall time of the smbclient copy; scenario
  C: the bytes of all copies / the wall time from their common start to
  the end of the last one (slowest copy MB/s: that last one's).
- smbd CPU s/GiB: user+system time of all smbd processes from the start
  of the copy until the smbd child that served it exited, per GiB copied:
  the main smbd, the children it reaped and its live children; in
  scenario B the time of the child serving the hot-set reader is
  subtracted.
- machine CPU s/GiB: the busy time of every core (/proc/stat: user,
  nice, system, irq, softirq) over the same span, per GiB copied:
  smbd, smbclient, the hot-set reader, the sampler, and whatever else
  this machine ran meanwhile (read it against the load column).
- hot p50 / p99: read latency of the paced hot-set reader; idle = before
  the copy, during copy = while smbclient ran.
- hot reads/s during copy: what the reader achieved against its target;
  a read slower than the pacing interval delays the next ones.
- refaults: workingset_refault_file of the cgroup(s) from the start of the
  copy to the end of the "after" phase: pages read again soon after
  eviction (the hot set's, and the copy's own readahead if it thrashes).
- hot set from device: read_bytes of the process that reads the hot set
  (the reader in A, the smbd child serving it in B), same interval.
- hot set cached: hot.bin resident before the copy and at the end.
- copied file cached: big.bin resident at its peak while copying (sampled
  every BENCH_SAMPLE_S) and once the copy's smbd child had exited;
  scenario C: all copied files summed, and one copy cached, peak: the
  largest residency any one of them reached (a stream's footprint,
  kernel readahead included).
- load: the machine's 1-minute load average as the copy started; above
  about 2 other work competed for the 2 cores during that run.
- cacheguard mode off runs the module's hooks without acting: its
  difference from the plain share is the noise floor of this run.
EOF2
}

bench_mark()
{
	awk -v k="$1" '$1 == k { print $2 }' "$2/marks"
}

# p99.dat (seconds since the copy started, p99 ms) and cache.dat (seconds,
# big.bin MiB, cgroup page cache MiB, hot.bin MiB) of one run
bench_plot_data()
{
	local run=$1 t0

	t0=$(bench_mark copy "$run")
	awk -v t0="$t0" '$1 == "sec" && $5 != "nan" {
		printf "%.1f %.4f\n", $2 - t0 - 0.5, $6 / 1e6 }' \
		"$run/reader.log" >"$run/p99.dat"
	awk -v t0="$t0" '{ m = 1048576
		printf "%.2f %.1f %.1f %.1f\n", $1 - t0, $2 / m, $4 / m,
			$3 / m }' "$run/samples" >"$run/cache.dat"
}

bench_run_ok()
{
	awk -F'\t' -v s="$1" -v c="$2" '$1 == s && $2 == c &&
		$3 == "ok" { found = 1 } END { exit !found }' \
		"$BENCH_RESULTS/results.tsv"
}

# plain in dark grey, the configuration against it in red
BENCH_COLOURS=("" "#404040" "#d62728")

# bench_plot SCENARIO CONFIG: three panels, CONFIG against plain
bench_plot()
{
	local scen=$1 cfg=$2 runs=$BENCH_RESULTS/runs c i=0 panel x
	local list=$cfg title

	if [ "$cfg" != plain ] && bench_run_ok "$scen" plain; then
		list="plain $cfg"
	fi
	title="Scenario $scen: $(bench_label "$cfg")"
	[ "$list" != "$cfg" ] && title="$title against the plain share"
	{
		echo "set terminal pngcairo noenhanced size 900,1050 font ',10'"
		echo "cd '$BENCH_RESULTS'"
		echo "set output 'plots/$scen-$cfg.png'"
		echo "set multiplot layout 3,1 title '$title'"
		echo "set grid; set key top right"
		echo "set xlabel 'seconds since the copy started'"
		# where each copy ended, dashed in its line's colour
		for c in $list; do
			i=$((i + 1))
			x=$(bench_mark after "$runs/$scen-$c" | awk -v \
				t0="$(bench_mark copy "$runs/$scen-$c")" \
				'{ printf "%.2f", $1 - t0 }')
			echo "set arrow from $x, graph 0 to $x, graph 1" \
				"nohead dt 2 lw 2 lc rgb '${BENCH_COLOURS[i]}'"
		done
		echo "set arrow from 0, graph 0 to 0, graph 1 nohead lc 'black'"
		for panel in "p99.dat:2:hot-set read p99 per second (ms)" \
			"cache.dat:2:copied file cached (MiB)" \
			"cache.dat:3:cgroup page cache (MiB)"; do
			bench_plot_panel "$scen" bench_style_pair "$panel" $list
		done
		echo "unset multiplot"
	} >"$BENCH_RESULTS/plots/$scen-$cfg.gp"
	gnuplot "$BENCH_RESULTS/plots/$scen-$cfg.gp" \
		2>"$BENCH_RESULTS/plots/$scen-$cfg.err"
}

# bench_plot_panel SCENARIO STYLE FILE:COLUMN:YLABEL CONFIG...: one line
# per configuration, styled by "STYLE CONFIG INDEX" (bench_style_pair,
# bench_style_all)
bench_plot_panel()
{
	local scen=$1 style_fn=$2 file col ylabel c i=0 sep=
	shift 2
	IFS=: read -r file col ylabel <<<"$1"
	shift
	echo "set ylabel '$ylabel'"
	if [ "$file" = p99.dat ]; then
		echo "set logscale y"
	else
		echo "unset logscale y; set yrange [0:*]"
	fi
	printf 'plot'
	for c in "$@"; do
		i=$((i + 1))
		printf "%s 'runs/%s-%s/%s' using 1:%s with lines %s title '%s'" \
			"$sep" "$scen" "$c" "$file" "$col" \
			"$("$style_fn" "$c" "$i")" "$(bench_label "$c")"
		sep=,
	done
	echo
}

# A configuration against the plain share: the i-th of BENCH_COLOURS
bench_style_pair()
{
	echo "lw 2 lc rgb '${BENCH_COLOURS[$2]}'"
}

# bench_plot_overview SCENARIO: every configuration's hot-set p99 and
# copied-file residency in one picture
bench_plot_overview()
{
	local scen=$1 cfg list= panel

	for cfg in $BENCH_CONFIGS; do
		bench_run_ok "$scen" "$cfg" && list+=" $cfg"
	done
	[ -n "$list" ] || return 1
	{
		echo "set terminal pngcairo noenhanced size 1000,800 font ',10'"
		echo "cd '$BENCH_RESULTS'"
		echo "set output 'plots/$scen-all.png'"
		echo "set multiplot layout 2,1 title 'Scenario $scen: every" \
			"configuration'"
		echo "set grid; set key outside right top"
		echo "set xlabel 'seconds since the copy started'"
		echo "set arrow from 0, graph 0 to 0, graph 1 nohead lc 'black'"
		for panel in "p99.dat:2:hot-set read p99 per second (ms)" \
			"cache.dat:2:copied file cached (MiB)"; do
			bench_plot_panel "$scen" bench_style_all "$panel" $list
		done
		echo "unset multiplot"
	} >"$BENCH_RESULTS/plots/$scen-all.gp"
	gnuplot "$BENCH_RESULTS/plots/$scen-all.gp" \
		2>"$BENCH_RESULTS/plots/$scen-all.err"
}

# One colour per configuration in the overview; off, the control, grey
bench_colour()
{
	case $1 in
	off) echo "#9a9a9a" ;;
	dontneed) echo "#1f77b4" ;;
	dontcache) echo "#2ca02c" ;;
	direct) echo "#9467bd" ;;
	auto) echo "#ff7f0e" ;;
	nocache) echo "#d62728" ;;
	smbd-cgroup) echo "#8c564b" ;;
	*) echo "#000000" ;;
	esac
}

# Every configuration at once: its own colour, the plain share thick black
bench_style_all()
{
	if [ "$1" = plain ]; then
		echo "lw 3 lc 'black'"
	else
		echo "lw 1.5 lc rgb '$(bench_colour "$1")'"
	fi
}

bench_plots()
{
	local scen cfg n=0

	mkdir -p "$BENCH_RESULTS/plots"
	for scen in $BENCH_SCENARIOS; do
		for cfg in $BENCH_CONFIGS; do
			bench_run_ok "$scen" "$cfg" || continue
			bench_plot_data "$BENCH_RESULTS/runs/$scen-$cfg"
		done
		for cfg in $BENCH_CONFIGS; do
			bench_run_ok "$scen" "$cfg" || continue
			if [ "$cfg" = plain ] &&
				[ "$(echo $BENCH_CONFIGS)" != plain ]; then
				continue
			fi
			bench_plot "$scen" "$cfg" && n=$((n + 1))
		done
		bench_plot_overview "$scen" && n=$((n + 1))
	done
	echo "==> $n plots in $BENCH_RESULTS/plots"
}
