#!/usr/bin/env python3
"""check-report-decls.py SCHEMA DECL-SHAPE - the report's declared tables
(export/report/decl.h, printed by the decl-shape program) against SCHEMA
(tests/report-schema.json), both ways, without running a view:
 - each declared json key exists at its place in the schema, with a type
   its column's kind writes (text: string, int/uint: integer, fixed:
   number, bool: boolean, call: the call writes what the schema says);
 - each property the schema lists at a place where tables land is written
   by some declared column, an .obj group or a nested table, or is one of
   OUTSIDE (written without a declaration);
 - every view of views.c's table has declarations.
What a call column writes (rows[].stacks: report_stack.c) is the call's:
the schema under it is not a declared place and is not checked here.
Prints one line per mismatch naming the view, the key and what is wrong."""
import json
import subprocess
import sys

WANTS = {"text": "string", "int": "integer", "uint": "integer", "fixed": "number",
         "bool": "boolean"}

# Keys the schema lists at a declared place that no table writes: each
# written by hand beside the tables, {place: {key: why}}. None today (the
# document's report, title and groups are report.c's doc_cols); keep it short.
OUTSIDE = {}


def types_of(node):
    """The JSON types a schema node allows; None: any."""
    t = node.get("type")
    if t is not None:
        return set(t if isinstance(t, list) else [t])
    if "enum" in node:
        py = {str: "string", bool: "boolean", int: "integer", float: "number", type(None): "null"}
        return {py[type(v)] for v in node["enum"]}
    return None


def resolve(schema, place):
    """The schema object at place ("" the document, "a[].b"), or an error."""
    node, path = schema, "$"
    for seg in place.split(".") if place else []:
        key, arr = (seg[:-2], True) if seg.endswith("[]") else (seg, False)
        props = node.get("properties")
        if props is None or key not in props:
            return None, f"the schema has no '{key}' in {path}"
        node, path = props[key], f"{path}.{key}"
        if arr:
            if "array" not in (types_of(node) or {"array"}) or "items" not in node:
                return None, f"the schema's {path} is not an array of objects (no items)"
            node, path = node["items"], path + "[]"
    if "object" not in (types_of(node) or {"object"}):
        return None, f"the schema's {path} is not an object"
    return node, None


def name(place, key):
    """A key as the messages write it: "rows[].name", "groups" (the document's)."""
    return f"{place}.{key}" if place else key


def check_decls(schema, decls, declared, places):
    """Each declared column against the schema at its place; fills declared
    (place -> keys written there: columns, objs, nested tables) and places."""
    errs, unplaced = [], set()
    for d in decls:
        view = d["view"] or "(every report)"
        segs = d["at"].split(".") if d["at"] else []
        for i, seg in enumerate(segs):      # a nested table's key in its parent
            declared.setdefault(".".join(segs[:i]), set()).add(seg.removesuffix("[]"))
        places.add(d["at"])
        for c in d["cols"]:
            place = name(d["at"], c["obj"]) if c["obj"] else d["at"]
            if c["key"] is None:
                errs.append(f"{view}: {place or '(document)'}: its json order names a column"
                            " without a json key")
                continue
            if c["obj"]:
                declared.setdefault(d["at"], set()).add(c["obj"])
                places.add(place)
            declared.setdefault(place, set()).add(c["key"])
            where = f"{view}: {name(place, c['key'])}: "
            node, err = resolve(schema, place)
            if err:
                if (view, place) not in unplaced:   # once per place, not per column
                    unplaced.add((view, place))
                    errs.append(f"{where}declared ({c['kind']}), but {err}")
                continue
            sub = node.get("properties", {}).get(c["key"])
            types, want = types_of(sub or {}), WANTS.get(c["kind"])
            if sub is None:
                errs.append(f"{where}declared ({c['kind']}), but the schema does not list"
                            f" '{c['key']}' there")
            elif want and types is not None and want not in types:
                errs.append(f"{where}a {c['kind']} column writes a {want}, the schema says"
                            f" {'/'.join(sorted(types))}")
    return errs


def check_schema(schema, declared, places):
    """Each property the schema lists where tables land, written by one."""
    errs = []
    for place in sorted(places):
        node, err = resolve(schema, place)
        for key in node.get("properties", {}) if not err else ():
            if key not in declared.get(place, set()) and key not in OUTSIDE.get(place, {}):
                errs.append(f"schema: {name(place, key)}: listed in the schema, but no"
                            " declared table writes it")
    return errs


def main():
    schema = json.load(open(sys.argv[1]))
    shape = json.loads(subprocess.run([sys.argv[2]], check=True, capture_output=True,
                                      text=True).stdout)
    declared, places = {}, set()
    errs = check_decls(schema, shape["decls"], declared, places)
    errs += check_schema(schema, declared, places)
    views = {d["view"] for d in shape["decls"]}
    for i, view in enumerate(shape["views"]):
        if view is None:
            errs.append(f"views.c: row {i} has no name")
        elif view not in views:
            errs.append(f"{view}: a view of views.c without declarations (export/report/decl.h)")
    for e in errs:
        print(e)
    n = sum(len(d["cols"]) for d in shape["decls"])
    print(f"{len(errs)} mismatches; {len(shape['decls'])} tables, {n} json columns,"
          f" {len(places)} places, {len(shape['views'])} views")
    sys.exit(1 if errs else 0)


if __name__ == "__main__":
    main()
