# SPDX-License-Identifier: GPL-3.0-or-later
#
# What the SMB test clients written for python3-impacket share: their
# command line (-p PORT -U USER%PASS //HOST/SHARE/PATH LOCALFILE, and
# options of their own) and their exit codes (0 ok, 1 a mismatch, 2 any
# other error, 77 without python3-impacket).
#
# Copyright (C) 2026 The vfs_cacheguard authors

import getopt
import struct
import sys


class Context:
    """An SMB2 create context (impacket has no type for it): a 4-byte name
    and its data, e.g. DHnQ (a durable handle asked for) with 16 zero
    bytes, DHnC (a durable reconnect) with the old file id"""

    def __init__(self, name, data):
        self.name = name
        self.data = data

    def getData(self):
        # name at 16, padded to 8; data after it
        return (struct.pack('<LHHHHL', 0, 16, 4, 0, 24, len(self.data)) +
                self.name + b'\0' * 4 + self.data)


def options(letters='', user='guest', password=''):
    """(port, user, password, options, arguments) from sys.argv: -p PORT
    (445), -U USER%PASS (user and password as given otherwise); options
    holds the values of the tool's own letters, arguments what follows"""
    port, own = 445, {}
    opts, args = getopt.getopt(sys.argv[1:], 'p:U:' + letters)
    for o, v in opts:
        if o == '-p':
            port = int(v)
        elif o == '-U':
            user, _, password = v.partition('%')
        else:
            own[o[1:]] = v
    return port, user, password, own, args


def parse(usage, letters=''):
    """(host, share, path, local bytes, user, password, port, options)
    from sys.argv; options holds the values of the tool's own letters"""
    port, user, password, own, args = options(letters)
    if len(args) != 2 or not args[0].startswith('//'):
        print('usage: ' + usage)
        sys.exit(2)
    host, share, path = args[0][2:].split('/', 2)
    local = open(args[1], 'rb').read()
    return host, share, path, local, user, password, port, own


def read_all(read, limit=None):
    """The bytes read(offset) returns from offset 0 on, until it returns
    none or limit bytes are read"""
    got = bytearray()
    while limit is None or len(got) < limit:
        data = read(len(got))
        if not data:
            break
        got += data
    return bytes(got)


def run(main, mismatch=()):
    """Exit with main()'s status; an exception of a type in mismatch is
    status 1 (a mismatch), any other error status 2, with its text"""
    try:
        sys.exit(main())
    except SystemExit:
        raise
    except mismatch as e:
        print(e)
        sys.exit(1)
    except Exception as e:  # noqa: BLE001 (report any failure, exit 2)
        print('error: %s' % e)
        sys.exit(2)
