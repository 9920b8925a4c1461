#!/usr/bin/env python3
"""PTX sweep of NVIDIA's headers (tools/ptx-sweep/README.md): generate wrappers (gen.py), compile each group with
`nvcc -ptx` per architecture (kernels nvcc rejects for an architecture are dropped one by one, by the error's
line), assemble the PTX with ptxas (the oracle), load it in cuemu (ptx_front_cli --load: parse + check + lower)
and write a summary.

usage: sweep.py --cli BUILD/tests/ptx-front/ptx_front_cli --out DIR [--archs 75,80,90,121] [--groups a,b]
"""
import argparse
import collections
import concurrent.futures
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RUN_GROUPS = {"fp16", "bf16", "fp8", "fp6", "fp4", "intrinsics", "atomics", "device_functions"}
NVCC = os.environ.get("NVCC", "nvcc")
PTXAS = os.environ.get("PTXAS", "ptxas")


def kernel_spans(lines):
    """(start, end) line indexes (0-based, end exclusive) of each generated kernel/host function."""
    starts = [i for i, l in enumerate(lines) if re.match(r'^(extern "C" __global__ )?void sweep_\w+\(', l)]
    spans = []
    for k, s in enumerate(starts):
        e = starts[k + 1] if k + 1 < len(starts) else len(lines)
        spans.append((s, e))
    return spans


def compile_group(src, arch, out_ptx, log):
    """Compiles src for compute_<arch>, dropping every kernel nvcc rejects; returns (ptx path or None, dropped)."""
    lines = open(src).read().split("\n")
    work = f"{out_ptx}.cu"
    dropped = []
    for _ in range(400):
        open(work, "w").write("\n".join(lines))
        r = subprocess.run([NVCC, "-ptx", f"-arch=compute_{arch}", "-std=c++17", "--extended-lambda",
                            "--expt-relaxed-constexpr", "-w", work, "-o", out_ptx],
                           capture_output=True, text=True)
        if r.returncode == 0:
            os.remove(work)
            return out_ptx, dropped
        bad = sorted({int(m.group(1)) - 1 for m in re.finditer(re.escape(os.path.basename(work)) + r"\((\d+)\): (?:error|catastrophic)", r.stderr)})
        spans = kernel_spans(lines)
        victims = {sp for sp in spans for b in bad if sp[0] <= b < sp[1]}
        if not victims:
            log.write(f"{src} compute_{arch}: unattributed nvcc failure:\n{r.stderr[-3000:]}\n")
            return None, dropped
        for s, e in sorted(victims, reverse=True):
            m = re.search(r"void (sweep_\w+)\(", lines[s])
            dropped.append(m.group(1) if m else f"line {s}")
            del lines[s:e]
    return None, dropped


def kernel_name(line):
    m = re.search(r"void (sweep_\w+)\(", line)
    return m.group(1) if m else None


def ptxas_victims(ptx, stderr):
    """Kernels (extern "C" names of .entry blocks) that ptxas's errors point at: by line, or by an unresolved
    extern function they call."""
    lines = open(ptx).read().split("\n")
    entries = []   # (first line index, name)
    for i, l in enumerate(lines):
        m = re.match(r"^\.(?:visible |weak )?\.entry\s+(\w+)", l)
        if m:
            entries.append((i, m.group(1)))
    def entry_at(i):
        name = None
        for start, n in entries:
            if start <= i:
                name = n
        return name
    victims = set()
    for m in re.finditer(r"line (\d+); error", stderr):
        n = entry_at(int(m.group(1)) - 1)
        if n:
            victims.add(n)
    for m in re.finditer(r"Unresolved extern function '(\w+)'", stderr):
        for i, l in enumerate(lines):
            if m.group(1) in l and not l.lstrip().startswith(".extern"):
                n = entry_at(i)
                if n:
                    victims.add(n)
    return {v for v in victims if v.startswith("sweep_")}


