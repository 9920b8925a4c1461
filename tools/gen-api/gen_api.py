#!/usr/bin/env python3
"""Generates cuemu's API tables from ABI facts.

Inputs: NVIDIA's installed headers (function signatures), and the facts recorded on a real GPU by
tools/gpu-record (emu/api/recorded/: the driver's exports, cuGetProcAddress answers, error strings).
Outputs (committed, so machines without the toolkit build too):
  emu/api/generated/entries.def      every exported cu* function: status, family, signature
  emu/api/generated/procaddress.def  cuGetProcAddress: (symbol, first version, default form, per-thread form)
  emu/api/generated/errors.def       cuGetErrorName / cuGetErrorString text per CUresult
The status column of entries.def (IMPL or STUB) is kept from the existing file: it is edited by hand when an
entry point is implemented, and the linker proves it right (a STUB with an implementation is a duplicate
definition; an IMPL without one is an undefined reference).
"""
import json, os, re, subprocess, sys, tempfile, collections

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
TOOLKIT = os.environ.get('CUDA_INCLUDE', '/usr/local/cuda/include')
RECORDED = os.path.join(ROOT, 'emu', 'api', 'recorded')
OUT = os.path.join(ROOT, 'emu', 'api', 'generated')

# Interop headers use window-system types; a stub only needs an ABI-equivalent spelling.
INTEROP_TYPES = {
    'GLuint': 'unsigned int', 'GLenum': 'unsigned int', 'EGLImageKHR': 'void *', 'EGLStreamKHR': 'void *',
    'EGLSyncKHR': 'void *', 'EGLint': 'int', 'VdpDevice': 'unsigned int', 'VdpVideoSurface': 'unsigned int',
    'VdpOutputSurface': 'unsigned int', 'VdpGetProcAddress *': 'void *', 'CUeglFrame *': 'void *',
    'CUeglFrame': 'CUeglFrameOpaque', 'CUeglStreamConnection *': 'void *', 'HGPUNV': 'void *', 'CUGLDeviceList': 'int', 'CUGLmap_flags': 'unsigned int',
}
# Exported by driver 580 but declared in no header: exported as stubs that take nothing.
UNDECLARED = ['cuEGLApiInit', 'cuMemGetAttribute', 'cuMemGetAttribute_v2']


