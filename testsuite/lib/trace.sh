# SPDX-License-Identifier: GPL-3.0-or-later
#
# What one file's reads make of the page cache and of the device, from
# the kernel's own tracepoints (root; a tracefs instance of our own, so
# nobody else's tracing is touched): the size of every folio added to the
# file's page cache (filemap:mm_filemap_add_to_page_cache's order field,
# which this host's 6.18 has; a kernel without it shows "unknown") and
# every read request issued to the file's disk
# (block:block_rq_issue, everyone's, after merging: the requests the
# device really sees).
#
#   cg_trace_make FILE		an instance watching FILE and its disk
#				(returns 1, and says why, where it cannot)
#   cg_trace_start		clear it and start recording
#   cg_trace_stop		stop; CG_TRACE_FOLIOS (the share of the
#				bytes added by folio size, "4K:3 64K:10
#				2M:87") and CG_TRACE_REQS ("requests
#				average-KiB"); "lost" where events were
#   cg_trace_remove		remove the instance

CG_TRACE=
CG_TRACE_FOLIOS=
CG_TRACE_REQS=

cg_trace_make()
{
	local file=$1 t=/sys/kernel/tracing dev ino disk

	if [ ! -d "$t/instances" ]; then
		mount -t tracefs nodev "$t" 2>/dev/null
	fi
	if [ ! -d "$t/events/filemap/mm_filemap_add_to_page_cache" ] ||
	   [ ! -d "$t/events/block/block_rq_issue" ]; then
		echo "no filemap and block tracepoints in $t" >&2
		return 1
	fi
	ino=$(stat -c %i "$file") || return 1
	dev=$(stat -c '%Hd:%Ld' "$file") || return 1
	disk=$dev
	if [ -e "/sys/dev/block/$dev/partition" ]; then
		disk=$(cat "$(readlink -f "/sys/dev/block/$dev/..")/dev")
	fi
	CG_TRACE=$t/instances/cacheguard.$$
	mkdir "$CG_TRACE" || { CG_TRACE=; return 1; }
	echo 0 >"$CG_TRACE/tracing_on"
	# 1 GiB in 4 KiB folios is 262144 events of about 40 bytes
	echo 32768 >"$CG_TRACE/buffer_size_kb"
	# the kernel's dev_t is major << 20 | minor
	echo "i_ino == $ino && s_dev == $(cg_trace_devt "$dev")" \
		>"$CG_TRACE/events/filemap/mm_filemap_add_to_page_cache/filter"
	echo "dev == $(cg_trace_devt "$disk") && rwbs ~ \"*R*\"" \
		>"$CG_TRACE/events/block/block_rq_issue/filter"
	echo 1 >"$CG_TRACE/events/filemap/mm_filemap_add_to_page_cache/enable"
	echo 1 >"$CG_TRACE/events/block/block_rq_issue/enable"
}

cg_trace_devt()
{
	echo $(((${1%%:*} << 20) | ${1##*:}))
}

cg_trace_start()
{
	echo >"$CG_TRACE/trace"
	echo 1 >"$CG_TRACE/tracing_on"
}

cg_trace_stop()
{
	local lost

	echo 0 >"$CG_TRACE/tracing_on"
	lost=$(awk '/^overrun:/ {n += $2} END {print n + 0}' \
		"$CG_TRACE"/per_cpu/cpu*/stats)
	# folios by size, as shares of the bytes added; requests and their
	# average size (block_rq_issue's third field after the event name is
	# its bytes)
	read -r CG_TRACE_FOLIOS CG_TRACE_REQS < <(awk -v lost="$lost" '
		/mm_filemap_add_to_page_cache:/ {
			o = "unknown"
			for (i = 1; i <= NF; i++)
				if ($i ~ /^order=/)
					o = substr($i, 7)
			n[o]++
			if (o != "unknown")
				pages += 2 ^ o
		}
		/block_rq_issue:/ {
			for (i = 1; i <= NF; i++)
				if ($i == "block_rq_issue:")
					break
			reqs++
			bytes += $(i + 3)
		}
		function size(o) {
			return o >= 8 ? 2 ^ (o - 8) "M" : 4 * 2 ^ o "K"
		}
		END {
			f = ""
			for (o = 0; o <= 10; o++)
				if (o in n)
					f = f (f == "" ? "" : ",") size(o) ":" \
						int(100 * n[o] * 2 ^ o / pages + 0.5)
			if ("unknown" in n)
				f = f (f == "" ? "" : ",") "unknown"
			if (f == "")
				f = "-"
			if (lost > 0)
				f = f ",lost"
			printf "%s %d %.0f\n", f, reqs,
				reqs ? bytes / reqs / 1024 : 0
		}' "$CG_TRACE/trace")
}

cg_trace_remove()
{
	[ -n "$CG_TRACE" ] && [ -d "$CG_TRACE" ] || return 0
	echo 0 >"$CG_TRACE/events/filemap/mm_filemap_add_to_page_cache/enable"
	echo 0 >"$CG_TRACE/events/block/block_rq_issue/enable"
	rmdir "$CG_TRACE" 2>/dev/null
	CG_TRACE=
}
