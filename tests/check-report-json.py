#!/usr/bin/env python3
"""check-report-json.py SCHEMA FILE... - each FILE (xpcorr report --format
json) must match SCHEMA (tests/report-schema.json). Implements the part of
JSON Schema the schema uses (type, enum, required, properties, items), so
the check needs nothing beyond Python; prints the first mismatch's path.
A FILE that is a folder: every report document (a json object with
"report") in it and under it, as the goldens."""
import json
import os
import sys

TYPES = {"object": dict, "array": list, "string": str, "integer": int,
         "number": (int, float), "null": type(None), "boolean": bool}


def check(value, schema, path):
    kinds = schema.get("type")
    if kinds is not None:
        kinds = kinds if isinstance(kinds, list) else [kinds]
        ok = any(isinstance(value, TYPES[k]) and not (k in ("integer", "number") and isinstance(value, bool))
                 for k in kinds)
        if not ok:
            return f"{path}: {type(value).__name__} where the schema wants {'/'.join(kinds)}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{path}: {value!r} is not one of {schema['enum']}"
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                return f"{path}: required key '{key}' missing"
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                err = check(value[key], sub, f"{path}.{key}")
                if err:
                    return err
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            err = check(item, schema["items"], f"{path}[{i}]")
            if err:
                return err
    return None


def expand(args):
    """The files named, a folder's report documents in place of the folder."""
    for arg in args:
        if not os.path.isdir(arg):
            yield arg
            continue
        for top, _, files in sorted(os.walk(arg)):
            for f in sorted(files):
                path = os.path.join(top, f)
                if f.endswith(".json") and '"report":' in open(path).read(4096):
                    yield path


def main():
    schema = json.load(open(sys.argv[1]))
    bad = 0
    for name in expand(sys.argv[2:]):
        try:
            doc = json.load(open(name))
        except ValueError as e:
            print(f"{name}: not JSON: {e}")
            bad += 1
            continue
        err = check(doc, schema, "$")
        if err:
            print(f"{name}: {err}")
            bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
