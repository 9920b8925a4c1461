#!/usr/bin/env python3
"""Generate cuemu's public CUDA driver API headers from the ABI facts of an installed toolkit.

The toolkit's headers are only *read*, through clang: its AST (declarations, types, enumerator values,
attributes) and its preprocessor's macro table, in several preprocessor configurations. Everything
written is laid out by this script; no comment or documentation text is carried over.

Outputs (relative to --repo):
  include/cuda.h, include/cudaTypedefs.h                     the driver API and its PFN_* typedefs
  include/cudaProfiler.h, cudaGL.h, cudaEGL.h, cudaVDPAU.h   (+ their *Typedefs.h) profiler and interop
  emu/api/generated/cuda_enums.def                           X-macro table of every enum and flag constant
  emu/api/generated/interop_signatures.txt                   one line per profiler/interop entry point
  tests/abi/generated/abi_manifest_*.inc                     what the ABI test compares, per configuration

Modes:
  (default)          regenerate everything (needs clang and the toolkit headers, incl. GL/EGL headers)
  --check            fail if a committed output differs from what would be generated, or if our headers,
                     read back through clang, declare anything differently from the toolkit's
  --perturb KIND     copy our include/ with one deliberate ABI change (the ABI test's self-check);
                     text processing only, needs no clang
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import OrderedDict
from concurrent.futures import ProcessPoolExecutor

CLANG = os.environ.get("CUEMU_CLANG", "clang")

# Preprocessor configurations a header is read in. The header is rebuilt so that each of them yields
# the same declarations as the toolkit's header does.
CONFIGS = OrderedDict([
    ("default", []),
    ("ptds", ["-DCUDA_API_PER_THREAD_DEFAULT_STREAM"]),
    ("internal", ["-D__CUDA_API_VERSION_INTERNAL"]),
    ("internal_odr", ["-D__CUDA_API_VERSION_INTERNAL", "-D__CUDA_API_VERSION_INTERNAL_ODR"]),
])

INTERNAL = "defined(__CUDA_API_VERSION_INTERNAL)"
INTERNAL_NOT_ODR = "defined(__CUDA_API_VERSION_INTERNAL) && !defined(__CUDA_API_VERSION_INTERNAL_ODR)"


class GenError(Exception):
    pass


# --------------------------------------------------------------------------------------------------
# Reading the toolkit through clang


def clang_ast(path, include_dirs, defines):
    cmd = [CLANG, "-x", "c", "-std=c11", "-fsyntax-only", "-Xclang", "-ast-dump=json",
           "-Wno-everything"] + [f"-I{d}" for d in include_dirs] + list(defines) + [path]
    out = _run(cmd).stdout
    return json.loads(out)


def _run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise GenError(f"{' '.join(cmd)} failed:\n{r.stderr.decode(errors='replace')[:2000]}")
    return r


def clang_macros(path, include_dirs, defines):
    """Return [(kind, name, params, body, file, line)] for every #define / #undef, in order."""
    cmd = [CLANG, "-x", "c", "-std=c11", "-E", "-dD", "-Wno-everything"] + \
        [f"-I{d}" for d in include_dirs] + list(defines) + [path]
    text = _run(cmd).stdout.decode()
    result = []
    cur_file, cur_line = None, 0
    marker = re.compile(r'^# (\d+) "(.*)"')
    define = re.compile(r'^#define ([A-Za-z_]\w*)(\([^)]*\))?(?: (.*))?$')
    for raw in text.split("\n"):
        m = marker.match(raw)
        if m:
            cur_line, cur_file = int(m.group(1)), m.group(2)
            continue
        if raw.startswith("#define "):
            d = define.match(raw)
            if not d:
                raise GenError(f"cannot read macro line: {raw}")
            params = None
            if d.group(2) is not None:
                params = [p.strip() for p in d.group(2)[1:-1].split(",") if p.strip()]
            result.append(("define", d.group(1), params, (d.group(3) or "").strip(), cur_file, cur_line))
        elif raw.startswith("#undef "):
            result.append(("undef", raw.split()[1], None, "", cur_file, cur_line))
        cur_line += 1
    return result


def top_level_decls(ast):
    """Top-level declarations with the file they are written in. The JSON dump names a file only
    when it differs from the previous location printed, so locations are followed in document order."""
    state = {"file": None}

    def visit_loc(loc):
        if not isinstance(loc, dict):
            return
        if "spellingLoc" in loc or "expansionLoc" in loc:
            visit_loc(loc.get("spellingLoc"))
            visit_loc(loc.get("expansionLoc"))
        elif "file" in loc:
            state["file"] = loc["file"]

    def walk(node):
        for k, v in node.items():
            if k == "loc":
                visit_loc(v)
            elif k == "range":
                visit_loc(v.get("begin"))
                visit_loc(v.get("end"))
            elif k == "inner":
                for c in v:
                    walk(c)

    decls = []
    for d in ast.get("inner", []):
        visit_loc(d.get("loc", {}))
        decls.append((state["file"], d))
        rest = {k: v for k, v in d.items() if k != "loc"}
        walk(rest)
    return decls


def loc_offset(loc):
    if "expansionLoc" in loc:
        return loc["expansionLoc"]["offset"], loc["expansionLoc"].get("tokLen", 0)
    return loc["offset"], loc.get("tokLen", 0)


