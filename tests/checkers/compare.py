#!/usr/bin/env python3
"""Compares the checker corpus's findings on cuemu with compute-sanitizer's recorded on a GPU.

Usage: compare.py GPU_DIR CUEMU_DIR KNOWN_DIFFERENCES

Both directories hold <program>.<tool>.txt files: the whole output of one run (compute-sanitizer's reports and
the program's own lines) and a last line "exit: N" (runs used --error-exitcode 99). What is compared, per run:
  memcheck   each invalid access (space, read/write/atomic, size, kernel, source line, thread, block, out of
             bounds/misaligned), the API errors by error number, the leaked allocations' sizes, the error count
  racecheck  the set of hazards as error/warning and pairs of (access kind, source line), unordered (which came
             first depends on the schedule); the counts differ by design: the GPU counts per SASS instruction pair, cuemu per PTX one
  initcheck  each uninitialised read (size, kernel, source line, thread, block), the error count
  synccheck  each divergent-barrier report (kernel, source line, thread, block), the error count
and for every run the program's own output lines and the exit status. Kernel names are compared up to their
parameter list (the demanglers write types differently). A run listed in KNOWN_DIFFERENCES ("program.tool
reason") may differ; it is reported as known, and as fixed when it no longer differs. Exit status: 0 when every
other run agrees.
"""
import collections
import pathlib
import re
import sys

PREFIX = "========= "


def kernel_name(text):
    return text.split("(")[0].strip()


def source_line(at):
    # "kernel(int *)+0x70 in file.cu:5" (GPU) or "kernel(int*) in file.cu:5 (PTX line 42)" (cuemu)
    m = re.search(r" in ([^ :]+:\d+)", at)
    return m.group(1) if m else "?"


def parse(path):
    lines = path.read_text(errors="replace").splitlines()
    out = collections.defaultdict(list)
    program, exit_status = [], None
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("exit: "):
            exit_status = int(line[6:])
        elif not line.startswith("=========") and not line.startswith("cuemu: "):
            program.append(line)  # cuemu's own diagnostics ("cuemu: error: kernel fault ...") are not the program's
        body = line[len(PREFIX):] if line.startswith(PREFIX) else None
        if body is None:
            i += 1
            continue
        follow = [l[len(PREFIX):].strip() for l in lines[i + 1:i + 6] if l.startswith(PREFIX)]

        def field(start):
            return next((f for f in follow if f.startswith(start)), "")

        m = re.match(r"Invalid (\S+) (\w+) of size (\d+) bytes", body)
        if m:
            at = field("at ")
            where = re.search(r"by thread (\(\S+\)) in block (\(\S+\))", field("by thread"))
            reason = "misaligned" if "misaligned" in field("Access to") else "out of bounds"
            out["invalid"].append((m.group(1), m.group(2), int(m.group(3)), kernel_name(at[3:]), source_line(at),
                                   where.groups() if where else None, reason))
        m = re.match(r"Program hit \S+ \(error (\d+)\)", body)
        if m:
            out["api"].append(int(m.group(1)))
        m = re.match(r"Leaked ([\d,]+) bytes at 0x[0-9a-f]+( on the device heap)?", body)
        if m:
            out["leak"].append((int(m.group(1).replace(",", "")), bool(m.group(2))))
        m = re.match(r"(Error|Warning): Race reported between (\w+) access at (.*)", body)
        if m:
            second = re.match(r"and (\w+) access at (.*)", field("and "))
            if second:
                # which access came first depends on how the warps were scheduled: the pair is unordered; a
                # warning (a hazard between lanes of one warp) is not the same finding as an error
                out["race"].append((m.group(1),) + tuple(sorted([(m.group(2), source_line(m.group(3))),
                                                                 (second.group(1), source_line(second.group(2)))])))
        m = re.match(r"Uninitialized __global__ memory read of size (\d+) bytes", body)
        if m:
            at = field("at ")
            where = re.search(r"by thread (\(\S+\)) in block (\(\S+\))", field("by thread"))
            out["uninit"].append((int(m.group(1)), kernel_name(at[3:]), source_line(at),
                                  where.groups() if where else None))
        if body.startswith("Barrier error detected"):
            at = field("at ")
            where = re.search(r"by thread (\(\S+\)) in block (\(\S+\))", field("by thread"))
            out["barrier"].append((kernel_name(at[3:]), source_line(at), where.groups() if where else None))
        m = re.match(r"ERROR SUMMARY: (\d+) error", body)
        if m:
            out["errors"] = int(m.group(1))
        i += 1
    out["program"] = program
    out["exit"] = exit_status
    return out


def differences(gpu, ours, tool):
    found = []

    def same(key, what, as_set=False):
        a, b = gpu.get(key, []), ours.get(key, [])
        if as_set:
            a, b = sorted(set(a)), sorted(set(b))
        else:
            a, b = sorted(a, key=repr), sorted(b, key=repr)
        if a != b:
            found.append(f"{what}: GPU {a} / cuemu {b}")

    if tool == "memcheck":
        same("invalid", "invalid accesses")
        same("api", "API errors")
        same("leak", "leaks")
    elif tool == "racecheck":
        same("race", "hazards", as_set=True)
    elif tool == "initcheck":
        same("uninit", "uninitialised reads")
    elif tool == "synccheck":
        same("barrier", "barrier errors")
    if tool != "racecheck" and gpu.get("errors") != ours.get("errors"):
        found.append(f"error count: GPU {gpu.get('errors')} / cuemu {ours.get('errors')}")
    if gpu["program"] != ours["program"]:
        found.append(f"program output: GPU {gpu['program']} / cuemu {ours['program']}")
    if gpu["exit"] != ours["exit"]:
        found.append(f"exit status: GPU {gpu['exit']} / cuemu {ours['exit']}")
    return found


def main():
    gpu_dir, ours_dir, known_file = map(pathlib.Path, sys.argv[1:4])
    known = {}
    for line in known_file.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, reason = line.partition(" ")
            known[name] = reason.strip()
    runs = sorted(p for p in gpu_dir.glob("*.txt") if p.name.count(".") == 2 and ".native." not in p.name)
    failed = agreed = 0
    for path in runs:
        name = path.name[:-4]
        tool = name.split(".")[1]
        mine = ours_dir / path.name
        if not mine.exists():
            print(f"MISSING  {name}")
            failed += 1
            continue
        found = differences(parse(path), parse(mine), tool)
        if not found:
            agreed += 1
            print(f"agree    {name}" + ("  (listed as a known difference: remove it)" if name in known else ""))
        elif name in known:
            print(f"known    {name}: {known[name]}")
            for f in found:
                print(f"           {f}")
        else:
            failed += 1
            print(f"DIFFER   {name}")
            for f in found:
                print(f"           {f}")
    print(f"{agreed} of {len(runs)} runs agree with compute-sanitizer; {failed} differ without being known")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
