#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
#
# smb_write_paths: stream a file over SMB2 while the same client changes
# it a few MiB ahead of the reader (where a direct stream's prefetch is)
# through one of the ways smbd changes a file's bytes other than WRITE
# (smb_direct_check covers that one). Every read is compared with a
# pread() of the local file.
#
#   smb_write_paths.py [-p PORT] [-U USER%PASS] MODE //HOST/SHARE/PATH
#                      LOCALFILE [SOURCE]
#
#   MODE zerodata FSCTL_SET_ZERO_DATA over 64 KiB (smbd: fallocate
#		 punching a hole, keeping the size)
#   MODE copychunk FSCTL_SRV_COPYCHUNK_WRITE of 64 KiB from SOURCE, a
#		 file on the same share (smbd: server-side copy,
#		 copy_file_range)
#   MODE setsize SET_INFO end of file: cut the file 3 MiB ahead of the
#		 reader, then grow it back (smbd: ftruncate)
#
# The reader reads 1 MiB at a time, one request in flight, and changes
# the file after every 8th read. Prints "ok N reads, M changes" and exits
# 0 when every byte matched; 1 on a mismatch; 2 on other errors; 77 when
# python3-impacket is missing.
#
# Copyright (C) 2026 The vfs_cacheguard authors

import getopt
import os
import struct
import sys

from smb_tool import options, run

try:
    from impacket import smb3, smb3structs as s3
    from impacket.nt_errors import STATUS_END_OF_FILE
    from impacket.smb3 import SessionError
except ImportError:
    print("python3-impacket is not installed")
    sys.exit(77)

MiB = 1 << 20
CHANGE = 64 * 1024
FSCTL_SET_ZERO_DATA = 0x000980C8
FSCTL_SRV_REQUEST_RESUME_KEY = 0x00140078
FSCTL_SRV_COPYCHUNK_WRITE = 0x001480F2
FILE_END_OF_FILE_INFORMATION = 20


def usage():
    print("usage: smb_write_paths.py [-p PORT] [-U USER%PASS] "
          "zerodata|copychunk|setsize //HOST/SHARE/PATH LOCALFILE "
          "[SOURCE]", file=sys.stderr)
    sys.exit(2)


def open_rw(conn, tree, path):
    return conn.create(tree, path,
                       s3.FILE_READ_DATA | s3.FILE_WRITE_DATA |
                       s3.FILE_READ_ATTRIBUTES | s3.FILE_WRITE_ATTRIBUTES,
                       s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE,
                       s3.FILE_NON_DIRECTORY_FILE, s3.FILE_OPEN, 0)


def smb_read(conn, tree, fid, off, n):
    try:
        return conn.read(tree, fid, off, n)
    except SessionError as e:
        if e.get_error_code() == STATUS_END_OF_FILE:
            return b''
        raise


class Changer:
    """Changes [off, off + CHANGE) of the file through one smbd path"""

    def __init__(self, mode, conn, tree, fid, source, size):
        self.mode = mode
        self.conn = conn
        self.tree = tree
        self.fid = fid
        self.size = size
        self.cut = False
        self.n = 0
        self.key = None
        if mode == 'copychunk':
            src = conn.create(tree, source,
                              s3.FILE_READ_DATA | s3.FILE_READ_ATTRIBUTES,
                              s3.FILE_SHARE_READ, s3.FILE_NON_DIRECTORY_FILE,
                              s3.FILE_OPEN, 0)
            out = conn.ioctl(tree, src, FSCTL_SRV_REQUEST_RESUME_KEY,
                             s3.SMB2_0_IOCTL_IS_FSCTL, b'', 0, 32)
            self.key = out[:24]

    def change(self, off):
        self.n += 1
        if self.mode == 'zerodata':
            blob = struct.pack('<qq', off, off + CHANGE)
            self.conn.ioctl(self.tree, self.fid, FSCTL_SET_ZERO_DATA,
                            s3.SMB2_0_IOCTL_IS_FSCTL, blob, 0, 0)
        elif self.mode == 'copychunk':
            # from a place in the source that moves with every copy
            src_off = (self.n * 7 * CHANGE) % (8 * MiB)
            blob = (self.key + struct.pack('<LL', 1, 0) +
                    struct.pack('<QQLL', src_off, off, CHANGE, 0))
            self.conn.ioctl(self.tree, self.fid, FSCTL_SRV_COPYCHUNK_WRITE,
                            s3.SMB2_0_IOCTL_IS_FSCTL, blob, 0, 12)
        else:
            # cut at an odd place ahead, then grow back: zeros there now
            eof = self.size if self.cut else off + 12345
            self.conn.setInfo(self.tree, self.fid, struct.pack('<q', eof),
                              s3.SMB2_0_INFO_FILE,
                              FILE_END_OF_FILE_INFORMATION)
            self.cut = not self.cut


def main():
    try:
        port, user, password, _, args = options()
    except getopt.GetoptError:
        usage()
    if len(args) not in (3, 4) or args[0] not in (
            'zerodata', 'copychunk', 'setsize'):
        usage()
    if args[0] == 'copychunk' and len(args) != 4:
        usage()
    mode, url, local = args[0], args[1], args[2]
    source = args[3] if len(args) == 4 else None
    host, share, path = url.lstrip('/').split('/', 2)

    fd = os.open(local, os.O_RDONLY)
    size = os.fstat(fd).st_size
    conn = smb3.SMB3(host, host, sess_port=port)
    conn.login(user, password)
    tree = conn.connectTree(share)
    fid = open_rw(conn, tree, path)
    changer = Changer(mode, conn, tree, fid, source, size)

    off = reads = 0
    while off < size:
        got = smb_read(conn, tree, fid, off, MiB)
        want = os.pread(fd, MiB, off)
        reads += 1
        if got != want:
            at = next((i for i in range(min(len(got), len(want)))
                       if got[i] != want[i]), min(len(got), len(want)))
            print("mismatch at %d (read %d at %d: %d bytes, local %d)" %
                  (off + at, reads, off, len(got), len(want)))
            return 1
        off += MiB
        if reads % 8 == 0 and off + 3 * MiB + CHANGE < size:
            changer.change(off + 3 * MiB)
    conn.close(tree, fid)
    print("ok %d reads, %d changes" % (reads, changer.n))
    return 0


if __name__ == '__main__':
    run(main)
