#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
#
# smb_oplock_read: read a file whole over SMB2 on a handle that asks for a
# batch oplock, as Windows programs opening a file for themselves do, in
# reads of READSIZE, comparing every byte with LOCALFILE.
#
#   smb_oplock_read.py [-p PORT] [-U USER%PASS] [-m READSIZE]
#                      //HOST/SHARE/PATH LOCALFILE
#
# What smbd granted is in its log ("got kernel oplock" at locking:5 with
# kernel oplocks = yes). Prints "ok N bytes" and exits 0 when every byte
# matched; 1 on a mismatch; 2 on other errors; 77 when python3-impacket
# is missing.
#
# Copyright (C) 2026 The vfs_cacheguard authors

import getopt
import sys

try:
    from impacket import smb3, smb3structs as s3
except ImportError:
    print("python3-impacket is not installed")
    sys.exit(77)


def main():
    port, user, password, size = 445, 'guest', '', 1 << 20
    opts, args = getopt.getopt(sys.argv[1:], 'p:U:m:')
    for o, v in opts:
        if o == '-p':
            port = int(v)
        elif o == '-U':
            user, _, password = v.partition('%')
        elif o == '-m':
            size = int(v)
    if len(args) != 2 or not args[0].startswith('//'):
        print('usage: smb_oplock_read.py //HOST/SHARE/PATH LOCALFILE')
        return 2
    host, share, path = args[0][2:].split('/', 2)
    local = open(args[1], 'rb').read()

    conn = smb3.SMB3(host, host, sess_port=port)
    conn.login(user, password)
    tree = conn.connectTree(share)
    fid = conn.create(tree, path.replace('/', '\\'),
                      s3.FILE_READ_DATA | s3.FILE_READ_ATTRIBUTES,
                      s3.FILE_SHARE_READ, s3.FILE_NON_DIRECTORY_FILE,
                      s3.FILE_OPEN, 0,
                      oplockLevel=s3.SMB2_OPLOCK_LEVEL_BATCH)
    got = bytearray()
    while len(got) < len(local):
        data = conn.read(tree, fid, len(got), size)
        if not data:
            break
        got += data
    conn.close(tree, fid)
    conn.logoff()
    if bytes(got) != local:
        print('mismatch: %d of %d bytes' % (len(got), len(local)))
        return 1
    print('ok %d bytes' % len(got))
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001 (report any failure, exit 2)
        print('error: %s' % e)
        sys.exit(2)
