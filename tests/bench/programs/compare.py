#!/usr/bin/env python3
"""Whole-program benchmark: cuemu's time of each program against a GPU's (run.sh results), and the total."""
import math
import sys


def load(path):
    rows = {}
    with open(path) as f:
        next(f)
        for line in f:
            name, result, best, *_ = line.rstrip("\n").split("\t")
            rows[name] = (result, int(best) if best else None)
    return rows


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: compare.py GPU.tsv CUEMU.tsv")
    gpu, emu = load(sys.argv[1]), load(sys.argv[2])
    total_gpu = total_emu = 0
    logs = []
    print(f"{'program':22} {'GPU ms':>8} {'cuemu ms':>9} {'ratio':>7}")
    for name, (gres, gms) in gpu.items():
        eres, ems = emu.get(name, ("absent", None))
        if gres != "PASS" or eres != "PASS":
            print(f"{name:22} {gres:>8} {eres:>9}")
            continue
        total_gpu += gms
        total_emu += ems
        logs.append(math.log(ems / gms))
        print(f"{name:22} {gms:8d} {ems:9d} {ems / gms:7.2f}")
    if logs:
        print(f"{'total':22} {total_gpu:8d} {total_emu:9d} {total_emu / total_gpu:7.2f}")
        print(f"geometric mean of the ratios: {math.exp(sum(logs) / len(logs)):.2f} over {len(logs)} programs")


if __name__ == "__main__":
    main()