class Source:
    """A header's bytes, used to read an identifier as written at an AST location and line numbers."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        self.line_starts = [0]
        for i, b in enumerate(self.data):
            if b == 10:
                self.line_starts.append(i + 1)

    def token(self, offset, length):
        return self.data[offset:offset + length].decode()

    def line(self, offset):
        lo, hi = 0, len(self.line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    def has_identifier(self, begin, end, ident):
        text = self.data[begin:end].decode(errors="replace")
        return re.search(r"\b" + re.escape(ident) + r"\b", text) is not None


def decl_range(d):
    r = d.get("range", {})
    b = r.get("begin", {})
    e = r.get("end", {})
    bo = b["expansionLoc"]["offset"] if "expansionLoc" in b else b.get("offset")
    eo = e["expansionLoc"]["offset"] if "expansionLoc" in e else e.get("offset")
    el = e["expansionLoc"].get("tokLen", 0) if "expansionLoc" in e else e.get("tokLen", 0)
    return bo, (eo + el) if eo is not None else None


# --------------------------------------------------------------------------------------------------
# Turning AST types back into C declarations

ANON_TAG = re.compile(r"(?:struct|union|enum) (?:[A-Za-z_]\w*::)*\((?:anonymous|unnamed)[^)]*\)")


def declare(type_text, name, conv=None):
    """Place `name` into the abstract declarator `type_text` (as clang prints types)."""
    t = type_text
    i = t.find("(*")
    if i >= 0:
        j = i + 1
        while j < len(t) and t[j] == "*":
            j += 1
        lead = t[:i + 1] + (conv + " " if conv else "")
        return lead + t[i + 1:j] + name + t[j:]
    if conv:
        raise GenError(f"calling convention on a non-pointer type {type_text}")
    depth = 0
    for j, ch in enumerate(t):
        if ch == "(":
            if depth == 0 and j > 0:
                return t[:j].rstrip() + " " + name + t[j:]
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "[" and depth == 0:
            return t[:j].rstrip() + " " + name + t[j:]
    if not name:
        return t
    return t + ("" if t.endswith("*") else " ") + name


def split_function_type(qual):
    """'CUresult (CUdeviceptr *, size_t)' -> ('CUresult', ['CUdeviceptr *', 'size_t'])"""
    depth = 0
    start = None
    for j, ch in enumerate(qual):
        if ch == "(" and depth == 0 and start is None:
            start = j
            break
    ret = qual[:start].strip()
    inner = qual[start + 1:qual.rindex(")")]
    params, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            params.append(cur.strip())
            cur = ""
            continue
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        cur += ch
    if cur.strip():
        params.append(cur.strip())
    return ret, params


def _constant_value(expr, what):
    """The value clang computed for an initializer (a ConstantExpr, possibly under implicit casts)."""
    node = expr
    while node is not None:
        if node["kind"] == "ConstantExpr":
            return int(node["value"])
        if node["kind"] not in ("ImplicitCastExpr", "ParenExpr"):
            break
        node = node.get("inner", [None])[0]
    raise GenError(f"cannot find the value of {what}")


def enum_values(enum_node):
    values, nxt = [], 0
    for c in enum_node.get("inner", []):
        if c["kind"] != "EnumConstantDecl":
            continue
        val = nxt
        init = [e for e in c.get("inner", []) if "Attr" not in e["kind"] and "Comment" not in e["kind"]]
        if init:
            val = _constant_value(init[0], c["name"])
            if c["type"]["qualType"] == "int" and val > 0x7FFFFFFF:
                val -= 1 << 32  # the initializer's value converted to the enumerator's type
        values.append((c["name"], val, c))
        nxt = val + 1
    return values


# --------------------------------------------------------------------------------------------------
# The header model


class HeaderModel:
    """One toolkit header as read in every configuration (from a shared parse, see parse_toolkit)."""

    def __init__(self, name, path, parsed):
        self.name = name
        self.path = os.path.realpath(path)
        self.src = Source(self.path)
        self.decls = {cfg: [(f, d) for f, d in decls if f == name] for cfg, (decls, _) in parsed.items()}
        self.macros = {cfg: [m for m in macros if m[4] == name] for cfg, (_, macros) in parsed.items()}
        # enums as the internal configuration sees them: a superset of the enumerators
        self.internal_enums = {decl_key(d): d for _, d in self.decls["internal"] if d["kind"] == "EnumDecl"}


def _header_namer(paths):
    """Maps a file name in clang's output to the toolkit header it is (or None)."""
    cache = {}

    def name_of(f):
        if f is None:
            return None
        if f not in cache:
            cache[f] = paths.get(os.path.realpath(f))
        return cache[f]
    return name_of


def own_decls(path, include_dirs, defs, paths):
    """Top-level declarations written in the toolkit headers `paths` (runs in a worker process)."""
    name_of = _header_namer(paths)
    out = []
    for f, d in top_level_decls(clang_ast(path, include_dirs, defs)):
        n = name_of(f)
        if n is not None:
            out.append((n, d))
    return out


def own_macros(path, include_dirs, defs, paths):
    name_of = _header_namer(paths)
    out = []
    for m in clang_macros(path, include_dirs, defs):
        n = name_of(m[4])
        if n is not None:
            out.append(m[:4] + (n,) + m[5:])
    return out


