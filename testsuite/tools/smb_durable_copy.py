#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
#
# smb_durable_copy: copy a file over SMB2 with a durable handle, lose the
# connection half way, reconnect the handle on a new connection and read
# on: a client whose network dropped in the middle of a copy. Every byte
# is compared with the file read locally.
#
#   smb_durable_copy.py [-p PORT] [-U USER%PASS] [-b BYTES] [-m READSIZE]
#                       //HOST/SHARE/PATH LOCALFILE
#
#   -b BYTES	read this far, then drop the connection (default: half)
#   -m SIZE	bytes per SMB2 READ (default 1 MiB)
#
# libsmbclient and smbclient ask for no durable handles, so this speaks
# SMB2 itself (python3-impacket): a batch oplock and a DHnQ context on
# the first CREATE, the TCP connection closed without a logoff, then a
# new session and a CREATE with a DHnC context naming the old file id.
# Prints "ok N bytes, reconnected at B" and exits 0 when the reconnect
# was granted and every byte matched; 1 on a mismatch or a refused
# reconnect; 2 on other errors; 77 when python3-impacket is missing.
#
# Copyright (C) 2026 The vfs_cacheguard authors

import sys

from smb_tool import Context, options, run

try:
    from impacket import smb3, smb3structs as s3
except ImportError:
    print("python3-impacket is not installed")
    sys.exit(77)


def connect(host, port, user, password, share):
    conn = smb3.SMB3(host, host, sess_port=port)
    conn.login(user, password)
    return conn, conn.connectTree(share)


def open_file(conn, tree, path, context):
    return conn.create(tree, path, s3.FILE_READ_DATA | s3.FILE_READ_ATTRIBUTES,
                       s3.FILE_SHARE_READ, s3.FILE_NON_DIRECTORY_FILE,
                       s3.FILE_OPEN, 0,
                       oplockLevel=s3.SMB2_OPLOCK_LEVEL_BATCH,
                       createContexts=[context])


def read_compare(conn, tree, fid, local, off, end, size):
    """Read [off, end) and compare; returns the new offset or raises"""
    while off < end:
        want = min(size, end - off)
        try:
            got = conn.read(tree, fid, off, want)
        except smb3.SessionError as e:
            if e.get_error_code() == 0xc0000011:	# STATUS_END_OF_FILE
                return off
            raise
        if not got:
            return off
        local.seek(off)
        if got != local.read(len(got)):
            raise ValueError("MISMATCH bytes in %d+%d" % (off, len(got)))
        off += len(got)
    return off


def main():
    port, user, password, own, args = options('b:m:', 'root', 'cacheguard')
    at = int(own['b'], 0) if 'b' in own else None
    size = int(own.get('m', '1048576'), 0)
    if len(args) != 2 or not args[0].startswith('//'):
        print('usage: smb_durable_copy.py [-p PORT] [-U USER%PASS] '
              '[-b BYTES] [-m READSIZE] //HOST/SHARE/PATH LOCALFILE',
              file=sys.stderr)
        return 2
    host, share, path = args[0][2:].split('/', 2)
    local = open(args[1], 'rb')
    total = local.seek(0, 2)
    if at is None:
        at = total // 2

    conn, tree = connect(host, port, user, password, share)
    fid = open_file(conn, tree, path, Context(b'DHnQ', b'\0' * 16))
    off = read_compare(conn, tree, fid, local, 0, at, size)
    # the network drops: no close, no logoff
    conn._NetBIOSSession.close()

    conn, tree = connect(host, port, user, password, share)
    try:
        fid = open_file(conn, tree, path, Context(b'DHnC', fid))
    except smb3.SessionError as e:
        print("reconnect refused: %s" % e)
        return 1
    off = read_compare(conn, tree, fid, local, off, total + size, size)
    conn.close(tree, fid)
    conn.logoff()
    if off != total:
        print("MISMATCH length: got %d want %d" % (off, total))
        return 1
    print("ok %d bytes, reconnected at %d" % (off, at))
    return 0


if __name__ == '__main__':
    run(main, mismatch=ValueError)
