#!/usr/bin/env python3
"""gen-fixture.py - the line tables of every code object of sample.py, as the
interpreter running this script compiles them, with the interpreter's own
answer for the line of every code unit: the truth test-pylines checks the
offline decoder (ingest/pylines.c) against. Marshal-free text, one file per
interpreter version; regenerate all with tests/pylines/regenerate.sh.

    python3.12 gen-fixture.py sample.py > lines-3.12.txt

Output, one code object per block:
    code VERSION FIRST_LINE CODE_BYTES QUALNAME      (3.10: co_name)
    file FILENAME
    table HEX                                        (co_linetable)
    lines START END LINE ...                         (byte ranges; LINE - : none)
The filename is fixed (/app/sample.py) so the fixture does not depend on
where the checkout lives.
"""
import sys

FILENAME = "/app/sample.py"


def code_objects(co):
    yield co
    for c in co.co_consts:
        if hasattr(c, "co_code"):
            yield from code_objects(c)


def unit_lines(co):
    """The line of each 2-byte code unit, None where there is none."""
    n = len(co.co_code) // 2
    if sys.version_info >= (3, 11):
        lines = [p[0] for p in co.co_positions()]
    else:
        lines = [None] * n
        for start, end, line in co.co_lines():
            for u in range(start // 2, min(end // 2, n)):
                lines[u] = line
    assert len(lines) == n, (co, len(lines), n)
    return lines


def ranges(lines):
    out, start = [], 0
    for u in range(1, len(lines) + 1):
        if u == len(lines) or lines[u] != lines[start]:
            out.append((start * 2, u * 2, lines[start]))
            start = u
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen-fixture.py SOURCE.py")
    with open(sys.argv[1]) as f:
        top = compile(f.read(), FILENAME, "exec")
    v = sys.version_info
    print("# %s line tables of %s, by gen-fixture.py under Python %d.%d.%d"
          % ("%d.%d" % (v[0], v[1]), sys.argv[1].rsplit("/", 1)[-1], v[0], v[1], v[2]))
    for co in code_objects(top):
        qual = getattr(co, "co_qualname", co.co_name)
        print("code 0x%02x%02x %d %d %s" % (v[0], v[1], co.co_firstlineno, len(co.co_code), qual))
        print("file %s" % co.co_filename)
        print("table %s" % co.co_linetable.hex())
        print("lines %s" % " ".join("%d %d %s" % (s, e, "-" if l is None else l)
                                    for s, e, l in ranges(unit_lines(co))))


if __name__ == "__main__":
    main()
