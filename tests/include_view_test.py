#!/usr/bin/env python3
"""The build's include views (src/include_view.sh) refuse a bad include.

Each layer of src/ is compiled with a view of the folders it may include,
not with src/ itself. This plants one include that runs back up the layers
at a time in a copy of a source file and preprocesses the copy with the
exact command the build uses for the original (compile_commands.json): the
clean copy must pass and each planted include must fail as a header that
cannot be found. A view that showed too much (src/ put back on the path,
Meson's implicit include of a target's own dir, a view of the wrong
layer) would let a planted include through.

usage: include_view_test.py BUILD_ROOT SOURCE_ROOT
"""
import json
import os
import shlex
import subprocess
import sys
import tempfile

# (file, include it must not find, what it stands for)
PLANTS = [
    ('src/core/key.cc', 'stores/flock/flock_store.h', 'a store from core'),
    ('src/core/lock.cc', 'registry/store_registry.h', 'the registry from core'),
    ('src/platform/files.cc', 'core/dsn.h', 'core from platform'),
    ('src/platform/files.cc', 'ipclock/lock.h', 'a public header from platform'),
    ('src/stores/flock/flock_store.cc', 'registry/store_registry.h', 'the registry from a store'),
    ('src/stores/flock/flock_store.cc', 'stores/shm/shm_segment.h', "another store's folder"),
    ('src/stores/flock/flock_store.cc', 'flock/flock_file.h', 'a folder named around its layer'),
    ('src/registry/store_factory.cc', 'capi/store_kind.h', 'the C API from the registry'),
    ('tools/torture/worker.cc', 'core/dsn.h', 'core from the torture tool'),
    ('tools/ipclock/run_command.cc', 'platform/files.h', 'platform from the CLI'),
]


def preprocess(entry, source_path, original):
    """Runs the build's command for `entry` on `source_path`, preprocessing only.

    The copy is elsewhere, so the original's dir is searched for quoted
    includes first, as it is for the original."""
    words = shlex.split(entry['command'])
    if os.path.basename(words[0]) == 'ccache':
        words = words[1:]
    out, skip = [], False
    for word in words:
        if skip:
            skip = False
            continue
        if word in ('-o', '-MQ', '-MF', '-c'):
            skip = True
            continue
        if word in ('-MD', '-MMD'):
            continue
        out.append(word)
    out += ['-fdiagnostics-color=never', '-iquote', os.path.dirname(original),
            '-E', '-o', os.devnull, source_path]
    return subprocess.run(out, cwd=entry['directory'], capture_output=True, text=True)


def not_found(include, stderr):
    # GCC says "x.h: No such file or directory", clang "'x.h' file not found".
    return (f'{include}: No such file' in stderr or
            f"'{include}' file not found" in stderr)


def main():
    build_root, source_root = sys.argv[1], sys.argv[2]
    with open(os.path.join(build_root, 'compile_commands.json')) as f:
        entries = json.load(f)
    by_file = {os.path.normpath(os.path.join(e['directory'], e['file'])): e for e in entries}
    failures = checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        for rel, include, meaning in PLANTS:
            path = os.path.normpath(os.path.join(source_root, rel))
            entry = by_file.get(path)
            if entry is None:
                print(f'skipped: {rel} is not built here')
                continue
            with open(path) as f:
                lines = f.read().split('\n')
            first = next(i for i, line in enumerate(lines) if line.startswith('#include'))
            copy = os.path.join(tmp, os.path.basename(rel))
            for planted in (False, True):
                body = list(lines)
                if planted:
                    body.insert(first, f'#include "{include}"')
                with open(copy, 'w') as f:
                    f.write('\n'.join(body))
                result = preprocess(entry, copy, path)
                if not planted:
                    if result.returncode != 0:
                        print(f'{rel} as it is does not preprocess:\n{result.stderr}')
                        failures += 1
                        break
                    continue
                checked += 1
                if result.returncode != 0 and not_found(include, result.stderr):
                    print(f'refused, as it must be: "{include}" in {rel} ({meaning})')
                else:
                    print(f'FAIL: "{include}" in {rel} ({meaning}) was found '
                          f'(status {result.returncode})\n{result.stderr}')
                    failures += 1
    if checked == 0:
        print('no planted include was checked: compile_commands.json names none of the files')
        failures += 1
    print(f'{checked - failures} passed, {failures} failed')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
