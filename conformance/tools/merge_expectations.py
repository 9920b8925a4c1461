#!/usr/bin/env python3
"""Merge newly recorded GPU results into an expectations file.

Usage: merge_expectations.py EXPECTATIONS.json NEW.json [NEW.json ...]

Cases from the NEW files replace or extend those in EXPECTATIONS.json (the
cases a partial run recorded, e.g. with CUEMU_CONF_CASES); every other case is
kept. The summary is recomputed and the file is written back one case per
line, sorted, so that diffs stay reviewable.
"""
import json
import sys


def write(path, doc):
    cases = doc["cases"]
    head = {k: v for k, v in doc.items() if k != "cases"}
    lines = ["{"]
    for key, value in head.items():
        lines.append(f"  {json.dumps(key)}: {json.dumps(value)},")
    lines.append('  "cases": {')
    names = sorted(cases)
    for i, name in enumerate(names):
        comma = "," if i + 1 < len(names) else ""
        lines.append(f"    {json.dumps(name)}: {json.dumps(cases[name])}{comma}")
    lines.append("  }")
    lines.append("}")
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        doc = json.load(f)
    added = replaced = 0
    for new_path in argv[2:]:
        with open(new_path) as f:
            new = json.load(f)
        for name, result in new.get("cases", {}).items():
            if name in doc["cases"]:
                replaced += doc["cases"][name] != result
            else:
                added += 1
            doc["cases"][name] = result
    summary = {"pass": 0, "fail": 0, "not-supported": 0}
    for result in doc["cases"].values():
        status = result.get("status", "fail")
        summary[status] = summary.get(status, 0) + 1
    summary["total"] = len(doc["cases"])
    doc["summary"] = summary
    write(argv[1], doc)
    print(f"{added} added, {replaced} changed, {summary['total']} cases "
          f"({summary['pass']} pass)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
