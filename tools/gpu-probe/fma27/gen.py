#!/usr/bin/env python3
# Generates one PTX kernel per pattern of a multiply feeding an add, to learn from ptxas's SASS (run.sh) where
# it contracts mul + add/sub that carry no rounding modifier into one fused multiply-add.
import os, sys
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
T = {'f32': ('f', 4), 'f64': ('fd', 8), 'f16': ('h', 2)}
def kernel(name, ty, body, nin=4, nout=3):
    r, sz = T[ty]
    regty = 'b16' if ty == 'f16' else ty
    s = ['.version 8.0', '.target sm_90', '.address_size 64',
         '.visible .entry k(.param .u64 p, .param .u32 n)', '{',
         f'  .reg .{regty} %{r}<40>;', '  .reg .b64 %rd<8>;', '  .reg .b32 %r<8>;', '  .reg .pred %p<4>;',
         '  ld.param.u64 %rd1, [p];', '  ld.param.u32 %r1, [n];']
    for i in range(nin):
        s.append(f'  ld.global.{"b16" if ty=="f16" else ty} %{r}{i+1}, [%rd1+{i*sz}];')
    s += ['  ' + l for l in body.replace('R', '%' + r).replace('T', ty).strip().split('\n')]
    s += ['  ret;', '}']
    open(f'{out}/{name}_{ty}.ptx', 'w').write('\n'.join(s) + '\n')
def st(reg, slot, ty):
    return f'st.global.{"b16" if ty=="f16" else ty} [%rd1+{64+slot*8}], {reg};'
P = {
 'add_mul_first': 'mul.T R10, R1, R2;\nadd.T R11, R10, R3;\n' + 'ST(R11,0)',
 'add_mul_second': 'mul.T R10, R1, R2;\nadd.T R11, R3, R10;\n' + 'ST(R11,0)',
 'sub_mul_first': 'mul.T R10, R1, R2;\nsub.T R11, R10, R3;\n' + 'ST(R11,0)',
 'sub_mul_second': 'mul.T R10, R1, R2;\nsub.T R11, R3, R10;\n' + 'ST(R11,0)',
 'mul_also_stored': 'mul.T R10, R1, R2;\nadd.T R11, R10, R3;\n' + 'ST(R11,0)\nST(R10,1)',
 'mul_two_adds': 'mul.T R10, R1, R2;\nadd.T R11, R10, R3;\nadd.T R12, R10, R4;\n' + 'ST(R11,0)\nST(R12,1)',
 'mul_rn': 'mul.rn.T R10, R1, R2;\nadd.T R11, R10, R3;\n' + 'ST(R11,0)',
 'add_rn': 'mul.T R10, R1, R2;\nadd.rn.T R11, R10, R3;\n' + 'ST(R11,0)',
 'both_muls': 'mul.T R10, R1, R2;\nmul.T R12, R3, R4;\nadd.T R11, R10, R12;\n' + 'ST(R11,0)',
 'both_muls_sub': 'mul.T R10, R1, R2;\nmul.T R12, R3, R4;\nsub.T R11, R10, R12;\n' + 'ST(R11,0)',
 'chain': 'mul.T R10, R1, R2;\nmul.T R12, R3, R4;\nadd.T R11, R10, R12;\nadd.T R13, R11, R1;\n' + 'ST(R13,0)',
 'other_block': 'mul.T R10, R1, R2;\nsetp.eq.u32 %p1, %r1, 0;\n@%p1 bra L1;\nadd.T R11, R10, R3;\nST(R11,0)\nL1:\nST(R1,1)',
 'predicated_add': 'mul.T R10, R1, R2;\nsetp.eq.u32 %p1, %r1, 0;\n@%p1 add.T R11, R10, R3;\n@!%p1 mov.b{B} R11, R4;\nST(R11,0)',
 'mul_used_by_setp': 'mul.T R10, R1, R2;\nadd.T R11, R10, R3;\nsetp.gt.T %p1, R10, R4;\nselp.b{B} R12, R11, R4, %p1;\nST(R12,0)',
 'neg_between': 'mul.T R10, R1, R2;\nneg.T R12, R10;\nadd.T R11, R12, R3;\n' + 'ST(R11,0)',
 'add_sat': 'mul.T R10, R1, R2;\nadd.sat.T R11, R10, R3;\n' + 'ST(R11,0)',
 'mul_sat': 'mul.sat.T R10, R1, R2;\nadd.T R11, R10, R3;\n' + 'ST(R11,0)',
 'ftz_both': 'mul.ftz.T R10, R1, R2;\nadd.ftz.T R11, R10, R3;\n' + 'ST(R11,0)',
 'ftz_mul_only': 'mul.ftz.T R10, R1, R2;\nadd.T R11, R10, R3;\n' + 'ST(R11,0)',
 'ftz_add_only': 'mul.T R10, R1, R2;\nadd.ftz.T R11, R10, R3;\n' + 'ST(R11,0)',
 'mul_imm2': 'mul.T R10, R1, IMM2;\nadd.T R11, R10, R3;\n' + 'ST(R11,0)',
 'mul_imm3': 'mul.T R10, R1, IMM3;\nadd.T R11, R10, R3;\n' + 'ST(R11,0)',
 'add_imm': 'mul.T R10, R1, R2;\nadd.T R11, R10, IMM3;\n' + 'ST(R11,0)',
 'loop': 'mul.T R10, R1, R2;\nmov.b{B} R11, R3;\nmov.u32 %r2, 0;\nLOOP:\nadd.T R11, R11, R10;\nadd.u32 %r2, %r2, 1;\nsetp.lt.u32 %p1, %r2, %r1;\n@%p1 bra LOOP;\nST(R11,0)',
 'mul_redefined_input': 'mul.T R10, R1, R2;\nmov.b{B} R1, R4;\nadd.T R11, R10, R1;\n' + 'ST(R11,0)',
 'mul_then_mul_add': 'mul.T R10, R1, R2;\nmul.T R12, R10, R3;\nadd.T R11, R12, R4;\n' + 'ST(R11,0)',
 'add_then_used_twice': 'mul.T R10, R1, R2;\nadd.T R11, R10, R3;\nadd.T R12, R11, R11;\n' + 'ST(R12,0)',
 'sub_same': 'mul.T R10, R1, R1;\nsub.T R11, R10, R10;\n' + 'ST(R11,0)',
 'mul_add_same_operand': 'mul.T R10, R1, R2;\nadd.T R11, R10, R10;\n' + 'ST(R11,0)',
}
IMM = {'f32': ('0f40000000', '0f40400000'), 'f64': ('0d4000000000000000', '0d4008000000000000'), 'f16': None}
for ty in ('f32', 'f64', 'f16'):
    r, sz = T[ty]
    B = {'f32': '32', 'f64': '64', 'f16': '16'}[ty]
    for name, body in P.items():
        if ty == 'f16' and ('IMM' in body or name in ('mul_sat', 'neg_between', 'mul_used_by_setp')): continue
        if ty == 'f64' and ('sat' in name or 'ftz' in name): continue
        b = body.replace('{B}', B)
        if IMM[ty]: b = b.replace('IMM2', IMM[ty][0]).replace('IMM3', IMM[ty][1])
        import re
        b = re.sub(r'ST\((R\d+),(\d)\)', lambda m: st(m.group(1), int(m.group(2)), ty), b)
        kernel(name, ty, b)
