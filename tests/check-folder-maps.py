#!/usr/bin/env python3
"""check-folder-maps.py ROOT - each folder's README.md is a map of its files:
every source file of src/, db/, capture/, cupti/, ingest/, correlate/,
export/ and cmd/ is named in
the README of its folder (a subfolder without one: its parent's, as
`sub/name.c`; export/'s sub-folders each have their own, and export/
holds no source file itself), and every file a README names in its tables still exists. A file is named as `name.c`, `sub/name.c`, or,
for a pair, `name.c/.h`; a header beside its .c goes with it.
"""
import os
import re
import sys

FOLDERS = ["src", "db", "capture", "cupti", "ingest", "correlate", "export", "cmd"]
# folders split into sub-folders: every sub-folder maps its own files
SPLIT = ["export"]
SOURCE = re.compile(r"\.(c|h|inc)$")


def named_in(readme):
    """The file names a README's table rows name in their first cell."""
    names = set()
    for line in readme.splitlines():
        if not line.startswith("| ") or line.startswith("| file") or line.startswith("|---"):
            continue
        cell = line.split("|")[1]
        for word in re.split(r"[,\s]+", cell.strip()):
            m = re.fullmatch(r"([\w./-]+?)\.c/\.h", word)
            if m:
                names.update({m.group(1) + ".c", m.group(1) + ".h"})
            elif SOURCE.search(word):
                names.add(word)
    return names


def owner(top, d):
    """The folder whose README maps files of d: the nearest with one, else top."""
    while d != top and not os.path.exists(os.path.join(d, "README.md")):
        d = os.path.dirname(d)
    return d


def check(top, files, bad):
    """files: paths relative to top, which its README.md must map."""
    rel = os.path.relpath(top, ROOT)
    path = os.path.join(top, "README.md")
    if not os.path.exists(path):
        bad.append(f"{rel}/README.md: missing")
        return
    with open(path, encoding="utf-8") as f:
        names = named_in(f.read())
    need = {n for n in files if n.endswith(".c") or re.sub(r"\.h$", ".c", n) not in files}
    bad += [f"{rel}/README.md: {n} is not named" for n in sorted(need - names)]
    bad += [f"{rel}/README.md: names {n}, which is gone" for n in sorted(names - files)]


def main():
    bad = []
    for folder in FOLDERS:
        top = os.path.join(ROOT, folder)
        maps = {}
        for d, _, fs in os.walk(top):
            for name in fs:
                if SOURCE.search(name):
                    o = owner(top, d)
                    if folder in SPLIT and o == top:
                        bad.append(f"{os.path.relpath(os.path.join(d, name), ROOT)}: "
                                   f"not in a sub-folder of {folder}/ with a README.md")
                        continue
                    maps.setdefault(o, set()).add(os.path.relpath(os.path.join(d, name), o))
        maps.setdefault(top, set())
        for o in sorted(maps):
            check(o, maps[o], bad)
    for line in bad:
        print(line)
    return 1 if bad else 0


ROOT = sys.argv[1] if len(sys.argv) > 1 else "."
if __name__ == "__main__":
    sys.exit(main())
