#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The harness's smbd starts when its port is taken by a socket that is
# bound but not listening, as a client's connection from an ephemeral
# port is: smbd cannot bind the port ("open_sockets_smbd() failed") and
# no listener shows for it, so the harness moves to another port. A
# rehearsal lost t96 to this (4 checks) when a random port fell in the
# kernel's ephemeral range. Ports are picked below that range.
set -u
. "$(dirname "$0")/../lib/check.sh"
cg_need_root "the harness's smbd"
. "$(dirname "$0")/../lib/smbd.sh"
cg_enter_namespace "$0" "$@"

cg_smbd_init
cg_share plain
held=$CG_PORT
python3 - "$held" "$CG_ROOT/ready" <<'PY' &
import socket, sys, time
s = socket.socket()
s.bind(("0.0.0.0", int(sys.argv[1])))
open(sys.argv[2], "w").close()
time.sleep(60)
PY
holder=$!
for _ in $(seq 1 100); do
	[ -e "$CG_ROOT/ready" ] && break
	sleep 0.1
done
cg_expect "port $held is bound by another socket, not listening" \
	test -e "$CG_ROOT/ready" -a -z "$(ss -Htln "sport = :$held")"
if cg_smbd_start; then
	cg_pass "smbd starts on another port"
else
	cg_fail "smbd starts on another port" "see above"
fi
cg_expect "it listens on a port other than $held ($CG_PORT)" \
	test "$CG_PORT" != "$held"
client_ls()
{
	cg_smbclient plain "ls" >/dev/null 2>&1
}
cg_expect "a client reaches it" client_ls
read -r low _ </proc/sys/net/ipv4/ip_local_port_range
for _ in $(seq 1 200); do
	cg_pick_port
	[ "$CG_PORT" -lt "$low" ] || break
done
cg_expect "picked ports are below the ephemeral range ($low)" \
	test "$CG_PORT" -lt "$low"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
cg_smbd_cleanup
