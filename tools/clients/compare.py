#!/usr/bin/env python3
"""Compares an upstream suite's results on a GPU with those on cuemu (TSV files of run-*-suite.sh).

A test that passes on the GPU and not on cuemu is a regression unless the known-differences file lists it
("test-name-or-glob | reason" per line, '#' comments). Prints the counts and every unexplained difference; exits 1
when there is one. Tests only one side ran are listed as missing (a crash or a timeout stops a worker) unless the
known-differences file names them.
"""
import fnmatch
import sys


def load(path):
    out = {}
    for line in open(path):
        if "\t" in line:
            name, status = line.rstrip("\n").split("\t", 1)
            out[name] = status
    return out


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    gpu, emu = load(sys.argv[1]), load(sys.argv[2])
    known = []
    if len(sys.argv) > 3:
        for line in open(sys.argv[3]):
            line = line.split("#", 1)[0].strip()
            if line:
                pattern, _, reason = line.partition("|")
                known.append((pattern.strip(), reason.strip()))

    def explained(name):
        return next((reason for pattern, reason in known if fnmatch.fnmatchcase(name, pattern)), None)

    passing = {"ok", "xfail", "skip"}
    alone = sorted(n for n, st in emu.items() if st == "ok-alone" and gpu.get(n) in passing)
    # Skips count as passing, but a test the GPU ran and cuemu skipped is shown (per file): it was not compared.
    skipped_here = sorted(n for n, st in emu.items() if st == "skip" and gpu.get(n) == "ok")
    regressions, explained_list, missing, better = [], [], [], []
    for name, status in sorted(gpu.items()):
        if status not in passing:
            if emu.get(name) in ("ok",):
                better.append(name)
            continue
        if name not in emu:
            reason = explained(name)
            (explained_list.append((name, "not run", reason)) if reason else missing.append(name))
            continue
        if emu[name] in passing or emu[name] == "ok-alone":
            continue
        reason = explained(name)
        (explained_list if reason else regressions).append((name, emu[name], reason))
    gpu_ok = sum(s == "ok" for s in gpu.values())
    emu_ok = sum(s == "ok" for s in emu.values())
    print(f"GPU: {len(gpu)} tests, {gpu_ok} pass; cuemu: {len(emu)} tests, {emu_ok} pass")
    print(f"passing on the GPU, not on cuemu: {len(regressions)} unexplained, {len(explained_list)} known "
          f"differences; {len(missing)} not run on cuemu; {len(better)} pass on cuemu only")
    if skipped_here:
        per_file = {}
        for name in skipped_here:
            per_file[name.split("::")[0]] = per_file.get(name.split("::")[0], 0) + 1
        print(f"{len(skipped_here)} pass on the GPU and are skipped on cuemu: "
              + ", ".join(f"{f} {n}" for f, n in sorted(per_file.items())))
    if alone:
        print(f"{len(alone)} pass on cuemu only when run alone (they ran after a faulting test in the same worker):")
        for name in alone:
            print(f"  ALONE {name}")
    for name, status, reason in explained_list:
        print(f"  KNOWN {name}: {status} ({reason})")
    for name, status, _ in regressions:
        print(f"  REGRESSION {name}: {status}")
    for name in missing:
        print(f"  MISSING {name}")
    return 1 if regressions or missing else 0


if __name__ == "__main__":
    sys.exit(main())
