#!/usr/bin/env python3
"""Writes tools/ipclock/startup_path.ld: the code `ipclock run` executes on
the local stores, placed together at the start of the command's text.

Why: every page of the command that a run touches stays resident, and the
kernel maps a file in 64 KiB runs around each page fault. Spread over the
3 MiB of text, the ~540 functions a run executes on the three stores
(about 350 KiB, counting whole archive members) touched some twenty;
gathered in one output section they touch six, and the command's peak
RSS drops by about 1 MiB (doc/performance.md, "Start-up").

How: the command is linked again with a map file, run under valgrind's
callgrind on the flock, shm and semaphore stores, and each function it
executed is traced to the input section that holds it: its own section in
objects built with -ffunction-sections (libipclock.a's in builds without
debug info, the C++ runtime's), or the whole .text of an archive member
built without (Debian's Abseil and mbedTLS). The result is a linker script
fragment that GNU ld inserts before .text (INSERT leaves its default script
in place). A stale line matches nothing and costs nothing, so the file only
needs writing again when start-up code moves a lot; run the bench's
`--only startup` section before and after.

The compiler inlines differently at each level of optimization, so the file
is the union of what the builds named run: write it from a release build
and from a build as the Debian package makes it (buildtype plain, with
dpkg-buildflags' hardening flags; see debian/rules).

Usage: tools/ipclock/startup_path.py BUILD_DIR...   (builds without debug
info, e.g. -Dbuildtype=release; needs valgrind)
"""

import bisect
import os
import re
import shutil
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'startup_path.ld')
HEADER = """\
/* The code `ipclock run` executes on the local stores, placed together so
 * that start-up touches a few 64 KiB runs of the command's text instead of
 * some twenty (doc/performance.md, "Start-up"). Written by
 * tools/ipclock/startup_path.py; used only in builds without debug info,
 * linked by GNU ld (tools/meson.build). A line that matches nothing is
 * ignored, so the file can lag behind the code; it only costs peak RSS. */
"""


def link_with_map(build, out, mapfile):
    cmds = subprocess.run(['ninja', '-C', build, '-t', 'commands', 'tools/ipclock'],
                          check=True, capture_output=True, text=True).stdout
    link = cmds.strip().split('\n')[-1]
    link = re.sub(r'-Wl,-T,\S*startup_path\.ld', '', link)
    link = link.replace('-o tools/ipclock ', '-o %s -Wl,-Map=%s ' % (out, mapfile), 1)
    subprocess.run(link, shell=True, cwd=build, check=True)


def input_sections(mapfile):
    """(address, size, section name, file) of every .text* input section."""
    lines = open(mapfile).read().split('\n')
    start = next(i for i, l in enumerate(lines) if l.startswith('Linker script and memory map'))
    full = re.compile(r'^ (\.text\S*)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$')
    name_only = re.compile(r'^ (\.text\S*)$')
    rest = re.compile(r'^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$')
    secs = []
    i = start
    while i < len(lines):
        m = full.match(lines[i])
        if m:
            secs.append((int(m.group(2), 16), int(m.group(3), 16), m.group(1), m.group(4)))
        else:
            m = name_only.match(lines[i])
            r = rest.match(lines[i + 1]) if m and i + 1 < len(lines) else None
            if r:
                secs.append((int(r.group(1), 16), int(r.group(2), 16), m.group(1), r.group(3)))
                i += 1
        i += 1
    return sorted(s for s in secs if s[0] > 0 and s[1] > 0)


def executed_functions(binary, runs):
    """Mangled names of the functions of `binary` that `runs` execute."""
    names = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, argv in enumerate(runs):
            out = os.path.join(tmp, 'cg.%d' % n)
            subprocess.run(['valgrind', '--tool=callgrind', '--demangle=no',
                            '--callgrind-out-file=' + out, binary] + argv,
                           check=True, capture_output=True)
            report = subprocess.run(['callgrind_annotate', '--threshold=100', out],
                                    check=True, capture_output=True, text=True).stdout
            for line in report.split('\n'):
                m = re.match(r'^.*:(\S+) \[(.*)\]$', line)
                if m and m.group(2) == binary and m.group(1) not in names:
                    names.append(m.group(1))
    return names


