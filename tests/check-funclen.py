#!/usr/bin/env python3
"""check-funclen.py SOURCE_ROOT [LIMIT] - no function of the project's code
(src, bin, db, capture, cupti, ingest, correlate, export, cmd) is longer than LIMIT lines
(80): long functions are where the stages' copies and the bugs hide. A
function is counted from its name's line to its closing brace, as the
kernel's style writes them (the opening brace alone in column 0). No file
of it (.c, .h) is longer than FILE_LIMIT lines (800; issue 41): a file
past it holds more than one job.
    python3 tests/check-funclen.py . 80
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else '.')
LIMIT = int(sys.argv[2]) if len(sys.argv) > 2 else 80
FILE_LIMIT = 800
DIRS = ['src', 'bin', 'db', 'capture', 'cupti', 'ingest', 'correlate', 'export', 'cmd']


def functions(lines):
    """(name, first line, length) of each function body opened by '{' alone."""
    for i, line in enumerate(lines):
        if line.rstrip() != '{':
            continue
        start = i - 1                # the signature may wrap: go up to its first line
        while start > 0 and lines[start][:1] in (' ', '\t') and lines[start].strip():
            start -= 1
        end = i + 1
        while end < len(lines) and not lines[end].startswith('}'):
            end += 1
        m = re.search(r'(\w+)\s*\(', ' '.join(lines[start:i]))
        yield (m.group(1) if m else lines[start].strip()), start + 1, end - start + 1


def main():
    long_ones, long_files = [], []
    for d in DIRS:
        for base, _, files in os.walk(os.path.join(ROOT, d)):
            for f in sorted(files):
                if not f.endswith(('.c', '.h')):
                    continue
                path = os.path.join(base, f)
                with open(path, encoding='utf-8', errors='replace') as fh:
                    lines = fh.read().split('\n')
                if len(lines) - 1 > FILE_LIMIT:
                    long_files.append((len(lines) - 1, os.path.relpath(path, ROOT)))
                if f.endswith('.h'):
                    continue
                for name, first, length in functions(lines):
                    if length > LIMIT:
                        long_ones.append((length, os.path.relpath(path, ROOT), first, name))
    for length, rel, first, name in sorted(long_ones, reverse=True):
        print('check-funclen: %s:%d: %s is %d lines (limit %d): split it' % (rel, first, name, length, LIMIT))
    for length, rel in sorted(long_files, reverse=True):
        print('check-funclen: %s is %d lines (limit %d): split it' % (rel, length, FILE_LIMIT))
    if long_ones or long_files:
        return 1
    print('check-funclen: no function over %d lines, no file over %d' % (LIMIT, FILE_LIMIT))
    return 0


if __name__ == '__main__':
    sys.exit(main())
