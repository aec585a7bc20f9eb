#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Debian's smbd with the module built under AddressSanitizer and
# UndefinedBehaviorSanitizer (build-asan/cacheguard.so): the ASan
# runtime the module was linked against is preloaded into smbd, which
# then runs integration scripts (CG_ASAN_SCRIPTS, name prefixes; make
# test runs t10 t15 t35, make test-asan all four with t20). Every
# report the runtimes write (ASAN_OPTIONS / UBSAN_OPTIONS log_path, a
# directory of this script's own) fails the script it came from.
#
# smbd is not instrumented, so reports come from the module's code, or
# from ASan's interceptors (memcpy, strlen, ...) called anywhere in
# smbd; leaks are not looked for (smbd leaks by design at exit); UBSan
# reports and goes on, so a run shows every report, not just the first.
set -u
. "$(dirname "$0")/../lib/check.sh"
cg_need_root "sanitized module in smbd"
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
asan=${CG_ASAN_BUILD:-$top/build-asan}
scripts=${CG_ASAN_SCRIPTS:-t10 t15 t35}

module=$asan/cacheguard.so
if [ ! -f "$module" ]; then
	cg_fail "sanitized module" "no $module: make build-asan"
	exit 0
fi
runtime=$(ldd "$module" | awk '/libasan/ { print $3 }')
if [ ! -f "$runtime" ]; then
	cg_fail "sanitized module" "$module links no ASan runtime"
	exit 0
fi

# asan_env DIR [EXTRA]: ASan and UBSan options for smbd, reports into DIR
asan_env()
{
	local a=detect_leaks=0:halt_on_error=0:verify_asan_link_order=0

	printf '%s ' "ASAN_OPTIONS=$a:log_path=$1/asan${2:-}" \
		"UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=0:log_path=$1/ubsan"
}

# report FILE: its first lines, and whether they name the module
report()
{
	local where=elsewhere

	if grep -qE 'cacheguard|[^a-z]cg_[a-z_]+ ' "$1"; then
		where="in cacheguard frames"
	fi
	echo "$(basename "$1") ($where):"
	head -n 40 "$1"
}

# smbd may exit while ASan still writes a report from another thread,
# which then ends after its first lines: a shim after the runtime makes
# smbd's exit() wait for its report (testsuite/modules/asan_exit_wait.c)
# (built once: the selfcheck's run of this script is given the parent's)
if [ -z "${CG_EXITWAIT:-}" ]; then
	CG_EXITWAIT=$(mktemp -d /tmp/cacheguard-exitwait.XXXXXX)
	export CG_EXITWAIT
	trap 'rm -rf "$CG_EXITWAIT"' EXIT
fi
exitwait=$CG_EXITWAIT
if [ ! -f "$exitwait/asan_exit_wait.so" ] &&
	! gcc -shared -fPIC -O2 -o "$exitwait/asan_exit_wait.so" \
		"$here/../modules/asan_exit_wait.c" -ldl \
		>"$exitwait/gcc.out" 2>&1; then
	cg_fail "build the exit shim" "$(head -n 3 "$exitwait/gcc.out")"
	exit 0
fi

export CG_MODULE=$module
export CG_SMBD_PRELOAD="$runtime $exitwait/asan_exit_wait.so"

