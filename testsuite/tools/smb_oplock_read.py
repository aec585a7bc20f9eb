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

import sys

from smb_tool import parse, read_all, run

try:
    from impacket import smb3, smb3structs as s3
except ImportError:
    print("python3-impacket is not installed")
    sys.exit(77)


def main():
    host, share, path, local, user, password, port, own = parse(
        'smb_oplock_read.py [-m READSIZE] //HOST/SHARE/PATH LOCALFILE', 'm:')
    size = int(own.get('m', 1 << 20))

    conn = smb3.SMB3(host, host, sess_port=port)
    conn.login(user, password)
    tree = conn.connectTree(share)
    fid = conn.create(tree, path.replace('/', '\\'),
                      s3.FILE_READ_DATA | s3.FILE_READ_ATTRIBUTES,
                      s3.FILE_SHARE_READ, s3.FILE_NON_DIRECTORY_FILE,
                      s3.FILE_OPEN, 0,
                      oplockLevel=s3.SMB2_OPLOCK_LEVEL_BATCH)
    got = read_all(lambda off: conn.read(tree, fid, off, size), len(local))
    conn.close(tree, fid)
    conn.logoff()
    if got != local:
        print('mismatch: %d of %d bytes' % (len(got), len(local)))
        return 1
    print('ok %d bytes' % len(got))
    return 0


if __name__ == '__main__':
    run(main)
