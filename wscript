#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Build vfs_cacheguard with the waf of a prepared Samba tree
# (tools/prepare-samba-tree; tools/waf runs this with the tree found).
#
# The module is compiled with exactly the flags and include paths Samba
# used for its own vfs_readahead module (bin/default/compile_commands.json)
# and linked with -shared and no Samba libraries: its undefined symbols
# bind at load time to the ones smbd already has.
#
# CACHEGUARD_SANITIZE=1 at configure time makes the sanitizer variant:
# everything built with AddressSanitizer and UndefinedBehaviorSanitizer
# (gcc's libasan/libubsan, the runtime smbd gets by LD_PRELOAD in the
# tests). make test-asan configures it into build-asan/ with its own waf
# lock file (WAFLOCK), so it never touches build/.
#
# CACHEGUARD_I386=1 at configure time makes the 32-bit variant: the
# engine and its unit tests alone, built with gcc -m32 against the i386
# cmocka (libcmocka-dev:i386), which has no Samba tree of its own to
# build a module against. make build-i386 configures it into build-i386/
# (its own lock file too); t07 checks its objects' libc calls and runs
# its unit tests under qemu-i386-static.

import json
import os
import re
import subprocess

from waflib import Errors

top = '.'
out = 'build'

VERSION = open(os.path.join(os.getcwd(),
               'VERSION')).read().strip()
WARNINGS = ['-Wall', '-Wextra', '-Wno-unused-parameter',
            '-Wmissing-prototypes', '-Werror=implicit-function-declaration']


def options(opt):
    opt.load('compiler_c')


def samba_module_flags(tree):
    """The compile flags of vfs_readahead.c, include paths made absolute"""
    path = os.path.join(tree, 'bin/default/compile_commands.json')
    with open(path) as f:
        entries = json.load(f)
    for e in entries:
        if e['file'].endswith('source3/modules/vfs_readahead.c'):
            break
    else:
        raise Errors.ConfigurationError('%s: no entry for vfs_readahead.c'
                                        % path)
    flags = []
    for a in e['arguments'][1:]:
        if a.startswith('-I') and not a.startswith('-I/'):
            flags.append('-I' + os.path.normpath(
                os.path.join(e['directory'], a[2:])))
        elif a.startswith(('-D', '-I', '-f', '-O', '-g', '-W')):
            if 'vfs_readahead' in a or a == '-MMD':
                continue
            flags.append(a)
    return flags


# The feature macros that set the size of off_t and time_t. The glue gets
# Samba's: its config.h and its module flags (getconf LFS_CFLAGS on
# 32-bit builds; dpkg-buildflags' -D_TIME_BITS=64 where a Debian release
# moved to a 64-bit time_t, armhf since Debian 13, not i386). The engine
# includes neither, so it gets them here: the same off_t and time_t as
# the glue, and always a 64-bit off_t (harmless where off_t is 64 bits
# anyway). Without it a 32-bit build calls pread() for pread64() and
# reads the wrong bytes past 2 GiB (issue 47).
ABI_MACROS = ('_FILE_OFFSET_BITS', '_TIME_BITS')


def samba_abi_macros(tree, flags):
    """ABI_MACROS as the module's flags and Samba's config.h define them"""
    found = {}
    for a in flags:
        name, _, value = a[2:].partition('=')
        if a.startswith('-D') and name in ABI_MACROS:
            found[name] = value
    path = os.path.join(tree, 'bin/default/include/config.h')
    with open(path) as f:
        for line in f:
            m = re.match(r'#define\s+(\w+)\s+(\S+)', line)
            if m and m.group(1) in ABI_MACROS:
                found[m.group(1)] = m.group(2)
    return found


def engine_defines(conf, tree, samba_flags):
    """-D_FILE_OFFSET_BITS=64 and the glue's _TIME_BITS, for everything"""
    found = samba_abi_macros(tree, samba_flags)
    if found.get('_FILE_OFFSET_BITS', '64') != '64':
        conf.fatal('Samba builds with _FILE_OFFSET_BITS=%s; the module '
                   'needs 64' % found['_FILE_OFFSET_BITS'])
    found['_FILE_OFFSET_BITS'] = '64'
    defines = ['%s=%s' % (n, found[n]) for n in ABI_MACROS if n in found]
    conf.msg('Feature macros (the glue\'s)', ' '.join(defines))
    return defines


def configure_i386(conf):
    """The 32-bit variant (CACHEGUARD_I386=1): the engine and its tests"""
    conf.env.ENGINE_ONLY = True
    conf.env.append_value('CFLAGS',
                          ['-g', '-O2', '-std=gnu11', '-m32'] + WARNINGS)
    conf.env.append_value('LINKFLAGS', ['-m32'])
    conf.msg('Variant', 'i386: the engine and its unit tests (gcc -m32)')
    # the i386 cmocka.pc (libcmocka-dev:i386) before the native one
    conf.check_cfg(package='cmocka', args='--cflags --libs',
                   uselib_store='CMOCKA',
                   pkg_config_path='/usr/lib/i386-linux-gnu/pkgconfig')
    conf.check(fragment=CMOCKA_PROGRAM, features='c cprogram',
               use='CMOCKA', msg='Checking for an i386 cmocka to link',
               errmsg='no: install gcc-multilib and libcmocka-dev:i386 '
                      '(make build-i386)')


