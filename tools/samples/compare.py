#!/usr/bin/env python3
"""Compares two runs of the CUDA samples (tools/samples/run-samples.sh): GPU.tsv CUEMU.tsv [KNOWN.txt].

A sample passes when it exits 0; 2 is the samples' EXIT_WAIVED (a requirement such as a second GPU is missing).
Every sample that passes on the GPU and not on cuemu is a difference; those named in KNOWN.txt (lines
"name: reason") are explained, the others are reported as unexplained and make the exit status 1. For samples that
pass on both, the wall-time ratio cuemu / GPU is printed, and the ratio of the totals."""
import sys


def read(path):
    rows = {}
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 3:
                rows[parts[0]] = (int(parts[1]), float(parts[2]), parts[3] if len(parts) > 3 else "")
    return rows


def read_known(path):
    known = {}
    if path:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#") and ":" in line:
                    name, reason = line.split(":", 1)
                    known[name.strip()] = reason.strip()
    return known


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    gpu, emu = read(sys.argv[1]), read(sys.argv[2])
    known = read_known(sys.argv[3] if len(sys.argv) > 3 else None)
    passed_both, explained, unexplained, waived, missing = [], [], [], [], []
    for name in sorted(gpu, key=str.lower):
        g = gpu[name]
        if g[0] != 0:
            waived.append(name)
            continue
        if name not in emu:
            if name in known:
                explained.append((name, (-1, 0.0, ""), known[name] + "; not built"))
            else:
                missing.append(name)
            continue
        e = emu[name]
        if e[0] == -1 and name in known:
            explained.append((name, e, known[name] + "; not run"))
        elif e[0] == 0:
            passed_both.append(name)
        elif name in known:
            explained.append((name, e, known[name]))
        else:
            unexplained.append((name, e))
    gpu_total = sum(gpu[n][1] for n in passed_both)
    emu_total = sum(emu[n][1] for n in passed_both)
    print(f"{len(gpu)} samples; {len(gpu) - len(waived)} pass on the GPU ({len(waived)} waived or failing there: "
          f"{', '.join(waived)})")
    print(f"on cuemu: {len(passed_both)} pass, {len(explained)} known differences, {len(unexplained)} unexplained, "
          f"{len(missing)} not run")
    if passed_both:
        print(f"wall time of the samples that pass on both: GPU {gpu_total:.1f} s, cuemu {emu_total:.1f} s, "
              f"ratio {emu_total / gpu_total:.2f}")
        slow = sorted(passed_both, key=lambda n: emu[n][1] / max(gpu[n][1], 0.01), reverse=True)[:10]
        print("slowest against the GPU: " + ", ".join(f"{n} {emu[n][1] / max(gpu[n][1], 0.01):.1f}x" for n in slow))
    for name, e, reason in explained:
        print(f"known  {name}: exit {e[0]} ({reason})")
    for name, e in unexplained:
        print(f"DIFF   {name}: exit {e[0]}, last line: {e[2]}")
    for name in missing:
        print(f"MISSING {name}")
    return 1 if unexplained or missing else 0


if __name__ == "__main__":
    sys.exit(main())