def blank_comments(text):
    """Replaces every comment by spaces (newlines kept), so offsets and lines stay the same while
    clang has no documentation comments to attach (they would make most of the AST dump)."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = " "
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
        else:
            i += 1
    return "".join(out)


def parse_toolkit(tk, headers, workdir, prelude=()):
    """Reads all `headers` through one umbrella file, once per configuration (in parallel). The
    headers are read from copies with their comments blanked out (same offsets)."""
    blanked = os.path.join(workdir, "blanked")
    os.makedirs(blanked, exist_ok=True)
    for h in headers:
        with open(os.path.join(tk, h), encoding="latin-1") as f:
            text = blank_comments(f.read())
        with open(os.path.join(blanked, h), "w", encoding="latin-1") as f:
            f.write(text)
    umbrella = os.path.join(workdir, "umbrella.h")
    with open(umbrella, "w") as f:
        for p in prelude:
            f.write(f"#include <{p}>\n")
        for h in headers:
            f.write(f"#include <{h}>\n")
    paths = {os.path.realpath(os.path.join(blanked, h)): h for h in headers}
    dirs = [blanked, tk, workdir]
    parsed = {}
    with ProcessPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
        asts = {cfg: pool.submit(own_decls, umbrella, dirs, defs, paths) for cfg, defs in CONFIGS.items()}
        macros = {cfg: pool.submit(own_macros, umbrella, dirs, defs, paths) for cfg, defs in CONFIGS.items()}
        for cfg in CONFIGS:
            parsed[cfg] = (asts[cfg].result(), macros[cfg].result())
    return parsed


def decl_key(d):
    off, _ = loc_offset(d["loc"])
    return (d["kind"], off)


class Emitter:
    def __init__(self, model, conv_macros=("CUDAAPI", "CUDA_CB")):
        self.m = model
        self.conv_macros = conv_macros
        self.anon_ext = False
        self.alignas = False

    # ---- records / enums

    def record_text(self, node, indent):
        tag = node.get("tagUsed", "struct")
        head = tag + (" " + node["name"] if node.get("name") else "")
        if not node.get("completeDefinition"):
            return head
        pad = "    " * (indent + 1)
        lines = []
        items = [c for c in node.get("inner", []) if "Comment" not in c["kind"]]
        i = 0
        while i < len(items):
            c = items[i]
            k = c["kind"]
            if k == "RecordDecl":
                nested = self.record_text(c, indent + 1)
                nxt = items[i + 1] if i + 1 < len(items) else None
                if nxt is None or nxt["kind"] != "FieldDecl":
                    raise GenError(f"nested record without a member in {node.get('name')}")
                if nxt.get("isImplicit"):
                    self.anon_ext = True
                    lines.append(f"{pad}__CUEMU_EXTENSION {nested};")
                else:
                    qt = nxt["type"]["qualType"]
                    if ANON_TAG.search(qt):
                        qt = ANON_TAG.sub("@TAG@", qt, count=1)
                    elif c.get("name") and re.search(r"\b(struct|union) " + c["name"] + r"\b", qt):
                        qt = re.sub(r"\b(struct|union) " + c["name"] + r"\b", "@TAG@", qt, count=1)
                    else:
                        raise GenError(f"cannot tie nested record to member {nxt.get('name')}")
                    lines.append(pad + self.field_prefix(nxt) +
                                 declare(qt, nxt["name"]).replace("@TAG@", nested) + ";")
                i += 2
                continue
            if k == "FieldDecl":
                lines.append(pad + self.field_prefix(c) + declare(c["type"]["qualType"], c["name"]) + ";")
            elif k in ("IndirectFieldDecl",):
                pass
            else:
                raise GenError(f"unexpected {k} in record {node.get('name')}")
            i += 1
        return head + " {\n" + "\n".join(lines) + "\n" + "    " * indent + "}"

    def field_prefix(self, field):
        pre = ""
        for a in field.get("inner", []):
            if a["kind"] == "AlignedAttr":
                val = a["inner"][0]["value"]
                self.alignas = True
                pre += f"__CUEMU_ALIGNAS({val}) "
            elif a["kind"] in ("ConstantExpr",) or "Comment" in a["kind"]:
                pass
            else:
                raise GenError(f"unexpected {a['kind']} on field {field.get('name')}")
        if field.get("isBitfield"):
            raise GenError("bit-fields are not handled")
        return pre

    def enum_text(self, node, cfg_conds):
        head = "enum" + (" " + node["name"] if node.get("name") else "")
        lines = []
        for name, val, c in enum_values(node):
            cond = cfg_conds.get(name)
            dep = " __CUDA_DEPRECATED" if any(a["kind"] == "DeprecatedAttr" for a in c.get("inner", [])) else ""
            if cond:
                lines.append(f"#if {cond}")
            lines.append(f"    {name}{dep} = {val},")
            if cond:
                lines.append("#endif")
        return head + " {\n" + "\n".join(lines) + "\n}"

    # ---- declarations

    def conv_of(self, d):
        b, e = decl_range(d)
        for c in self.conv_macros:
            if b is not None and e is not None and self.m.src.has_identifier(b, e, c):
                return c
        return None

    def typedef_text(self, d, owned_text=None, owned_qual=None):
        qt = d["type"]["qualType"]
        if owned_text is not None:
            if owned_qual and owned_qual in qt:
                qt = qt.replace(owned_qual, "@TAG@", 1)
            elif ANON_TAG.search(qt):
                qt = ANON_TAG.sub("@TAG@", qt, count=1)
            elif qt == d["name"] or not qt:
                qt = "@TAG@"
            else:
                raise GenError(f"cannot place tag in typedef {d['name']}: {qt}")
        conv = self.conv_of(d) if "(*" in qt else None
        text = "typedef " + declare(qt, d["name"], conv) + ";"
        if owned_text is not None:
            text = text.replace("@TAG@", owned_text)
        return text

    def function_text(self, d, written):
        ret, _ = split_function_type(d["type"]["qualType"])
        params = []
        for p in d.get("inner", []):
            if p["kind"] == "ParmVarDecl":
                params.append(declare(p["type"]["qualType"], p.get("name", "")))
            elif p["kind"] == "DeprecatedAttr":
                pass
            elif "Comment" in p["kind"]:
                pass
            else:
                raise GenError(f"unexpected {p['kind']} in function {d['name']}")
        if d.get("variadic"):
            params.append("...")
        dep = "__CUDA_DEPRECATED " if any(p["kind"] == "DeprecatedAttr" for p in d.get("inner", [])) else ""
        conv = self.conv_of(d)
        conv = (conv + " ") if conv else ""
        return f"{dep}{ret} {conv}{written}({', '.join(params) if params else 'void'});"

    def written_name(self, d):
        off, ln = loc_offset(d["loc"])
        return self.m.src.token(off, ln)


# Typedefs the header preamble writes itself (their spelling depends on the compiler).
PREAMBLE_TYPEDEFS = {"cuuint32_t", "cuuint64_t"}


def build_body(model, emitter, decls, internal_enum_conds=None, skip=lambda d: False):
    """Declarations (in source order) as (line, text, decl, typedef-decl) items."""
    items = []
    i = 0
    emitted_tags = {}
    while i < len(decls):
        d = decls[i]
        k = d["kind"]
        off, _ = loc_offset(d["loc"])
        line = model.src.line(decl_range(d)[0])
        if skip(d):
            i += 1
            continue
        if k in ("RecordDecl", "EnumDecl"):
            nxt = decls[i + 1] if i + 1 < len(decls) else None
            owned = None
            if nxt is not None and nxt["kind"] == "TypedefDecl":
                for t in nxt.get("inner", []):
                    if t["kind"] == "ElaboratedType" and t.get("ownedTagDecl", {}).get("id") == d["id"]:
                        owned = t
            body = emitter.record_text(d, 0) if k == "RecordDecl" else \
                emitter.enum_text(model.internal_enums.get(decl_key(d), d), internal_enum_conds or {})
            if owned is not None:
                text = emitter.typedef_text(nxt, body, owned["type"]["qualType"])
                # further declarators of the same typedef name the tag directly
                emitted_tags[d["id"]] = (owned["type"]["qualType"], nxt["name"])
                items.append((line, text, d, nxt))
                i += 2
                continue
            if k == "RecordDecl" and not d.get("completeDefinition") and nxt is not None and \
                    nxt["kind"] == "TypedefDecl" and \
                    re.search(r"\b(struct|union) " + re.escape(d.get("name", "?")) + r"\b", nxt["type"]["qualType"]):
                i += 1  # the typedef that follows declares the tag itself
                continue
            items.append((line, body + ";", d, None))
            i += 1
            continue
        if k == "TypedefDecl" and d["name"] in PREAMBLE_TYPEDEFS:
            i += 1
            continue
        if k == "TypedefDecl":
            qt = d["type"]["qualType"]
            if ANON_TAG.search(qt):
                raise GenError(f"typedef {d['name']} names an anonymous tag it does not own")
            items.append((line, emitter.typedef_text(d), d, None))
        elif k == "FunctionDecl":
            items.append((line, emitter.function_text(d, emitter.written_name(d)), d, None))
        else:
            raise GenError(f"unexpected top-level {k} {d.get('name')}")
        i += 1
    return items


def enum_conditions(model):
    """Enumerators that only the internal configurations declare, with the condition to wrap them in."""
    def names(cfg):
        s = set()
        for _, d in model.decls[cfg]:
            if d["kind"] == "EnumDecl":
                for n, _, _ in enum_values(d):
                    s.add(n)
        return s
    base, internal, odr = names("default"), names("internal"), names("internal_odr")
    conds = {}
    for n in internal - base:
        conds[n] = INTERNAL if n in odr else INTERNAL_NOT_ODR
    if odr - internal:
        raise GenError(f"enumerators only under _ODR: {sorted(odr - internal)}")
    return conds


def macro_defs(model, cfg, final=False):
    """Macro definitions of `cfg`; with `final`, only those still defined at the end of the header."""
    out = OrderedDict()
    for kind, name, params, body, f, line in model.macros[cfg]:
        if kind == "define":
            out[name] = (params, body, line)
        elif final:
            out.pop(name, None)
    return out


def macro_events(model, cfg):
    return [(k, n, p, b, line) for k, n, p, b, f, line in model.macros[cfg]]


API_NAME_BODY = re.compile(r"^(?:(__CUDA_API_PT(?:DS|SZ))\((\w+)\)|(\w+))$")


def is_api_name_macro(name, params, body):
    return params is None and re.match(r"^cu[A-Z]", name) and \
        API_NAME_BODY.match(body) is not None


# --------------------------------------------------------------------------------------------------
# cuda.h

BANNER = """/*
 * {file}: generated by tools/gen-cuda-h/gen_cuda_h.py from the ABI facts (declarations, types,
 * values, macro definitions) of NVIDIA's CUDA {ver} toolkit headers. Do not edit; re-run the generator.
 * Part of cuemu, a software implementation of the CUDA driver API.
 */