CMOCKA_PROGRAM = '''
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
static void nothing(void **state)
{
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(nothing) };

	return cmocka_run_group_tests(tests, NULL, NULL);
}
'''


def configure(conf):
    conf.load('compiler_c')
    tree = os.environ.get('CACHEGUARD_SAMBA_TREE')
    if not tree:
        conf.fatal('CACHEGUARD_SAMBA_TREE is not set; build with make '
                   '(tools/waf), which prepares the Samba tree')
    stamp = open(os.path.join(tree, '.cacheguard-prepared')).read().strip()
    installed = subprocess.run(['dpkg-query', '-W', '-f=${Version}', 'samba'],
                               capture_output=True, text=True).stdout
    if stamp != installed:
        conf.fatal('the Samba tree %s was prepared for samba %s but the '
                   'installed smbd is %s; run make again to prepare a '
                   'matching tree' % (tree, stamp, installed))
    conf.msg('Samba tree', tree)
    conf.msg('Built for samba', stamp)
    conf.env.SAMBA_TREE = tree
    conf.env.SAMBA_DEB_VERSION = stamp
    samba_flags = samba_module_flags(tree)
    # Everything, the engine, its tests and tools, with the glue's off_t
    conf.env.append_value('DEFINES',
                          engine_defines(conf, tree, samba_flags))
    if os.environ.get('CACHEGUARD_I386') == '1':
        configure_i386(conf)
        return
    conf.env.CFLAGS_SAMBA = samba_flags
    conf.env.cshlib_PATTERN = '%s.so'
    conf.check_cfg(package='cmocka', args='--cflags --libs',
                   uselib_store='CMOCKA')
    conf.check_cfg(package='smbclient', args='--cflags --libs',
                   uselib_store='SMBCLIENT')
    conf.find_program('xsltproc', var='XSLTPROC')
    conf.env.append_value('CFLAGS', ['-g', '-O2', '-std=gnu11'] + WARNINGS)
    if os.environ.get('CACHEGUARD_SANITIZE') == '1':
        # Reports go on (recover) so that smbd logs them; the unit test
        # runs make any report fatal with halt_on_error=1 (test-asan)
        san = ['-fsanitize=address,undefined', '-fno-omit-frame-pointer']
        conf.env.append_value('CFLAGS', san)
        conf.env.append_value('LINKFLAGS', san)
        conf.msg('Sanitizers', 'address, undefined')


def build(bld):
    engine = bld.path.ant_glob('source/*.c')
    # The engine includes no Samba header but lib/util/dlinklist.h, a
    # header of macros: one list implementation for glue and engine
    bld.objects(source=engine, target='cg_engine',
                includes=[bld.env.SAMBA_TREE],
                cflags=['-fPIC', '-fvisibility=hidden'])

    for t in bld.path.ant_glob('testsuite/unit/test_*.c'):
        bld.program(source=[t], target=t.name[:-2], use='cg_engine CMOCKA',
                    includes='source', install_path=None)
    if bld.env.ENGINE_ONLY:
        return

    # Only samba_init_module is exported; the engine stays private
    bld.shlib(source=bld.path.ant_glob('modules/*.c'), target='cacheguard',
              use='cg_engine SAMBA',
              defines=['vfs_cacheguard_init=samba_init_module',
                       'CG_SAMBA_PACKAGE="%s"' % bld.env.SAMBA_DEB_VERSION],
              cflags=['-Wno-missing-prototypes',
                      '-Wno-sign-compare', '-Wno-missing-field-initializers'],
              linkflags=['-Wl,--version-script=%s' %
                         bld.path.find_node('modules/exports.map').abspath()],
              install_path=None)

    # cgtest.so, a test-only module stacked below cacheguard (t15);
    # like every test program here it is never installed
    bld.shlib(source='testsuite/modules/vfs_cgtest.c', target='cgtest',
              use='SAMBA',
              defines=['vfs_cgtest_init=samba_init_module'],
              cflags=['-Wno-missing-prototypes',
                      '-Wno-sign-compare', '-Wno-missing-field-initializers'],
              linkflags=['-Wl,--version-script=%s' %
                         bld.path.find_node('modules/exports.map').abspath()],
              install_path=None)

    # Test and benchmark tools: testsuite/tools/NAME.c becomes build/NAME;
    # smb_*.c ones talk SMB through libsmbclient
    for t in bld.path.ant_glob('testsuite/tools/*.c'):
        use = 'cg_engine'
        if t.name.startswith('smb_'):
            use += ' SMBCLIENT'
        bld.program(source=[t], target=t.name[:-2], use=use,
                    includes='source', lib=['m'], install_path=None)

    # The man pages, rendered with Debian's docbook-xsl
    for xml in bld.path.ant_glob('docs/*.8.xml'):
        bld(rule='${XSLTPROC} --nonet -o ${TGT} '
                 'http://docbook.sourceforge.net/release/xsl/current/'
                 'manpages/docbook.xsl ${SRC}',
            source=xml, target=xml.name[:-4])

