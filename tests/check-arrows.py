#!/usr/bin/env python3
"""check-arrows.py SOURCE_ROOT - the layers' one-way arrows, checked by grep.

    src <- db <- {ingest, correlate, export} <- cmd <- bin;  capture <- src only;
    cupti <- src only

Fails (exit 1, one line per finding: file:line and the rule) when
  - a file includes a project header without naming its layer
    (#include "launch.h" instead of "db/launch.h": the build's include
    directory is the project root; scripts/layer-includes rewrites them);
  - a file includes a project header of a layer it may not use (export or
    correlate including ingest/*.h, capture including db/, ...), the layer
    read from the include's first folder; or a header name that two layers
    both define;
  - a layer's meson.build links a stage library it may not use, or an
    external library kept out of it (sqlite in src/ or capture/, libdw or
    libelf in export/);
  - code outside cmd/ (and the programs' main in bin/) prints or exits:
    stdout, stderr, printf, puts, perror, exit (library code returns codes
    and messages; export writes only to the FILE * it is handed);
  - a project header is named like a system header (<strings.h>): with
    -I on its folder it would shadow the real one for every file;
  - inside export/, a file includes a header of a sub-folder above its own
    (EXPORT_ALLOWED, drawn in export/README.md):

        names <- {render, analysis} <- report <- views
        render, analysis <- chrome;  analysis <- idle <- {views, job};
        report <- {job, diff};  names, analysis <- runinfo

    renderers and analyses include no report, view or job; report/ (the
    driver, its context report_priv.h and the table of views) includes no
    view: it runs them through the table. A file directly in export/ is
    not allowed, every one has its sub-folder. EXPORT_BACK lists the
    arrows that still run back up, one by one, to be fixed.
    python3 tests/check-arrows.py .
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else '.')

# folder -> layer; the longest prefix wins
LAYER_OF_DIR = {
    'src': 'src', 'bin': 'bin', 'db': 'db', 'capture': 'capture', 'cupti': 'cupti',
    'ingest': 'ingest', 'correlate': 'correlate', 'export': 'export', 'cmd': 'cmd',
}
ALLOWED = {
    'src': {'src'},
    'db': {'src', 'db'},
    'capture': {'src', 'capture'},
    'cupti': {'src', 'cupti'},
    'ingest': {'src', 'db', 'ingest'},
    'correlate': {'src', 'db', 'correlate'},
    'export': {'src', 'db', 'export'},
    'cmd': {'src', 'db', 'capture', 'ingest', 'correlate', 'export', 'cmd'},
    'bin': {'src', 'db', 'capture', 'ingest', 'correlate', 'export', 'cmd', 'bin'},
}
# export/'s sub-folders -> the sub-folders whose headers they may include
EXPORT_ALLOWED = {
    'names': {'names'},
    'render': {'names', 'render'},
    'analysis': {'names', 'analysis'},
    'idle': {'names', 'analysis', 'idle'},
    'chrome': {'names', 'render', 'analysis', 'chrome'},
    'report': {'names', 'render', 'analysis', 'report'},
    'views': {'names', 'render', 'analysis', 'idle', 'report', 'views'},
    'job': {'names', 'render', 'analysis', 'idle', 'report', 'job'},
    'diff': {'names', 'render', 'analysis', 'report', 'diff'},
    'runinfo': {'names', 'analysis', 'runinfo'},
}
# arrows inside export/ that still run back up: (file, header), each to be
# fixed. None left: the idle engine takes its db and --pid, not the report.
EXPORT_BACK = set()
# meson dependency objects -> the layer that declares them
DEP_LAYER = [
    (r'xpcommon_dep|xpmeta_dep', 'src'),
    (r'xpdb_dep', 'db'),
    (r'xpcapture_dep', 'capture'),
    (r'cupti_headers_dep|cupti_dep', 'cupti'),
    (r'xpingest_dep', 'ingest'),
    (r'xpcorrelate_dep', 'correlate'),
    (r'xpexport_dep', 'export'),
    (r'xpcmd[a-z_]*_dep', 'cmd'),
]
# external libraries a layer must not link, and their headers
FORBIDDEN_EXT = {
    'src': {'sqlite_dep': 'sqlite3.h', 'libdw_dep': 'elfutils/', 'libbpf_dep': 'bpf/'},
    'capture': {'sqlite_dep': 'sqlite3.h', 'libdw_dep': 'elfutils/'},
    'cupti': {'sqlite_dep': 'sqlite3.h', 'libdw_dep': 'elfutils/', 'libbpf_dep': 'bpf/', 'libelf_dep': 'libelf.h',
              'jansson_dep': 'jansson.h'},
    'db': {'libdw_dep': 'elfutils/', 'libbpf_dep': 'bpf/'},
    'correlate': {'libdw_dep': 'elfutils/', 'libelf_dep': 'libelf.h', 'libbpf_dep': 'bpf/'},
    'export': {'libdw_dep': 'elfutils/', 'libelf_dep': 'libelf.h', 'libbpf_dep': 'bpf/'},
    'ingest': {'libbpf_dep': 'bpf/'},
}
PRINTS = re.compile(r'(?<!format\()\b(stdout|stderr|printf|vprintf|puts|putchar|perror|exit)\b\s*[(,);]')
# headers the build makes, named as they are included
GENERATED = {'capture/sampler.skel.h'}
SYSTEM_INCLUDE_DIRS = ['/usr/include', '/usr/include/x86_64-linux-gnu', '/usr/include/aarch64-linux-gnu']


def layer_of(rel):
    best = None
    for d, layer in LAYER_OF_DIR.items():
        if rel == d or rel.startswith(d + '/'):
            if best is None or len(d) > len(best[0]):
                best = (d, layer)
    return best[1] if best else None


def export_sub(rel):
    """export/render/jsonw.h -> 'render'; None for a file directly in export/."""
    parts = rel.split('/')
    return parts[1] if len(parts) > 2 and parts[0] == 'export' else None


def export_arrow(rel, target):
    """The error of an include inside export/, or None."""
    if rel.split('/')[0] != 'export' or target.split('/')[0] != 'export':
        return None
    sub, tsub = export_sub(rel), export_sub(target)
    if sub not in EXPORT_ALLOWED or tsub not in EXPORT_ALLOWED:
        return ('export/ files live in its sub-folders (%s)'
                % ', '.join(sorted(EXPORT_ALLOWED)))
    if tsub in EXPORT_ALLOWED[sub] or (rel, target) in EXPORT_BACK:
        return None
    return ('export/%s includes export/%s: export/%s may use only %s (export/README.md)'
            % (sub, tsub, sub, ', '.join(sorted(EXPORT_ALLOWED[sub]))))


def sources():
    for d in sorted(set(LAYER_OF_DIR)):
        for base, dirs, files in os.walk(os.path.join(ROOT, d)):
            for f in sorted(files):
                if f.endswith(('.c', '.h', '.inc')):
                    rel = os.path.relpath(os.path.join(base, f), ROOT)
                    if layer_of(rel) == LAYER_OF_DIR[d]:
                        yield rel


def strip_comments(text):
    """Comments and string contents blanked, newlines kept (lines stay)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            out.append(c + ' ' * (j - i - 1) + (c if j < n else ''))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def main():
    errors = []
    files = list(sources())
    # basename -> layers that define a header of that name
    defined = {}
    for rel in files:
        if rel.endswith('.h'):
            defined.setdefault(os.path.basename(rel), set()).add((layer_of(rel), rel))
    for name, where in sorted(defined.items()):
        layers = {l for l, _ in where}
        if len(where) > 1:
            errors.append('%s: header name defined %d times (%s): an include of it is ambiguous'
                          % (name, len(where), ', '.join(sorted(r for _, r in where))))
        for sysdir in SYSTEM_INCLUDE_DIRS:
            if os.path.exists(os.path.join(sysdir, name)):
                errors.append('%s: named like the system header <%s> (%s), which it shadows'
                              % (sorted(r for _, r in where)[0], name, os.path.join(sysdir, name)))
                break
        del layers
    byname = {name: sorted(where)[0][1] for name, where in defined.items()}

    back_seen = set()
    for rel in files:
        layer = layer_of(rel)
        if layer == 'export' and export_sub(rel) not in EXPORT_ALLOWED:
            errors.append('%s: not in a sub-folder of export/ (%s)'
                          % (rel, ', '.join(sorted(EXPORT_ALLOWED))))
        with open(os.path.join(ROOT, rel), encoding='utf-8', errors='replace') as f:
            text = f.read()
        for no, line in enumerate(text.split('\n'), 1):
            m = re.match(r'\s*#\s*include\s*([<"])([^>"]+)[>"]', line)
            if not m:
                continue
            inc = m.group(2)
            if m.group(1) == '"':
                # the layer is the include's first folder: "db/launch.h"
                named = layer_of(inc) and (os.path.exists(os.path.join(ROOT, inc)) or
                                           inc in GENERATED)
                if not named:
                    bare = byname.get(os.path.basename(inc))
                    here = os.path.normpath(os.path.join(os.path.dirname(rel), inc))
                    if bare or os.path.exists(os.path.join(ROOT, here)):
                        errors.append('%s:%d: includes "%s" without its layer: write "%s"'
                                      % (rel, no, inc, bare or here))
                    continue        # else a system header
                target = inc
                tl = layer_of(target)
                if tl not in ALLOWED[layer]:
                    errors.append('%s:%d: %s includes %s (%s): %s may use only %s'
                                  % (rel, no, layer, target, tl, layer, ', '.join(sorted(ALLOWED[layer]))))
                if (rel, target) in EXPORT_BACK:
                    back_seen.add((rel, target))
                why = export_arrow(rel, target)
                if why:
                    errors.append('%s:%d: %s' % (rel, no, why))
            for dep, hdr in FORBIDDEN_EXT.get(layer, {}).items():
                if inc == hdr or (hdr.endswith('/') and inc.startswith(hdr)):
                    errors.append('%s:%d: %s includes <%s>: %s is kept out of %s'
                                  % (rel, no, layer, inc, dep.replace('_dep', ''), layer))
        if layer not in ('cmd', 'bin') and rel.endswith('.c'):
            for no, line in enumerate(strip_comments(text).split('\n'), 1):
                m = PRINTS.search(line)
                if m:
                    errors.append('%s:%d: %s prints or exits (%s): only cmd/ may'
                                  % (rel, no, layer, m.group(1)))

    for rel, target in sorted(EXPORT_BACK - back_seen):
        errors.append('%s: no longer includes %s: drop it from EXPORT_BACK' % (rel, target))

    # link dependencies, from each layer's meson.build files
    for d, layer in LAYER_OF_DIR.items():
        for base, dirs, fs in os.walk(os.path.join(ROOT, d)):
            if 'meson.build' not in fs:
                continue
            mb = os.path.relpath(os.path.join(base, 'meson.build'), ROOT)
            if layer_of(mb) != layer:
                continue
            with open(os.path.join(ROOT, mb), encoding='utf-8') as f:
                lines = f.read().split('\n')
            for no, line in enumerate(lines, 1):
                code = line.split('#', 1)[0]
                declared = re.match(r'\s*([a-z_0-9]+)\s*=', code)
                for tok in re.findall(r'\b([a-z_0-9]+_dep)\b', code):
                    if declared and declared.group(1) == tok:
                        continue
                    for pat, tl in DEP_LAYER:
                        if re.fullmatch(pat, tok) and tl not in ALLOWED[layer]:
                            errors.append('%s:%d: %s links %s (%s): %s may use only %s'
                                          % (mb, no, layer, tok, tl, layer,
                                             ', '.join(sorted(ALLOWED[layer]))))
                    if tok in FORBIDDEN_EXT.get(layer, {}):
                        errors.append('%s:%d: %s links %s, which is kept out of %s'
                                      % (mb, no, layer, tok, layer))

    for e in errors:
        print('check-arrows: ' + e)
    if errors:
        print('check-arrows: %d wrong arrows (see the layers in /work/shared/DESIGN.md, '
              'the rules at the top of tests/check-arrows.py)' % len(errors))
        return 1
    print('check-arrows: %d files, every include, link and print goes the right way' % len(files))
    return 0


if __name__ == '__main__':
    sys.exit(main())