"""

PREAMBLE_DEPRECATED = """\
#if defined(__CUDA_API_VERSION_INTERNAL) || defined(__DOXYGEN_ONLY__) || defined(CUDA_ENABLE_DEPRECATED)
#define __CUDA_DEPRECATED
#elif defined(_MSC_VER)
#define __CUDA_DEPRECATED __declspec(deprecated)
#elif defined(__GNUC__)
#define __CUDA_DEPRECATED __attribute__((deprecated))
#else
#define __CUDA_DEPRECATED
#endif
"""

PREAMBLE_FORCE = """\
#if defined(CUDA_FORCE_API_VERSION)
#error "CUDA_FORCE_API_VERSION is no longer supported."
#endif
"""

PREAMBLE_PTDS = """\
#if defined(__CUDA_API_VERSION_INTERNAL) || defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define __CUDA_API_PER_THREAD_DEFAULT_STREAM
#define __CUDA_API_PTDS(api) api ## _ptds
#define __CUDA_API_PTSZ(api) api ## _ptsz
#else
#define __CUDA_API_PTDS(api) api
#define __CUDA_API_PTSZ(api) api
#endif
"""

EXTENSION_HELPERS = """\
/* cuemu-private helpers, undefined again at the end of this header. */
#if defined(__GNUC__)
#define __CUEMU_EXTENSION __extension__
#else
#define __CUEMU_EXTENSION
#endif
#if defined(__cplusplus) && (__cplusplus >= 201103L)
#define __CUEMU_ALIGNAS(n) alignas(n)
#elif defined(__STDC_VERSION__) && (__STDC_VERSION__ >= 201112L)
#define __CUEMU_ALIGNAS(n) _Alignas(n)
#else
#define __CUEMU_ALIGNAS(n)
#endif
"""

PTSZ_GETPROCADDRESS = """\
/* Per-thread default stream builds ask cuGetProcAddress for per-thread variants unless told otherwise. */
static inline CUresult cuGetProcAddress_v2_ptsz(const char *symbol, void **funcPtr, int driverVersion,
                                                cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
    const cuuint64_t streamModes = CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    if ((flags & streamModes) == 0) {
        flags |= CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    }
    return cuGetProcAddress_v2(symbol, funcPtr, driverVersion, flags, symbolStatus);
}
#define cuGetProcAddress_v2 cuGetProcAddress_v2_ptsz
"""

CUDA_H_STRUCTURAL = {
    "__cuda_cuda_h__", "__CUDA_DEPRECATED", "__CUDA_API_PER_THREAD_DEFAULT_STREAM", "__CUDA_API_PTDS",
    "__CUDA_API_PTSZ", "CUDA_CB", "CUDAAPI", "CU_UUID_HAS_BEEN_DEFINED", "_CONCAT_INNER", "_CONCAT_OUTER",
    "cuGetProcAddress_v2",
}


def expect_macro(defs, name, params, body):
    if name not in defs:
        raise GenError(f"expected macro {name} is missing")
    p, b, _ = defs[name]
    if (p or None) != (params or None) or b.replace(" ", "") != body.replace(" ", ""):
        raise GenError(f"macro {name} changed: ({p}) {b}")


def check_cuda_h_structure(model):
    d = macro_defs(model, "default")
    expect_macro(d, "__CUDA_API_PTDS", ["api"], "api")
    expect_macro(d, "__CUDA_API_PTSZ", ["api"], "api")
    expect_macro(d, "CUDAAPI", None, "")
    expect_macro(d, "CUDA_CB", None, "")
    expect_macro(d, "__CUDA_DEPRECATED", None, "__attribute__((deprecated))")
    p = macro_defs(model, "ptds")
    expect_macro(p, "__CUDA_API_PTDS", ["api"], "api ## _ptds")
    expect_macro(p, "__CUDA_API_PTSZ", ["api"], "api ## _ptsz")
    expect_macro(p, "cuGetProcAddress_v2", None, "cuGetProcAddress_v2_ptsz")
    i = macro_defs(model, "internal")
    expect_macro(i, "__CUDA_DEPRECATED", None, "")
    expect_macro(i, "__CUDA_API_PER_THREAD_DEFAULT_STREAM", None, "")


def generate_cuda_h(model, version_text):
    check_cuda_h_structure(model)
    em = Emitter(model)
    conds = enum_conditions(model)

    keys = {cfg: [decl_key(d) for _, d in model.decls[cfg]] for cfg in CONFIGS}
    base = set(keys["default"])
    ptds_only = [d for _, d in model.decls["ptds"] if decl_key(d) not in base]
    if [d.get("name") for d in ptds_only] != ["cuGetProcAddress_v2_ptsz"]:
        raise GenError(f"unexpected per-thread-only declarations: {[d.get('name') for d in ptds_only]}")
    internal_only = [d for _, d in model.decls["internal"] if decl_key(d) not in base]
    if set(keys["default"]) - set(keys["internal"]):
        raise GenError("declarations missing from the internal configuration")

    body = build_body(model, em, [d for _, d in model.decls["default"]], conds,
                      skip=lambda d: d["kind"] == "FunctionDecl" and "inner" in d and
                      any(c["kind"] == "CompoundStmt" for c in d["inner"]))
    tail_em = Emitter(model)
    tail = build_body(model, tail_em, internal_only)
    tail_line = min(line for line, *_ in tail) if tail else None

    # Macros.
    dflt, ptds, internal = macro_defs(model, "default"), macro_defs(model, "ptds"), macro_defs(model, "internal")
    api_default, api_ptds_only, constants = [], [], []
    for name, (params, mbody, line) in dflt.items():
        if name in CUDA_H_STRUCTURAL:
            continue
        if is_api_name_macro(name, params, mbody):
            api_default.append((name, mbody))
        elif params is not None:
            raise GenError(f"unexpected function-like macro {name}")
        else:
            constants.append((line, name, mbody))
    for name, (params, mbody, line) in ptds.items():
        if name in CUDA_H_STRUCTURAL or name in dflt:
            continue
        if not is_api_name_macro(name, params, mbody):
            raise GenError(f"unexpected per-thread-only macro {name}")
        api_ptds_only.append((name, mbody))
    for name in internal:
        if name not in dflt and name not in ptds and name not in CUDA_H_STRUCTURAL:
            raise GenError(f"unexpected internal-only macro {name}")
    # Names the internal configuration takes back so that the legacy declarations can use them.
    undefs = []
    default_undefs = {n for k, n, *_ in macro_events(model, "default") if k == "undef"}
    for k, n, p, b, line in macro_events(model, "internal"):
        if k == "undef" and n not in default_undefs and n not in undefs:
            undefs.append(n)

    out = []
    w = out.append
    w(BANNER.format(file="cuda.h", ver=version_text))
    w("#ifndef __cuda_cuda_h__\n#define __cuda_cuda_h__\n\n#include <stdlib.h>\n")
    w("#ifdef _MSC_VER\ntypedef unsigned __int32 cuuint32_t;\ntypedef unsigned __int64 cuuint64_t;\n"
      "#else\n#include <stdint.h>\ntypedef uint32_t cuuint32_t;\ntypedef uint64_t cuuint64_t;\n#endif\n\n")
    w(PREAMBLE_DEPRECATED + "\n" + PREAMBLE_FORCE + "\n" + PREAMBLE_PTDS + "\n")
    w("/* Public names of versioned entry points. */\n")
    width = max(len(n) for n, _ in api_default + api_ptds_only) + 1
    for n, b in api_default:
        w(f"#define {n.ljust(width)}{b}\n")
    w("\n/* Per-thread default stream forms of entry points whose default form keeps its name. */\n")
    w("#if defined(__CUDA_API_PER_THREAD_DEFAULT_STREAM)\n")
    for n, b in api_ptds_only:
        w(f"#define {n.ljust(width)}{b}\n")
    w("#endif\n\n")
    w(EXTENSION_HELPERS + "\n")
    w("#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n")

    # Platform-dependent pieces of the type section that the toolkit header selects by preprocessor.
    special_typedefs = {
        "CUdeviceptr_v2": "#if defined(_WIN64) || defined(__LP64__)\n{t}\n#else\ntypedef unsigned int CUdeviceptr_v2;\n#endif",
    }
    uuid_guard = ("#ifndef CU_UUID_HAS_BEEN_DEFINED\n#define CU_UUID_HAS_BEEN_DEFINED\n{t}\n#endif")
    if "CU_UUID_HAS_BEEN_DEFINED" not in dflt:
        raise GenError("expected the CU_UUID_HAS_BEEN_DEFINED guard")

    functions_started = False
    merged = [(i[0], 1, ("decl", i)) for i in body]
    merged += [(line, 0, ("macro", (name, mbody))) for line, name, mbody in constants]
    merged.sort(key=lambda x: (x[0], x[1]))
    tail_written = False
    prev_kind = None
    for line, _, (kind, payload) in merged:
        if tail_line is not None and not tail_written and line > tail_line:
            w(render_internal_tail(undefs, tail))
            tail_written = True
        if kind == "macro":
            name, mbody = payload
            if prev_kind != "macro":
                w("\n")
            w(f"#define {name} {mbody}\n" if mbody else f"#define {name}\n")
            prev_kind = "macro"
            continue
        _, text, d, td = payload
        if d["kind"] == "FunctionDecl" and not functions_started:
            w("\n#if defined(__GNUC__)\n#if defined(__CUDA_API_PUSH_VISIBILITY_DEFAULT)\n"
              "#pragma GCC visibility push(default)\n#endif\n#endif\n\n"
              "#ifdef _WIN32\n#define CUDAAPI __stdcall\n#else\n#define CUDAAPI\n#endif\n\n")
            functions_started = True
        if d["kind"] == "TypedefDecl" and d["name"] in special_typedefs:
            text = special_typedefs[d["name"]].format(t=text)
        if d.get("name") == "CUuuid_st":
            text = uuid_guard.format(t=text)
        block = "\n" in text
        if prev_kind == "macro" or block or prev_kind == "block" or \
                (prev_kind is not None and prev_kind != d["kind"]):
            w("\n")
        w(text + "\n")
        prev_kind = "block" if block else d["kind"]
    if tail_line is not None and not tail_written:
        w(render_internal_tail(undefs, tail))
    w("\n#ifdef __cplusplus\n}\n#endif\n\n")
    w("#if defined(__GNUC__)\n#if defined(__CUDA_API_PUSH_VISIBILITY_DEFAULT)\n#pragma GCC visibility pop\n"
      "#endif\n#endif\n\n")
    w("#undef __CUEMU_EXTENSION\n#undef __CUEMU_ALIGNAS\n#undef __CUDA_DEPRECATED\n\n#endif /* __cuda_cuda_h__ */\n")
    text = "".join(out)
    # CUDA_CB must exist before the first callback typedef.
    first_cb = text.find("CUDA_CB ")
    if first_cb >= 0:
        cut = text.rfind("\n", 0, text.rfind("typedef", 0, first_cb)) + 1
        text = text[:cut] + "#ifdef _WIN32\n#define CUDA_CB __stdcall\n#else\n#define CUDA_CB\n#endif\n\n" + text[cut:]
    return collapse_blank_lines(text)


def render_internal_tail(undefs, tail):
    out = ["\n/* Legacy names and signatures, visible only to code that defines __CUDA_API_VERSION_INTERNAL. */\n",
           f"#if {INTERNAL}\n"]
    for n in undefs:
        out.append(f"#undef {n}\n")
    out.append("\n")
    for _, text, _, _ in tail:
        out.append(text + "\n")
    out.append("#elif defined(__CUDA_API_PER_THREAD_DEFAULT_STREAM)\n")
    out.append(PTSZ_GETPROCADDRESS)
    out.append("#endif\n")
    return "".join(out)


def collapse_blank_lines(text):
    return re.sub(r"\n{3,}", "\n\n", text)


# --------------------------------------------------------------------------------------------------
# Typedef headers (cudaTypedefs.h and the interop *Typedefs.h)

TYPEDEF_MACROS = """\
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define __API_TYPEDEF_PTDS(api, default_version, ptds_version) api ## _v ## ptds_version ## _ptds
#define __API_TYPEDEF_PTSZ(api, default_version, ptds_version) api ## _v ## ptds_version ## _ptsz
#else
#define __API_TYPEDEF_PTDS(api, default_version, ptds_version) api ## _v ## default_version
#define __API_TYPEDEF_PTSZ(api, default_version, ptds_version) api ## _v ## default_version
#endif
"""


def generate_simple_header(model, out_name, guard, includes, version_text, structural, preamble="",
                           deprecated=False):
    """Headers made of typedefs/functions/macros with an optional __CUDA_API_VERSION_INTERNAL tail."""
    em = Emitter(model)
    conds = enum_conditions(model)
    base = {decl_key(d) for _, d in model.decls["default"]}
    for cfg in ("ptds",):
        extra = [d for _, d in model.decls[cfg] if decl_key(d) not in base]
        if extra:
            raise GenError(f"{out_name}: unexpected {cfg}-only declarations")
    internal_only = [d for _, d in model.decls["internal"] if decl_key(d) not in base]
    body = build_body(model, em, [d for _, d in model.decls["default"]], conds)
    tail = build_body(model, Emitter(model), internal_only)
    tail_line = min(line for line, *_ in tail) if tail else None

    dflt, ptds = macro_defs(model, "default"), macro_defs(model, "ptds")
    api, constants = [], []
    for name, (params, mbody, line) in dflt.items():
        if name in structural or name == guard:
            continue
        if is_api_name_macro(name, params, mbody):
            api.append((name, mbody))
        elif params is not None:
            raise GenError(f"{out_name}: unexpected function-like macro {name}")
        else:
            constants.append((line, name, mbody))
    for name, (params, mbody, line) in ptds.items():
        if name not in dflt and name not in structural:
            raise GenError(f"{out_name}: unexpected per-thread-only macro {name}")
    default_undefs = {n for k, n, *_ in macro_events(model, "default") if k == "undef"}
    undefs = []
    for k, n, p, b, line in macro_events(model, "internal"):
        if k == "undef" and n not in default_undefs and n not in undefs:
            undefs.append(n)

    out = [BANNER.format(file=out_name, ver=version_text), f"#ifndef {guard}\n#define {guard}\n\n"]
    for inc in includes:
        out.append(f"#include {inc}\n")
    out.append("\n")
    if deprecated:
        out.append(PREAMBLE_DEPRECATED + "\n")
    out.append(preamble)
    if api:
        width = max(len(n) for n, _ in api) + 1
        out.append("/* Public names of versioned entry points. */\n")
        for n, b in api:
            out.append(f"#define {n.ljust(width)}{b}\n")
        out.append("\n")
    out.append("#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n")
    merged = [(i[0], 1, ("decl", i)) for i in body] + [(line, 0, ("macro", (n, b))) for line, n, b in constants]
    merged.sort(key=lambda x: (x[0], x[1]))
    tail_written = False
    prev = None
    for line, _, (kind, payload) in merged:
        if tail_line is not None and not tail_written and line > tail_line:
            out.append(render_simple_tail(undefs, tail))
            tail_written = True
            prev = None
        if kind == "macro":
            n, b = payload
            if prev != "macro":
                out.append("\n")
            out.append(f"#define {n} {b}\n" if b else f"#define {n}\n")
            prev = "macro"
            continue
        text = payload[1]
        if prev == "macro" or "\n" in text or (prev == "block"):
            out.append("\n")
        out.append(text + "\n")
        prev = "block" if "\n" in text else "decl"
    if tail_line is not None and not tail_written:
        out.append(render_simple_tail(undefs, tail))
    out.append("\n#ifdef __cplusplus\n}\n#endif\n\n")
    if deprecated:
        out.append("#undef __CUDA_DEPRECATED\n")
    if em.anon_ext or em.alignas:
        raise GenError(f"{out_name}: nested anonymous members are not handled here")
    out.append(f"\n#endif /* {guard} */\n")
    return collapse_blank_lines("".join(out))


def render_simple_tail(undefs, tail):
    out = ["\n/* Legacy forms, visible only to code that defines __CUDA_API_VERSION_INTERNAL. */\n",
           f"#if {INTERNAL}\n"]
    for n in undefs:
        out.append(f"#undef {n}\n")
    for _, text, _, _ in tail:
        out.append(text + "\n")
    out.append("#endif\n\n")
    return "".join(out)


# --------------------------------------------------------------------------------------------------
# ABI manifest: the names the ABI test asks both headers about


def record_fields(rec, prefix, out, type_name):
    items = [c for c in rec.get("inner", []) if "Comment" not in c["kind"]]
    pending = None
    for c in items:
        k = c["kind"]
        if k == "RecordDecl":
            pending = c
        elif k == "FieldDecl" and c.get("isImplicit"):
            record_fields(pending, prefix, out, type_name)
            pending = None
        elif k == "FieldDecl":
            path = prefix + c["name"]
            out.append(f"ABI_FIELD({type_name}, {path})")
            qt = c["type"]["qualType"]
            if pending is not None and "[" not in qt and "*" not in qt:
                record_fields(pending, path + ".", out, type_name)
            pending = None
    return out


def manifest_lines(models, cfg):
    lines, seen = [], set()

    def add(line):
        if line not in seen:
            seen.add(line)
            lines.append(line)

    complete = set()
    for m in models:
        for _, d in m.decls[cfg]:
            if d["kind"] == "RecordDecl" and d.get("completeDefinition") and d.get("name"):
                complete.add(d["name"])
    for m in models:
        decls = [d for _, d in m.decls[cfg]]
        for i, d in enumerate(decls):
            k = d["kind"]
            if k == "FunctionDecl":
                add(f"ABI_FUNCTION({d['name']})")
            elif k == "EnumDecl":
                if d.get("name"):
                    add(f"ABI_TYPE(enum {d['name']})")
                for n, _, _ in enum_values(d):
                    add(f"ABI_ENUM({n})")
            elif k == "RecordDecl":
                tag = d.get("tagUsed", "struct")
                if d.get("completeDefinition"):
                    tname = f"{tag} {d['name']}" if d.get("name") else None
                    if tname is None:
                        nxt = decls[i + 1]
                        tname = nxt["name"]
                    add(f"ABI_TYPE({tname})")
                    for line in record_fields(d, "", [], tname):
                        add(line)
                elif d.get("name") and d["name"] not in complete:
                    add(f"ABI_OPAQUE({tag} {d['name']})")
            elif k == "TypedefDecl":
                canon = d["type"].get("desugaredQualType", d["type"]["qualType"])
                mt = re.match(r"^(struct|union) (\w+)$", canon)
                if mt and mt.group(2) not in complete:
                    add(f"ABI_OPAQUE({d['name']})")
                else:
                    add(f"ABI_TYPE({d['name']})")
    for m in models:
        for name, (params, body, line) in macro_defs(m, cfg, final=True).items():
            if params is None:
                add(f"ABI_MACRO({name})")
            else:
                args = ", ".join(f"a{i}" for i in range(len(params)))
                add(f"ABI_MACRO_FN({name}, ({args}))")
    return lines


def generate_manifest(models, cfg, version_text):
    head = (f"/* ABI test manifest for the '{cfg}' configuration: every function, type, field, enumerator\n"
            f" * and macro that NVIDIA's CUDA {version_text} cuda.h and cudaTypedefs.h declare there.\n"
            " * Generated by tools/gen-cuda-h/gen_cuda_h.py; do not edit. */\n")
    return head + "\n".join(manifest_lines(models, cfg)) + "\n"


# --------------------------------------------------------------------------------------------------
# Enum table for tracing

INT_MACRO = re.compile(r"^\(?\s*(0[xX][0-9a-fA-F]+|-?\d+)[uUlL]*\s*\)?$")


def generate_enums_def(model, version_text):
    out = ["/* Every enumeration of the CUDA driver API and its constants, plus the integer flag macros\n"
           f" * grouped by prefix; from NVIDIA's CUDA {version_text} cuda.h.\n"
           " * Generated by tools/gen-cuda-h/gen_cuda_h.py; do not edit.\n"
           " *\n"
           " * CUEMU_ENUM_BEGIN(Type) / CUEMU_ENUM_END(Type) bracket one enumeration (Type is its typedef name,\n"
           " * or its tag where it has none). CUEMU_ENUM_VALUE(Type, NAME, value) is the first name of a value;\n"
           " * CUEMU_ENUM_ALIAS(Type, NAME, value, FIRST) names a value that FIRST already names.\n"
           " * CUEMU_FLAGS_BEGIN(GROUP) / CUEMU_FLAG(GROUP, NAME, value) / CUEMU_FLAGS_END(GROUP) list the\n"
           " * #define'd constants (flags, limits) by common prefix. Undefined hooks expand to nothing. */\n",
           "#ifndef CUEMU_ENUM_BEGIN\n#define CUEMU_ENUM_BEGIN(Type)\n#endif\n",
           "#ifndef CUEMU_ENUM_VALUE\n#define CUEMU_ENUM_VALUE(Type, Name, Value)\n#endif\n",
           "#ifndef CUEMU_ENUM_ALIAS\n#define CUEMU_ENUM_ALIAS(Type, Name, Value, First)\n#endif\n",
           "#ifndef CUEMU_ENUM_END\n#define CUEMU_ENUM_END(Type)\n#endif\n",
           "#ifndef CUEMU_FLAGS_BEGIN\n#define CUEMU_FLAGS_BEGIN(Group)\n#endif\n",
           "#ifndef CUEMU_FLAG\n#define CUEMU_FLAG(Group, Name, Value)\n#endif\n",
           "#ifndef CUEMU_FLAGS_END\n#define CUEMU_FLAGS_END(Group)\n#endif\n\n"]
    decls = [d for _, d in model.decls["default"]]
    all_values = {}
    for i, d in enumerate(decls):
        if d["kind"] != "EnumDecl":
            continue
        name = d.get("name")
        nxt = decls[i + 1] if i + 1 < len(decls) else None
        if nxt is not None and nxt["kind"] == "TypedefDecl" and any(
                t.get("ownedTagDecl", {}).get("id") == d["id"] for t in nxt.get("inner", [])):
            name = nxt["name"]
        if not name:
            raise GenError("anonymous enum without a typedef")
        out.append(f"CUEMU_ENUM_BEGIN({name})\n")
        first = {}
        for n, v, _ in enum_values(d):
            all_values[n] = v
            if v in first:
                out.append(f"CUEMU_ENUM_ALIAS({name}, {n}, {v}, {first[v]})\n")
            else:
                first[v] = n
                out.append(f"CUEMU_ENUM_VALUE({name}, {n}, {v})\n")
        out.append(f"CUEMU_ENUM_END({name})\n\n")
    # Integer-valued #defines, clustered in source order by their common name prefix.
    groups = []  # [prefix components, [(name, value)]]
    for name, (params, body, line) in macro_defs(model, "default", final=True).items():
        if params is not None or not re.match(r"^CU(DA)?_", name) or name == "CUDA_VERSION":
            continue
        m = INT_MACRO.match(body)
        if m:
            value = int(m.group(1), 0)
        elif body in all_values:
            value = all_values[body]
        else:
            continue
        parts = name.split("_")
        if groups:
            prefix, members = groups[-1]
            common = []
            for a, b in zip(prefix, parts):
                if a != b:
                    break
                common.append(a)
            if (len(members) == 1 and len(common) >= 2 and len(common) < len(parts)) or \
                    (len(members) > 1 and common == prefix):
                groups[-1][0] = common
                members.append((name, value))
                continue
        groups.append([parts[:-1], [(name, value)]])
    for prefix, members in groups:
        group = "_".join(prefix)
        out.append(f"CUEMU_FLAGS_BEGIN({group})\n")
        for n, v in members:
            out.append(f"CUEMU_FLAG({group}, {n}, {v})\n")
        out.append(f"CUEMU_FLAGS_END({group})\n\n")
    out.append("#undef CUEMU_ENUM_BEGIN\n#undef CUEMU_ENUM_VALUE\n#undef CUEMU_ENUM_ALIAS\n#undef CUEMU_ENUM_END\n"
               "#undef CUEMU_FLAGS_BEGIN\n#undef CUEMU_FLAG\n#undef CUEMU_FLAGS_END\n")
    return "".join(out)


# --------------------------------------------------------------------------------------------------
# Profiler and graphics interop headers

# Stand-in for <vdpau/vdpau.h> (libvdpau's public types) so that cudaVDPAU.h can be read where
# libvdpau-dev is not installed. Only the names cudaVDPAU.h uses; nothing of it is emitted.
VDPAU_STANDIN = """#ifndef CUEMU_VDPAU_STANDIN
#define CUEMU_VDPAU_STANDIN
#include <stdint.h>
typedef uint32_t VdpDevice;
typedef uint32_t VdpVideoSurface;
typedef uint32_t VdpOutputSurface;
typedef int VdpStatus;
typedef VdpStatus VdpGetProcAddress(VdpDevice device, uint32_t function_id, void **function_pointer);
#endif
"""

# (header, guard, includes as the toolkit's header has them, structural macros it defines itself,
#  whether it carries the __CUDA_DEPRECATED / per-thread-stream preambles)
INTEROP_HEADERS = [
    ("cudaProfiler.h", "cuda_profiler_H", ["<cuda.h>"], {"__CUDA_DEPRECATED"}, True, False),
    ("cudaGL.h", "CUDAGL_H", ["<cuda.h>", "<GL/gl.h>"],
     {"__CUDA_DEPRECATED", "__CUDA_API_PER_THREAD_DEFAULT_STREAM", "__CUDA_API_PTDS", "__CUDA_API_PTSZ"}, True, True),
    ("cudaEGL.h", "CUDAEGL_H", ['"cuda.h"', '"EGL/egl.h"', '"EGL/eglext.h"'], set(), False, False),
    ("cudaVDPAU.h", "CUDAVDPAU_H", [], set(), False, False),
    ("cudaProfilerTypedefs.h", "CUDAPROFILERTYPEDEFS_H", ["<cudaProfiler.h>"], set(), False, False),
    ("cudaGLTypedefs.h", "CUDAGLTYPEDEFS_H", ["<GL/gl.h>", "<cudaGL.h>"],
     {"__API_TYPEDEF_PTDS", "__API_TYPEDEF_PTSZ"}, False, False),
    ("cudaEGLTypedefs.h", "CUDAEGLTYPEDEFS_H", ["<cudaEGL.h>"], set(), False, False),
    ("cudaVDPAUTypedefs.h", "CUDAVDPAUTYPEDEFS_H", ["<vdpau/vdpau.h>", "<cudaVDPAU.h>"], set(), False, False),
]


def generate_interop(tk, parsed, version_text, outputs):
    models = []
    for name, guard, includes, structural, deprecated, ptds in INTEROP_HEADERS:
        model = HeaderModel(name, os.path.join(tk, name), parsed)
        preamble = ""
        if ptds:
            preamble += PREAMBLE_FORCE + "\n" + PREAMBLE_PTDS + "\n"
        if "__API_TYPEDEF_PTDS" in structural:
            preamble += TYPEDEF_MACROS + "\n"
        outputs[f"include/{name}"] = generate_simple_header(
            model, name, guard, includes, version_text, structural | {guard}, preamble=preamble,
            deprecated=deprecated)
        models.append((name, model))
    return models


def generate_interop_signatures(models, version_text):
    out = [f"# Entry points of NVIDIA's CUDA {version_text} profiler and graphics interop headers, one per line:\n",
           "# exported name <TAB> return type <TAB> parameters <TAB> header <TAB> configurations declaring it\n",
           "# (default, ptds = CUDA_API_PER_THREAD_DEFAULT_STREAM, internal = __CUDA_API_VERSION_INTERNAL).\n",
           "# Generated by tools/gen-cuda-h/gen_cuda_h.py; do not edit. Windows-only entry points are not listed.\n"]
    rows = OrderedDict()
    for header, model in models:
        for cfg in ("default", "ptds", "internal"):
            for _, d in model.decls[cfg]:
                if d["kind"] != "FunctionDecl":
                    continue
                params = [declare(p["type"]["qualType"], p.get("name", "")) for p in d.get("inner", [])
                          if p["kind"] == "ParmVarDecl"]
                ret, _ = split_function_type(d["type"]["qualType"])
                key = (d["name"], ret, ", ".join(params) or "void", header)
                rows.setdefault(key, []).append(cfg)
    for (name, ret, params, header), cfgs in rows.items():
        out.append(f"{name}\t{ret}\t({params})\t{header}\t{','.join(cfgs)}\n")
    return "".join(out)


# --------------------------------------------------------------------------------------------------
# --check: our headers read back through clang must give the toolkit's facts, nothing more or less


def _norm_type(t):
    return ANON_TAG.sub("<anonymous>", t)


def _deprecated(node):
    return any(c["kind"] == "DeprecatedAttr" for c in node.get("inner", []))


def ast_facts(model, cfg):
    facts = set()

    def record(node, owner):
        for c in node.get("inner", []):
            if c["kind"] == "FieldDecl":
                facts.add(("field", owner, c.get("name", ""), _norm_type(c["type"]["qualType"]),
                           tuple(a["inner"][0]["value"] for a in c.get("inner", []) if a["kind"] == "AlignedAttr")))
            elif c["kind"] == "RecordDecl":
                record(c, owner + "." + (c.get("name") or "<anonymous>"))

    for _, d in model.decls[cfg]:
        k, name = d["kind"], d.get("name") or "<anonymous>"
        if k == "FunctionDecl":
            facts.add(("function", name, d["type"]["qualType"], _deprecated(d),
                       any(c["kind"] == "CompoundStmt" for c in d.get("inner", []))))
        elif k == "TypedefDecl":
            facts.add(("typedef", name, _norm_type(d["type"]["qualType"])))
        elif k == "EnumDecl":
            for n, v, c in enum_values(d):
                facts.add(("enumerator", name, n, v, _deprecated(c)))
        elif k == "RecordDecl":
            facts.add(("record", d.get("tagUsed"), name, bool(d.get("completeDefinition"))))
            record(d, name)
    for name, (params, body, _) in macro_defs(model, cfg, final=True).items():
        facts.add(("macro", name, tuple(params) if params is not None else None, re.sub(r"\s+", "", body)))
    return facts


def compare_with_toolkit(parsed_theirs, tk, ours_dir, headers, problems):
    workdir = tempfile.mkdtemp(prefix="cuemu-check-")
    try:
        os.makedirs(os.path.join(workdir, "vdpau"))
        with open(os.path.join(workdir, "vdpau", "vdpau.h"), "w") as f:
            f.write(VDPAU_STANDIN)
        parsed_ours = parse_toolkit(ours_dir, headers, workdir, prelude=["vdpau/vdpau.h"])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    for h in headers:
        theirs = HeaderModel(h, os.path.join(tk, h), parsed_theirs)
        ours = HeaderModel(h, os.path.join(ours_dir, h), parsed_ours)
        for cfg in CONFIGS:
            a, b = ast_facts(theirs, cfg), ast_facts(ours, cfg)
            for f in sorted(a - b, key=str)[:20]:
                problems.append(f"{h} [{cfg}]: ours lacks {f}")
            for f in sorted(b - a, key=str)[:20]:
                problems.append(f"{h} [{cfg}]: ours adds {f}")


# --------------------------------------------------------------------------------------------------
# Driver


def write_if_changed(path, text, check, problems):
    old = None
    if os.path.exists(path):
        with open(path) as f:
            old = f.read()
    if check:
        if old != text:
            problems.append(f"{path} is not what the generator produces")
        return
    if old != text:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--toolkit-include", default=os.environ.get("CUEMU_TOOLKIT_INCLUDE", "/usr/local/cuda/include"))
    ap.add_argument("--repo", default=os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..")))
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--perturb", metavar="KIND")
    ap.add_argument("--input")
    ap.add_argument("--output")
    args = ap.parse_args(argv)

    if args.perturb:
        return perturb_main(args)

    tk = args.toolkit_include
    workdir = tempfile.mkdtemp(prefix="cuemu-gen-")
    try:
        os.makedirs(os.path.join(workdir, "vdpau"))
        with open(os.path.join(workdir, "vdpau", "vdpau.h"), "w") as f:
            f.write(VDPAU_STANDIN)
        headers = ["cuda.h", "cudaTypedefs.h"] + [h[0] for h in INTEROP_HEADERS]
        parsed = parse_toolkit(tk, headers, workdir, prelude=["vdpau/vdpau.h"])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    cuda = HeaderModel("cuda.h", os.path.join(tk, "cuda.h"), parsed)
    ver = int(macro_defs(cuda, "default")["CUDA_VERSION"][1])
    version_text = f"{ver // 1000}.{ver % 1000 // 10}"
    outputs = OrderedDict()
    outputs["include/cuda.h"] = generate_cuda_h(cuda, version_text)
    tdefs = HeaderModel("cudaTypedefs.h", os.path.join(tk, "cudaTypedefs.h"), parsed)
    outputs["include/cudaTypedefs.h"] = generate_simple_header(
        tdefs, "cudaTypedefs.h", "CUDATYPEDEFS_H", ["<cuda.h>"], version_text,
        {"__API_TYPEDEF_PTDS", "__API_TYPEDEF_PTSZ"}, preamble=TYPEDEF_MACROS + "\n")

    interop_models = generate_interop(tk, parsed, version_text, outputs)
    for cfg in ("default", "ptds", "internal"):
        outputs[f"tests/abi/generated/abi_manifest_{cfg}.inc"] = generate_manifest([cuda, tdefs], cfg, version_text)
    outputs["emu/api/generated/cuda_enums.def"] = generate_enums_def(cuda, version_text)
    outputs["emu/api/generated/interop_signatures.txt"] = generate_interop_signatures(interop_models, version_text)
    for cfg in ("default", "ptds", "internal"):
        outputs[f"tests/abi/generated/abi_manifest_interop_{cfg}.inc"] = generate_manifest(
            [m for name, m in interop_models], cfg, version_text).replace(
            "cuda.h and cudaTypedefs.h", "interop and profiler headers")

    problems = []
    for rel, text in outputs.items():
        write_if_changed(os.path.join(args.repo, rel), text, args.check, problems)
    if args.check:
        compare_with_toolkit(parsed, tk, os.path.join(args.repo, "include"), headers, problems)
        if not problems:
            print(f"gen_cuda_h --check: {len(outputs)} generated files up to date; "
                  f"{len(headers)} headers match the toolkit's declarations in {len(CONFIGS)} configurations")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


# Deliberate ABI changes for the ABI test's self-check: (what to find, what to put instead).
PERTURBATIONS = {
    "enum": ("CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,", "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 2,"),
    "signature": ("cuMemAlloc(CUdeviceptr *dptr, size_t bytesize);",
                  "cuMemAlloc(CUdeviceptr *dptr, unsigned int bytesize);"),
    "field": ("    size_t srcXInBytes;\n", "    unsigned int srcXInBytes;\n"),
    "alignment": ("__CUEMU_ALIGNAS(128) ", ""),
    "macro": ("#define CU_MEMHOSTALLOC_DEVICEMAP 0x02", "#define CU_MEMHOSTALLOC_DEVICEMAP 0x04"),
    "typedef": ("typedef unsigned long long CUdeviceptr_v2;", "typedef unsigned long CUdeviceptr_v2;"),
}


def perturb_main(args):
    """Write a copy of our include/ (cuda.h with one change, cudaTypedefs.h as is) into --output."""
    if args.perturb not in PERTURBATIONS:
        raise GenError(f"--perturb takes one of {', '.join(PERTURBATIONS)}")
    src = args.input or os.path.join(args.repo, "include")
    with open(os.path.join(src, "cuda.h")) as f:
        text = f.read()
    find, replace = PERTURBATIONS[args.perturb]
    if text.count(find) < 1:
        raise GenError(f"perturbation '{args.perturb}' does not apply: '{find.strip()}' not found")
    text = text.replace(find, replace, 1)
    os.makedirs(args.output, exist_ok=True)
    with open(os.path.join(args.output, "cuda.h"), "w") as f:
        f.write(text)
    with open(os.path.join(src, "cudaTypedefs.h")) as f:
        tdefs = f.read()
    with open(os.path.join(args.output, "cudaTypedefs.h"), "w") as f:
        f.write(tdefs)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except GenError as e:
        print(f"gen_cuda_h: {e}", file=sys.stderr)
        sys.exit(2)