# --- the pipeline is live -------------------------------------------
# A child smbd serving a cacheguard share must map the ASan runtime and
# the sanitized module, and a report it makes must land in the log
# directory. The report: a SIGSEGV sent to it, which ASan turns into a
# "DEADLY SIGNAL" report when smbd is not let install its own handler.
selfcheck()
{
	local dir=$1 pid p reader

	. "$here/../lib/smbd.sh"
	CG_SMBD_ENV="$(asan_env "$dir" ":allow_user_segv_handler=0")"
	cg_smbd_init
	cg_share guard "vfs objects = cacheguard" "cacheguard:mode = dontneed"
	head -c $((32 << 20)) /dev/urandom >"$CG_SHARE/f.bin"
	cg_smbd_start || { cg_fail "smbd starts" "see above"; return; }
	"$CG_BUILD/smb_readpause" -p "$CG_PORT" -U "$CG_USER%$CG_PASS" \
		-b $((1 << 20)) -r "$CG_ROOT/paused" -w "$CG_ROOT/go" -t 30 \
		//127.0.0.1/guard/f.bin "$CG_SHARE/f.bin" \
		>"$CG_ROOT/pause.out" 2>&1 &
	reader=$!
	cg_wait_file "$CG_ROOT/paused"
	pid=
	for p in $(cg_smbd_pids); do
		grep -q '/cacheguard\.so$' "/proc/$p/maps" 2>/dev/null &&
			pid=$p
	done
	if [ -n "$pid" ] && grep -q 'libasan' "/proc/$pid/maps" &&
		cmp -s "$module" "$CG_ROOT/vfs/cacheguard.so"; then
		cg_pass "the serving smbd maps libasan and build-asan's module"
	else
		cg_fail "the serving smbd maps libasan and build-asan's module" \
			"pid '${pid:-none}': $(grep -cE 'libasan|cacheguard' \
			"/proc/${pid:-0}/maps" 2>/dev/null) maps"
	fi
	# while the client holds the session: its smbd must still be there
	[ -n "$pid" ] && kill -SEGV "$pid" 2>/dev/null
	for _ in $(seq 1 300); do
		grep -qs 'AddressSanitizer' "$dir/asan.$pid" && break
		sleep 0.1
	done
	if grep -qs "AddressSanitizer" "$dir/asan.$pid"; then
		cg_pass "a report from that smbd lands in the scanned directory"
	else
		cg_fail "a report from that smbd lands in the scanned directory" \
			"nothing in $dir: $(ls "$dir")"
	fi
	touch "$CG_ROOT/go"
	wait "$reader"	# it fails: its smbd is gone
}
if [ "${1:-}" = --selfcheck ]; then
	selfcheck "$2"
	exit 0
fi

# smbd writes its reports as the client's user
logs=$(mktemp -d /tmp/cacheguard-asan.XXXXXX)
trap 'rm -rf "$logs" "$exitwait"' EXIT
chmod 0755 "$logs"
mkdir -m 0777 "$logs/selfcheck"
CG_IN_NAMESPACE=1 unshare -m --propagation private \
	bash "$0" --selfcheck "$logs/selfcheck"

# --- the scripts, under the sanitizers -------------------------------
for prefix in $scripts; do
	for s in "$here/$prefix"*.sh; do
		[ -f "$s" ] || { cg_fail "$prefix" "no such script"; continue; }
		name=$(basename "$s" .sh)
		case $name in
		*sanitize*) continue ;;	# t1 would match t12 itself
		esac
		dir=$logs/$name
		mkdir -m 0777 "$dir"
		start=$(date +%s)
		out=$(env -u CG_IN_NAMESPACE CG_SMBD_ENV="$(asan_env "$dir")" \
			bash "$s" 2>&1)
		rc=$?
		secs=$(($(date +%s) - start))
		# the script's own results, marked as the sanitized run's
		sed -n 's/^\(PASS\|FAIL\|SKIPPED\): /\1: [asan] /p' <<<"$out"
		if [ $rc -ne 0 ] && ! grep -q '^FAIL: ' <<<"$out"; then
			cg_fail "[asan] $name" "exited $rc before reporting"
		fi
		if [ -z "$(ls -A "$dir")" ]; then
			cg_pass "no ASan or UBSan report from smbd in $name,\
 ${secs}s"
			continue
		fi
		for f in "$dir"/*; do
			cg_fail "no ASan or UBSan report from smbd in $name" \
				"$(report "$f")"
		done
	done
done
exit 0