# Abseil's symbols carry the inline namespace of its build (`absl::debian3`
# in Debian 12's, `absl::lts_20230125` in an LTS release), mangled as a
# component after `4absl`. A pattern names it with a wildcard, so that the
# file does not tie the link to one build of Abseil: for Debian's it matches
# exactly what the full name does (the linked command is byte for byte the
# same). Under another Abseil a name that refers back to an earlier
# component (`S1_`, counted with the inline namespace) may not match; it is
# then placed as if unnamed, which costs peak RSS, never correctness.
ABSEIL_INLINE_NAMESPACE = re.compile(r'(4absl)(?:7debian\d|12lts_\d{8})')


def input_section_patterns(build):
    """The input sections of the functions a run of `build`'s command
    executes, as linker script patterns, in the order first executed; and
    their size, how many functions ran, and how many could not be placed."""
    with tempfile.TemporaryDirectory() as tmp:
        binary = os.path.join(tmp, 'ipclock')
        mapfile = os.path.join(tmp, 'ipclock.map')
        link_with_map(build, binary, mapfile)
        lockdir = os.path.join(tmp, 'locks')
        os.mkdir(lockdir)
        tag = 'ipclock-startup-path.%d' % os.getpid()
        runs = [['run', '--store', 'flock://' + lockdir, '--key', 'k', '--', 'true'],
                ['run', '--store', 'shm://' + tag, '--key', 'k', '--', 'true'],
                ['run', '--store', 'semaphore', '--key', tag, '--', 'true']]
        try:
            functions = executed_functions(binary, runs)
        finally:
            if os.path.exists('/dev/shm/ipclock.' + tag):
                os.unlink('/dev/shm/ipclock.' + tag)
        secs = input_sections(mapfile)
        addresses = {}
        nm = subprocess.run(['nm', '--defined-only', binary], check=True,
                            capture_output=True, text=True).stdout
        for line in nm.split('\n'):
            p = line.split()
            if len(p) == 3:
                addresses.setdefault(p[2], int(p[0], 16))
    starts = [s[0] for s in secs]
    patterns, unplaced, size = [], 0, 0
    for f in functions:
        a = addresses.get(f)
        k = bisect.bisect_right(starts, a) - 1 if a is not None else -1
        if k < 0 or a >= secs[k][0] + secs[k][1]:
            unplaced += 1
            continue
        _, sec_size, name, path = secs[k]
        if name in ('.text', '.text.unlikely', '.text.startup', '.text.hot'):
            # A member built without -ffunction-sections: its whole section.
            m = re.match(r'.*/([^/(]+\.a)\((.*)\)$', path)
            pattern = '*%s:%s(%s)' % (m.group(1), m.group(2), name) if m else \
                '*%s(%s)' % (os.path.basename(path), name)
        else:
            pattern = '*(%s)' % ABSEIL_INLINE_NAMESPACE.sub(r'\1*', name)
        if pattern not in patterns:
            patterns.append(pattern)
            size += sec_size
    return patterns, size, len(functions), unplaced


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if shutil.which('valgrind') is None:
        sys.exit('startup_path.py: valgrind is not installed (apt-get install valgrind)')
    patterns = []
    for build in sys.argv[1:]:
        found, size, functions, unplaced = input_section_patterns(os.path.abspath(build))
        patterns += [p for p in found if p not in patterns]
        print('%s: %d input sections, %d bytes, for %d functions (%d not placed)' %
              (build, len(found), size, functions, unplaced))
    with open(SCRIPT, 'w') as out:
        out.write(HEADER + 'SECTIONS\n{\n  .text.startup_path :\n  {\n')
        out.writelines('    %s\n' % p for p in patterns)
        out.write('  }\n}\nINSERT BEFORE .text;\n')
    print('%s: %d input sections' % (SCRIPT, len(patterns)))


if __name__ == '__main__':
    main()