def count_ptx(path):
    text = open(path).read()
    entries = len(re.findall(r"^\.(?:visible |weak )?\.entry\s", text, re.M))
    funcs = len(re.findall(r"^\.(?:visible |weak |extern )?\.func\s", text, re.M))
    return entries, funcs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--archs", default="75,80,90,121")
    ap.add_argument("--groups", default="")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    gen_groups = a.groups
    subprocess.run([sys.executable, os.path.join(HERE, "gen.py"), a.out, gen_groups], check=True)
    tsv = [l.split("\t") for l in open(os.path.join(a.out, "functions.tsv")).read().splitlines()]
    groups = collections.OrderedDict()
    for name, group, desc in tsv:
        groups.setdefault(group, []).append(name)
    log = open(os.path.join(a.out, "sweep.log"), "w")
    archs = a.archs.split(",")
    jobs = [(g, arch) for g in groups for arch in archs]

    def one(job):
        g, arch = job
        ptx = os.path.join(a.out, f"{g}.compute_{arch}.ptx")
        original = open(os.path.join(a.out, f"{g}.cu")).read().split("\n")
        spans = kernel_spans(original)
        head = original[:spans[0][0]] if spans else original
        excluded = set()
        res = {"group": g, "arch": arch, "ptx": None}
        # Wrappers nvcc rejects for this architecture, then those whose PTX ptxas rejects (cuda::ptx calls a stub
        # named `..._is_not_supported_before_SM_90__` there), leave the file one by one.
        for _ in range(50):
            src = f"{ptx}.src.cu"
            keep = [l for sp in spans if kernel_name(original[sp[0]]) not in excluded for l in original[sp[0]:sp[1]]]
            open(src, "w").write("\n".join(head + keep))
            path, dropped = compile_group(src, arch, ptx, log)
            os.remove(src)
            excluded |= set(dropped)
            if not path:
                break
            r = subprocess.run([PTXAS, f"-arch=sm_{arch}", path, "-o", "/dev/null"], capture_output=True, text=True)
            victims = ptxas_victims(path, r.stderr) - excluded if r.returncode else set()
            if not victims:
                res["ptx"] = path
                break
            excluded |= victims
        res["dropped"] = sorted(excluded)
        path = res["ptx"]
        if not path:
            return res
        res["ptxas"] = r.returncode == 0
        if r.returncode:
            log.write(f"{path}: ptxas: {r.stderr[-2000:]}\n")
        r = subprocess.run([a.cli, "--quiet", "--load", "--stats", path], capture_output=True, text=True)
        res["cuemu"] = r.returncode == 0
        m = re.search(r"^STATS \S+ (\d+) (\d+)$", r.stdout, re.M)
        res["instructions"] = int(m.group(2)) if m else 0
        res["unsupported"] = re.findall(r"^UNSUPPORTED (\w+): instruction '([^']+)'", r.stdout, re.M)
        if r.returncode:
            log.write(f"{path}: cuemu: {r.stdout[-3000:]}\n")
            full = subprocess.run([a.cli, "--load", path], capture_output=True, text=True)
            log.write(full.stdout[-4000:] + "\n")
        res["entries"], res["funcs"] = count_ptx(path)
        if g in RUN_GROUPS and res["cuemu"]:
            # Header wrappers also run, one warp over argument slots of a fixed pattern: they must finish or fault
            # the way the GPU would (device asserts on invalid enum arguments, trap, brkpt), never crash or hang.
            r = subprocess.run([a.cli, "--quiet", "--load", "--run", path], capture_output=True, text=True, timeout=600)
            res["ran_ok"] = len(re.findall(r"^RUN \S+ ok$", r.stdout, re.M))
            res["ran_fault"] = [re.sub(r"kernel '\w+' at PTX line \d+", "kernel", m) for m in
                                re.findall(r"^RUN \S+ fault: (.*)$", r.stdout, re.M)]
            res["run_rc"] = r.returncode
        return res

    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        results = list(ex.map(one, jobs))
    log.close()
    with open(os.path.join(a.out, "summary.txt"), "w") as s:
        total = collections.Counter()
        s.write("group\tarch\tfunctions\tcompiled\tkernels\tdevice_functions\tptx_instructions\tptxas\tcuemu_load\n")
        for r in results:
            n = len(groups[r["group"]])
            compiled = n - len(r["dropped"]) if r["ptx"] else 0
            s.write(f"{r['group']}\tcompute_{r['arch']}\t{n}\t{compiled}\t{r.get('entries', 0)}\t{r.get('funcs', 0)}\t"
                    f"{r.get('instructions', 0)}\t{'ok' if r.get('ptxas') else 'FAIL'}\t"
                    f"{'ok' if r.get('cuemu') else 'FAIL'}\n")
            total["files"] += 1 if r["ptx"] else 0
            total["functions"] += n
            total["compiled"] += compiled
            total["instructions"] += r.get("instructions", 0)
            total["ptxas_ok"] += 1 if r.get("ptxas") else 0
            total["cuemu_ok"] += 1 if r.get("cuemu") else 0
            total["cuemu_ok_of_ptxas_ok"] += 1 if r.get("cuemu") and r.get("ptxas") else 0
        s.write(f"\nwrapped functions/snippets: {len(tsv)} (x {len(archs)} architectures = {total['functions']})\n")
        s.write(f"compiled by nvcc: {total['compiled']}; PTX files: {total['files']}; PTX instructions: {total['instructions']}\n")
        s.write(f"ptxas accepts: {total['ptxas_ok']} files; cuemu loads: {total['cuemu_ok']} files "
                f"({total['cuemu_ok_of_ptxas_ok']} of the {total['ptxas_ok']} ptxas accepts)\n")
        unsupported = collections.Counter()
        kernels = 0
        for r in results:
            for kernel, inst in r.get("unsupported", []):
                kernels += 1
                unsupported[inst] += 1
        total_kernels = sum(r.get("entries", 0) for r in results)
        s.write(f"kernels that load but would stop at launch with IllegalInstruction (an instruction the interpreter "
                f"does not execute yet): {kernels} of {total_kernels}; their first such instruction:\n")
        for inst, n in unsupported.most_common():
            s.write(f"  {n:5d}  {inst}\n")
        ran = [r for r in results if "ran_ok" in r]
        faults = collections.Counter(re.sub(r"^.*include/", "", f) for r in ran for f in r["ran_fault"])
        s.write(f"header wrappers run in cuemu (one warp each): {sum(r['ran_ok'] for r in ran)} finished, "
                f"{sum(faults.values())} faulted, {sum(1 for r in ran if r['run_rc'])} runs that crashed; faults:\n")
        for f, n in faults.most_common():
            s.write(f"  {n:5d}  {f[:200]}\n")
    print(open(os.path.join(a.out, "summary.txt")).read())
    bad = [r for r in results if r.get("ptxas") and not r.get("cuemu")]
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