def parse_headers():
    src = ('#define __CUDA_API_VERSION_INTERNAL 1\n'
           'typedef unsigned int VdpDevice, VdpVideoSurface, VdpOutputSurface;\n'
           'typedef int VdpGetProcAddress(unsigned int, unsigned int, void **);\n'
           '#include <cuda.h>\n#include <cudaProfiler.h>\n#include <GL/gl.h>\n#include <cudaGL.h>\n'
           '#include <cudaVDPAU.h>\n#include <cudaEGL.h>\n')
    with tempfile.NamedTemporaryFile('w', suffix='.c', delete=False) as f:
        f.write(src)
    try:
        out = subprocess.run(['clang', '-I', TOOLKIT, '-fsyntax-only', '-Xclang', '-ast-dump=json', f.name],
                             check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(f.name)
    ast = json.loads(out)
    fns, cur_file = {}, None
    for d in ast['inner']:
        loc = d.get('loc', {})
        exp = loc.get('expansionLoc', loc)
        if 'file' in exp:
            cur_file = exp['file']
        if d.get('kind') != 'FunctionDecl' or not d.get('name', '').startswith('cu'):
            continue
        params = [(p.get('name', ''), p['type']['qualType']) for p in d.get('inner', []) if p.get('kind') == 'ParmVarDecl']
        fns[d['name']] = (params, cur_file, exp.get('line', 0))
    return fns


def family_lookup():
    """Maps (header, line) to the documentation group that declares it, e.g. 'Context Management'."""
    groups = {}
    for h in ('cuda.h', 'cudaProfiler.h', 'cudaGL.h', 'cudaVDPAU.h', 'cudaEGL.h'):
        path = os.path.join(TOOLKIT, h)
        marks = []
        for i, line in enumerate(open(path, encoding='latin-1'), 1):
            m = re.search(r'\\defgroup\s+(\w+)\s+(.*)', line)
            if m:
                marks.append((i, m.group(2).strip()))
        groups[path] = marks
    def lookup(path, line):
        best = 'Other'
        for l, name in groups.get(path, []):
            if l <= line:
                best = name
        return best
    return lookup


def read_status():
    status = {}
    path = os.path.join(OUT, 'entries.def')
    if os.path.exists(path):
        for m in re.finditer(r'^CUEMU_ENTRY\((\w+),\s*[^,]*,\s*(\w+),', open(path).read(), re.M):
            status[m.group(2)] = m.group(1)
    return status


def c_type(t):
    t = t.strip()
    return INTEROP_TYPES.get(t, t)


def main():
    exports = [l.strip() for l in open(os.path.join(RECORDED, 'exports.txt')) if l.startswith('cu') and not l.startswith('cudbg')]
    fns = parse_headers()
    family = family_lookup()
    status = read_status()
    os.makedirs(OUT, exist_ok=True)
    def base_name(n):
        return re.sub(r'(_v\d+)?(_ptsz|_ptds)?$', '', n)
    fam_of = {}
    for name, (params, path, line) in fns.items():
        fam_of[name] = family(path, line)
    # The legacy and per-thread forms are declared together after the last documentation group;
    # file them under their base function's family.
    by_base = {}
    for name, fam in fam_of.items():
        if not name.startswith('cuLog') and fam == 'Error Log Management Functions':
            continue
        by_base.setdefault(base_name(name), fam)
    for name, fam in list(fam_of.items()):
        if fam == 'Error Log Management Functions' and not name.startswith('cuLog'):
            fam_of[name] = by_base.get(base_name(name), 'Legacy ABI')
    lines = ['// Generated by tools/gen-api/gen_api.py from the headers\' signatures and driver 580\'s export list.',
             '// CUEMU_ENTRY(status, "family", name, (typed parameters), (argument names))',
             '// status: IMPL = implemented in emu/, STUB = answers CUDA_ERROR_NOT_SUPPORTED. Edit the status by hand.', '']
    for name in sorted(exports):
        st = status.get(name, 'STUB')
        if name in fns:
            params, path, line = fns[name]
            fam = fam_of[name]
            if fam.startswith('Interactions with') or fam.startswith('OpenGL') or fam.startswith('VDPAU') or fam.startswith('EGL'):
                fam = 'Graphics interoperability (' + fam + ')'
            typed = ', '.join(f'{c_type(t)} {n}' for n, t in params) or 'void'
            args = ', '.join(n for n, _ in params)
        elif name in UNDECLARED:
            fam, typed, args = 'Undocumented exports', 'void', ''
        else:
            sys.exit(f'no declaration for exported {name}')
        lines.append(f'CUEMU_ENTRY({st}, "{fam}", {name}, ({typed}), ({args}))')
    open(os.path.join(OUT, 'entries.def'), 'w').write('\n'.join(lines) + '\n')

    # cuGetProcAddress: per symbol and flag, the versions at which the answer changes to a new export.
    # Recorded facts: below the first row the answer is VERSION_NOT_SUFFICIENT, a symbol without rows is
    # SYMBOL_NOT_FOUND, a version above 13000 or an unknown flag bit is CUDA_ERROR_INVALID_VALUE, and
    # CU_GET_PROC_ADDRESS_LEGACY_STREAM answers as the default.
    rows = []
    for l in open(os.path.join(RECORDED, 'procaddress.tsv')):
        if l.startswith('#'):
            continue
        sym, flags, ver, res, st, export = l.rstrip('\n').split('\t')
        if flags in ('0', '2') and int(ver) <= 13000 and res == '0' and st == '0':
            rows.append((sym, int(flags) // 2, int(ver), export))
    pl = ['// Generated by tools/gen-api/gen_api.py from cuGetProcAddress_v2 answers recorded on driver 580.',
          '// CUEMU_PROC("symbol", per-thread flag, first requested version, export handed back)',
          '// A request takes the row with the greatest first version <= the requested version.', '']
    pl += [f'CUEMU_PROC("{sym}", {pt}, {ver}, {export})' for sym, pt, ver, export in sorted(rows)]
    open(os.path.join(OUT, 'procaddress.def'), 'w').write('\n'.join(pl) + '\n')

    el = ['// Generated by tools/gen-api/gen_api.py from cuGetErrorName/cuGetErrorString answers recorded on driver 580.',
          '// CUEMU_RESULT(code, name, "description")', '']
    for l in open(os.path.join(RECORDED, 'errors.tsv')):
        if l.startswith('#'):
            continue
        code, rn, name, rs, text = l.rstrip('\n').split('\t')
        el.append(f'CUEMU_RESULT({code}, {name}, "{text}")')
    open(os.path.join(OUT, 'errors.def'), 'w').write('\n'.join(el) + '\n')


if __name__ == '__main__':
    main()
