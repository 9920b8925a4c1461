#!/usr/bin/env python3
# Writes one small module per semantic check of the front end (operand shapes, types and modifiers of the
# tensor-core, matrix, barrier and async-copy instructions; per-type and per-modifier target/version gating) into
# tests/ptx-front/agreement/{valid,invalid}/chk_*.ptx. Each invalid module holds exactly one error, on the line
# of the instruction, so that the PtxasAgreement test can compare the line ptxas reports with ours.
# Usage: gen_check_cases.py [AGREEMENT_DIR] [--verify]   (--verify runs ptxas on every case and reports mismatches)
import os
import subprocess
import sys
import tempfile

def module(target, version, body, pre=''):
    return f'''.version {version}
.target {target}
.address_size 64
{pre}.visible .entry k(.param .u64 p)
{{
	.reg .pred %p<5>;
	.reg .b8 %c<5>;
	.reg .b16 %h<9>;
	.reg .b32 %r<33>;
	.reg .f32 %f<33>;
	.reg .b64 %rd<9>;
	.reg .f64 %fd<9>;
	{body}
	ret;
}}
'''

F4 = '{%f1,%f2,%f3,%f4}'
F8 = '{%f1,%f2,%f3,%f4,%f5,%f6,%f7,%f8}'
R2 = '{%r5,%r6}'
R4 = '{%r1,%r2,%r3,%r4}'
R8 = '{%r1,%r2,%r3,%r4,%r5,%r6,%r7,%r8}'
R8B = '{%r9,%r10,%r11,%r12,%r13,%r14,%r15,%r16}'
C4 = '{%f5,%f6,%f7,%f8}'

# (name, valid, target, version, instruction)
CASES = [
    # Versions that do not exist.
    ('version_6_6', False, 'sm_75', '6.6', 'add.u32 %r1, %r2, %r3;'),
    ('version_7_9', False, 'sm_90', '7.9', 'add.u32 %r1, %r2, %r3;'),
    ('version_8_8', True, 'sm_90', '8.8', 'add.u32 %r1, %r2, %r3;'),
    # Types and modifiers newer than the instruction.
    ('bf16_fma_sm80', True, 'sm_80', '7.0', 'fma.rn.bf16 %h1, %h2, %h3, %h4;'),
    ('bf16_fma_sm75', False, 'sm_75', '7.0', 'fma.rn.bf16 %h1, %h2, %h3, %h4;'),
    ('bf16_min_sm75', False, 'sm_75', '7.0', 'min.bf16 %h1, %h2, %h3;'),
    ('bf16_add_sm80', False, 'sm_80', '8.0', 'add.bf16 %h1, %h2, %h3;'),
    ('bf16_add_sm90', True, 'sm_90', '7.8', 'add.rn.bf16x2 %r1, %r2, %r3;'),
    ('bf16_mul_sm80', False, 'sm_80', '7.0', 'mul.bf16 %h1, %h2, %h3;'),
    ('bf16_setp_sm80', False, 'sm_80', '7.0', 'setp.lt.bf16 %p1, %h2, %h3;'),
    ('bf16_setp_sm90', True, 'sm_90', '7.8', 'setp.lt.bf16 %p1, %h2, %h3;'),
    ('bf16_ex2_sm80', False, 'sm_80', '7.8', 'ex2.approx.ftz.bf16 %h1, %h2;'),
    ('bf16_ex2_sm90', True, 'sm_90', '7.8', 'ex2.approx.ftz.bf16 %h1, %h2;'),
    ('f16_ex2_sm70', False, 'sm_70', '7.0', 'ex2.approx.f16 %h1, %h2;'),
    ('tanh_sm70', False, 'sm_70', '7.0', 'tanh.approx.f32 %f1, %f2;'),
    ('tanh_ptx65', False, 'sm_75', '6.5', 'tanh.approx.f32 %f1, %f2;'),
    ('tanh_sm75', True, 'sm_75', '7.0', 'tanh.approx.f32 %f1, %f2;'),
    ('tf32_cvt_sm75', False, 'sm_75', '7.0', 'cvt.rna.tf32.f32 %r1, %f1;'),
    ('relu_sm75', False, 'sm_75', '7.0', 'fma.rn.relu.f16 %h1, %h2, %h3, %h4;'),
    ('relu_sm80', True, 'sm_80', '7.0', 'fma.rn.relu.f16 %h1, %h2, %h3, %h4;'),
    ('nan_sm75', False, 'sm_75', '7.0', 'min.NaN.f32 %f1, %f2, %f3;'),
    ('xorsign_sm80', False, 'sm_80', '7.2', 'min.xorsign.abs.f16 %h1, %h2, %h3;'),
    ('xorsign_sm86', True, 'sm_86', '7.2', 'min.xorsign.abs.f16 %h1, %h2, %h3;'),
    ('cache_hint_sm75', False, 'sm_75', '7.4', 'ld.global.L2::cache_hint.u32 %r1, [%rd1], %rd2;'),
    ('cache_hint_ptx73', False, 'sm_80', '7.3', 'ld.global.L2::cache_hint.u32 %r1, [%rd1], %rd2;'),
    ('cache_hint_sm80', True, 'sm_80', '7.4', 'ld.global.L2::cache_hint.u32 %r1, [%rd1], %rd2;'),
    ('l2_256b_sm75', False, 'sm_75', '7.4', 'ld.global.L2::256B.u32 %r1, [%rd1];'),
    ('l2_128b_ptx65', False, 'sm_75', '6.5', 'ld.global.L2::128B.u32 %r1, [%rd1];'),
    ('l2_128b_sm75', True, 'sm_75', '7.4', 'ld.global.L2::128B.u32 %r1, [%rd1];'),
    ('evict_last_ptx73', False, 'sm_75', '7.3', 'ld.global.L1::evict_last.u32 %r1, [%rd1];'),
    ('evict_last_ptx74', True, 'sm_75', '7.4', 'ld.global.L1::evict_last.u32 %r1, [%rd1];'),
    ('cluster_scope_sm80', False, 'sm_80', '7.8', 'ld.relaxed.cluster.global.u32 %r1, [%rd1];'),
    ('cluster_scope_sm90', True, 'sm_90', '7.8', 'ld.relaxed.cluster.global.u32 %r1, [%rd1];'),
    ('shared_cluster_sm80', False, 'sm_80', '7.8', 'ld.shared::cluster.u32 %r1, [%rd1];'),
    ('shared_cta_ptx77', False, 'sm_75', '7.7', 'ld.shared::cta.u32 %r1, [%rd1];'),
    ('shared_cta_ptx78', True, 'sm_75', '7.8', 'ld.shared::cta.u32 %r1, [%rd1];'),
    ('mmio_ptx81', False, 'sm_90', '8.1', 'ld.mmio.relaxed.sys.global.u32 %r1, [%rd1];'),
    ('mmio_ptx82', True, 'sm_80', '8.2', 'ld.mmio.relaxed.sys.global.u32 %r1, [%rd1];'),
    ('ld_256bit_sm90', False, 'sm_90', '8.8', 'ld.global.v8.f32 ' + F8 + ', [%rd2];'),
    ('ld_256bit_sm100', True, 'sm_100', '8.8', 'ld.global.v8.f32 ' + F8 + ', [%rd2];'),
    # Conversions.
    ('cvt_e4m3x2_sm86', False, 'sm_86', '7.8', 'cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;'),
    ('cvt_e4m3x2_sm89_ptx78', False, 'sm_89', '7.8', 'cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;'),
    ('cvt_e4m3x2_sm89_ptx81', True, 'sm_89', '8.1', 'cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;'),
    ('cvt_e4m3x2_sm90', True, 'sm_90', '7.8', 'cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;'),
    ('cvt_e4m3x2_wide_dest', False, 'sm_90', '7.8', 'cvt.rn.satfinite.e4m3x2.f32 %r1, %f1, %f2;'),
    ('cvt_f16x2_narrow_dest', False, 'sm_90', '7.8', 'cvt.rn.f16x2.f32 %h1, %f1, %f2;'),
    ('cvt_e5m2x2_unpack_sm86', False, 'sm_86', '7.8', 'cvt.rn.f16x2.e5m2x2 %r1, %h1;'),
    ('cvt_e2m1x2_sm100a', True, 'sm_100a', '8.6', 'cvt.rn.satfinite.e2m1x2.f32 %c1, %f1, %f2;'),
    ('cvt_e2m1x2_sm100', False, 'sm_100', '8.6', 'cvt.rn.satfinite.e2m1x2.f32 %c1, %f1, %f2;'),
    ('cvt_e2m1x2_b32_dest', False, 'sm_100a', '8.6', 'cvt.rn.satfinite.e2m1x2.f32 %r1, %f1, %f2;'),
    ('cvt_e2m3x2_sm100f', True, 'sm_100f', '8.8', 'cvt.rn.satfinite.e2m3x2.f32 %h1, %f1, %f2;'),
    ('cvt_e2m3x2_sm90', False, 'sm_90', '8.6', 'cvt.rn.satfinite.e2m3x2.f32 %h1, %f1, %f2;'),
    ('cvt_ue8m0x2_sm100a', True, 'sm_100a', '8.6', 'cvt.rz.satfinite.ue8m0x2.f32 %h1, %f1, %f2;'),
    ('cvt_bf16_f32_sm75', False, 'sm_75', '7.0', 'cvt.rn.bf16.f32 %h1, %f1;'),
    ('cvt_f16x2_f32_sm75', False, 'sm_75', '7.0', 'cvt.rn.f16x2.f32 %r1, %f1, %f2;'),
    ('cvt_f16x2_f32_sm80', True, 'sm_80', '7.0', 'cvt.rn.f16x2.f32 %r1, %f1, %f2;'),
    ('cvt_bf16_s32_sm80', False, 'sm_80', '7.0', 'cvt.rn.bf16.s32 %h1, %r1;'),
    ('cvt_bf16_s32_sm90', True, 'sm_90', '7.8', 'cvt.rn.bf16.s32 %h1, %r1;'),
    ('cvt_f32_bf16_ptx70', False, 'sm_80', '7.0', 'cvt.f32.bf16 %f1, %h1;'),
    ('cvt_f32_bf16_ptx71', True, 'sm_80', '7.1', 'cvt.f32.bf16 %f1, %h1;'),
    ('cvt_f16_bf16_sm80', False, 'sm_80', '7.8', 'cvt.rn.f16.bf16 %h1, %h2;'),
    ('cvt_f64_bf16_sm90', True, 'sm_90', '7.8', 'cvt.f64.bf16 %fd1, %h2;'),
    # mma.
    ('mma_f16_ok', True, 'sm_80', '7.0', f'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {F4}, {R4}, {R2}, {C4};'),
    ('mma_d_size', False, 'sm_80', '7.0', f'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {{%f1,%f2,%f3}}, {R4}, {R2}, {C4};'),
    ('mma_a_size', False, 'sm_80', '7.0', f'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {F4}, {{%r1,%r2,%r3}}, {R2}, {C4};'),
    ('mma_c_size', False, 'sm_80', '7.0', f'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {F4}, {R4}, {R2}, {{%f5,%f6,%f7}};'),
    ('mma_d_b32_regs', True, 'sm_80', '7.0', f'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {R4}, {R4}, {R2}, {C4};'),
    ('mma_a_f32_regs', False, 'sm_80', '7.0', f'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {F4}, {F4}, {R2}, {C4};'),
    ('mma_k16_sm75', False, 'sm_75', '7.0', f'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {F4}, {R4}, {R2}, {C4};'),
    ('mma_col_col', False, 'sm_80', '7.0', f'mma.sync.aligned.m16n8k16.col.col.f32.f16.f16.f32 {F4}, {R4}, {R2}, {C4};'),
    ('mma_mixed_ab', False, 'sm_80', '7.0', f'mma.sync.aligned.m16n8k16.row.col.f32.f16.f32.f32 {F4}, {R4}, {R2}, {C4};'),
    ('mma_k8_sm75', True, 'sm_75', '6.5', 'mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2}, {%r5}, {%f5,%f6,%f7,%f8};'),
    ('mma_bf16', True, 'sm_80', '7.0', 'mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2}, {%r5}, {%f5,%f6,%f7,%f8};'),
    ('mma_tf32', True, 'sm_80', '7.0', f'mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {F4}, {R4}, {R2}, {C4};'),
    ('mma_f64', True, 'sm_80', '7.0', 'mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%fd1,%fd2}, {%fd3}, {%fd4}, {%fd5,%fd6};'),
    ('mma_s8', True, 'sm_80', '7.0', 'mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {%r1,%r2,%r3,%r4}, {%r5,%r6,%r7,%r8}, {%r9,%r10}, {%r11,%r12,%r13,%r14};'),
    ('mma_e4m3_sm89', True, 'sm_89', '8.4', 'mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%f1,%f2,%f3,%f4}, {%r5,%r6,%r7,%r8}, {%r9,%r10}, {%f11,%f12,%f13,%f14};'),
    ('mma_e4m3_sm86', False, 'sm_86', '8.4', 'mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%f1,%f2,%f3,%f4}, {%r5,%r6,%r7,%r8}, {%r9,%r10}, {%f11,%f12,%f13,%f14};'),
    ('mma_e4m3_ptx83', False, 'sm_89', '8.3', 'mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%f1,%f2,%f3,%f4}, {%r5,%r6,%r7,%r8}, {%r9,%r10}, {%f11,%f12,%f13,%f14};'),
    ('mma_f16_acc', True, 'sm_80', '7.0', 'mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%r1,%r2}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%r7,%r8};'),
    ('mma_f16_acc_size', False, 'sm_80', '7.0', 'mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%r1,%r2,%r3,%r4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%r7,%r8};'),
    ('mma_scalar_d', False, 'sm_80', '7.0', 'mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 %r1, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%r7,%r8};'),
    ('mma_three_operands', False, 'sm_80', '7.0', 'mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%r1,%r2}, {%r1,%r2,%r3,%r4}, {%r5,%r6};'),
    ('mma_no_aligned', False, 'sm_80', '7.0', 'mma.sync.m16n8k16.row.col.f16.f16.f16.f16 {%r1,%r2}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%r7,%r8};'),
    ('mma_no_sync', False, 'sm_80', '7.0', 'mma.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%r1,%r2}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%r7,%r8};'),
    ('mma_no_layout', False, 'sm_80', '7.0', 'mma.sync.aligned.m16n8k16.f16.f16.f16.f16 {%r1,%r2}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%r7,%r8};'),
    ('mma_two_types', False, 'sm_80', '7.0', 'mma.sync.aligned.m16n8k16.row.col.f16.f16 {%r1,%r2}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%r7,%r8};'),
    ('mma_b1_no_popc', False, 'sm_80', '7.0', 'mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32 {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%r7}, {%r11,%r12,%r13,%r14};'),
    ('mma_b1_xor_popc', True, 'sm_80', '7.0', 'mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.xor.popc {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%r7}, {%r11,%r12,%r13,%r14};'),
    # ldmatrix / stmatrix.
    ('ldmatrix_x4', True, 'sm_75', '6.5', f'ldmatrix.sync.aligned.m8n8.x4.shared.b16 {R4}, [%rd1];'),
    ('ldmatrix_x4_two_regs', False, 'sm_75', '6.5', 'ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1,%r2}, [%rd1];'),
    ('ldmatrix_x1_scalar', False, 'sm_75', '6.5', 'ldmatrix.sync.aligned.m8n8.x1.shared.b16 %r1, [%rd1];'),
    ('ldmatrix_x1_vector', True, 'sm_75', '6.5', 'ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r1}, [%rd1];'),
    ('ldmatrix_global', False, 'sm_75', '6.5', 'ldmatrix.sync.aligned.m8n8.x1.global.b16 {%r1}, [%rd1];'),
    ('ldmatrix_b32', False, 'sm_75', '6.5', 'ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r1}, [%rd1];'.replace('.b16', '.b32')),
    ('ldmatrix_no_shape', False, 'sm_75', '6.5', 'ldmatrix.sync.aligned.x1.shared.b16 {%r1}, [%rd1];'),
    ('ldmatrix_no_count', False, 'sm_75', '6.5', 'ldmatrix.sync.aligned.m8n8.shared.b16 {%r1}, [%rd1];'),
    ('ldmatrix_f32_reg', True, 'sm_75', '6.5', 'ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%f1}, [%rd1];'),
    ('ldmatrix_no_brackets', False, 'sm_75', '6.5', 'ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r1}, %rd1;'),
    ('ldmatrix_ptx64', False, 'sm_75', '6.4', 'ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r1}, [%rd1];'),
    ('ldmatrix_no_sync', False, 'sm_75', '6.5', 'ldmatrix.aligned.m8n8.x1.shared.b16 {%r1}, [%rd1];'),
    ('stmatrix_x4', True, 'sm_90', '7.8', f'stmatrix.sync.aligned.m8n8.x4.shared.b16 [%rd1], {R4};'),
    ('stmatrix_x4_two_regs', False, 'sm_90', '7.8', 'stmatrix.sync.aligned.m8n8.x4.shared.b16 [%rd1], {%r1,%r2};'),
    ('stmatrix_trans_cta', True, 'sm_90', '7.8', 'stmatrix.sync.aligned.m8n8.x2.trans.shared::cta.b16 [%rd1], {%r1,%r2};'),
    ('stmatrix_global', False, 'sm_90', '7.8', 'stmatrix.sync.aligned.m8n8.x1.global.b16 [%rd1], {%r1};'),
    # mbarrier.
    ('mbarrier_init', True, 'sm_80', '7.0', 'mbarrier.init.shared.b64 [%rd1], %r1;'),
    ('mbarrier_init_b32', False, 'sm_80', '7.0', 'mbarrier.init.shared.b32 [%rd1], %r1;'),
    ('mbarrier_init_global', False, 'sm_80', '7.0', 'mbarrier.init.global.b64 [%rd1], %r1;'),
    ('mbarrier_init_generic', True, 'sm_80', '7.0', 'mbarrier.init.b64 [%rd1], %r1;'),
    ('mbarrier_init_64bit_count', False, 'sm_80', '7.0', 'mbarrier.init.shared.b64 [%rd1], %rd2;'),
    ('mbarrier_init_no_count', False, 'sm_80', '7.0', 'mbarrier.init.shared.b64 [%rd1];'),
    ('mbarrier_arrive', True, 'sm_80', '7.0', 'mbarrier.arrive.shared.b64 %rd2, [%rd1];'),
    ('mbarrier_arrive_32bit_state', False, 'sm_80', '7.0', 'mbarrier.arrive.shared.b64 %r2, [%rd1];'),
    ('mbarrier_arrive_no_state', False, 'sm_80', '7.0', 'mbarrier.arrive.shared.b64 [%rd1];'),
    ('mbarrier_arrive_count_sm80', False, 'sm_80', '7.0', 'mbarrier.arrive.shared.b64 %rd2, [%rd1], %r1;'),
    ('mbarrier_arrive_count_sm90', True, 'sm_90', '8.0', 'mbarrier.arrive.shared.b64 %rd2, [%rd1], %r1;'),
    ('mbarrier_arrive_nocomplete', True, 'sm_90', '8.0', 'mbarrier.arrive.noComplete.shared.b64 %rd2, [%rd1], %r1;'),
    ('mbarrier_arrive_release_ptx70', False, 'sm_80', '7.0', 'mbarrier.arrive.release.cta.shared.b64 %rd2, [%rd1];'),
    ('mbarrier_arrive_cluster_sink', True, 'sm_90', '8.0', 'mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%rd1];'),
    ('mbarrier_arrive_cluster_state', False, 'sm_90', '8.0', 'mbarrier.arrive.release.cluster.shared::cluster.b64 %rd2, [%rd1];'),
    ('mbarrier_expect_tx_sm80', False, 'sm_80', '7.0', 'mbarrier.arrive.expect_tx.shared.b64 %rd2, [%rd1], %r1;'),
    ('mbarrier_expect_tx_sm90', True, 'sm_90', '8.0', 'mbarrier.arrive.expect_tx.shared.b64 %rd2, [%rd1], %r1;'),
    ('mbarrier_test_wait', True, 'sm_80', '7.0', 'mbarrier.test_wait.shared.b64 %p1, [%rd1], %rd2;'),
    ('mbarrier_test_wait_int_dest', False, 'sm_80', '7.0', 'mbarrier.test_wait.shared.b64 %r1, [%rd1], %rd2;'),
    ('mbarrier_test_wait_parity_ptx70', False, 'sm_80', '7.0', 'mbarrier.test_wait.parity.shared.b64 %p1, [%rd1], %r2;'),
    ('mbarrier_try_wait_parity', True, 'sm_90', '8.0', 'mbarrier.try_wait.parity.shared::cta.b64 %p1, [%rd1], %r2;'),
    ('mbarrier_try_wait_timeout', True, 'sm_90', '8.0', 'mbarrier.try_wait.shared::cta.b64 %p1, [%rd1], %rd2, %r2;'),
    ('mbarrier_pending_count', True, 'sm_80', '7.0', 'mbarrier.pending_count.b64 %r1, %rd1;'),
    # cp.async and the bulk copies.
    ('cp_async_ca_4', True, 'sm_80', '7.0', 'cp.async.ca.shared.global [%rd1], [%rd2], 4;'),
    ('cp_async_ca_5', False, 'sm_80', '7.0', 'cp.async.ca.shared.global [%rd1], [%rd2], 5;'),
    ('cp_async_cg_8', False, 'sm_80', '7.0', 'cp.async.cg.shared.global [%rd1], [%rd2], 8;'),
    ('cp_async_size_reg', False, 'sm_80', '7.0', 'cp.async.ca.shared.global [%rd1], [%rd2], %r1;'),
    ('cp_async_wrong_direction', False, 'sm_80', '7.0', 'cp.async.ca.global.shared [%rd1], [%rd2], 4;'),
    ('cp_async_src_size', True, 'sm_80', '7.0', 'cp.async.ca.shared.global [%rd1], [%rd2], 16, %r1;'),
    ('cp_async_wait_group_reg', False, 'sm_80', '7.0', 'cp.async.wait_group %r1;'),
    ('bulk_g2s', True, 'sm_90', '8.0', 'cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%rd1], [%rd2], %r1, [%rd3];'),
    ('bulk_g2s_no_mbarrier_operand', False, 'sm_90', '8.0', 'cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%rd1], [%rd2], %r1;'),
    ('bulk_g2s_no_completion', False, 'sm_90', '8.0', 'cp.async.bulk.shared::cluster.global [%rd1], [%rd2], %r1, [%rd3];'),
    ('bulk_g2s_64bit_size', False, 'sm_90', '8.0', 'cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%rd1], [%rd2], %rd1, [%rd3];'),
    ('bulk_s2g', True, 'sm_90', '8.0', 'cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%rd2], %r1;'),
    ('bulk_s2g_extra_operand', False, 'sm_90', '8.0', 'cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%rd2], %r1, [%rd3];'),
    ('bulk_s2g_no_group', False, 'sm_90', '8.0', 'cp.async.bulk.global.shared::cta [%rd1], [%rd2], %r1;'),
    ('bulk_g2g', False, 'sm_90', '8.0', 'cp.async.bulk.global.global.bulk_group [%rd1], [%rd2], %r1;'),
    ('bulk_s2s', True, 'sm_90', '8.0', 'cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%rd1], [%rd2], %r1, [%rd3];'),
    ('bulk_cache_hint', True, 'sm_90', '8.0', 'cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%rd1], [%rd2], %r1, [%rd3], %rd4;'),
    ('bulk_cache_hint_missing', False, 'sm_90', '8.0', 'cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%rd1], [%rd2], %r1, [%rd3];'),
    ('bulk_prefetch_shared', False, 'sm_90', '8.0', 'cp.async.bulk.prefetch.L2.shared [%rd1], %r1;'),
    ('bulk_prefetch_global', True, 'sm_90', '8.0', 'cp.async.bulk.prefetch.L2.global [%rd1], %r1;'),
    ('bulk_wait_group_reg', False, 'sm_90', '8.0', 'cp.async.bulk.wait_group %r1;'),
    ('bulk_wait_group_read', True, 'sm_90', '8.0', 'cp.async.bulk.wait_group.read 1;'),
    ('bulk_reduce_no_op', False, 'sm_90', '8.0', 'cp.reduce.async.bulk.global.shared::cta.bulk_group.u32 [%rd1], [%rd2], %r1;'),
    ('bulk_reduce_add', True, 'sm_90', '8.0', 'cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd1], [%rd2], %r1;'),
    ('bulk_tensor_2d', True, 'sm_90', '8.0', 'cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%rd1], [%rd2, {%r1, %r2}], [%rd3];'),
    ('bulk_tensor_2d_three_coords', False, 'sm_90', '8.0', 'cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%rd1], [%rd2, {%r1, %r2, %r3}], [%rd3];'),
    ('bulk_tensor_1d_store_two_coords', False, 'sm_90', '8.0', 'cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [%rd1, {%r1, %r2}], [%rd2];'),
    # wmma.
    ('wmma_load_a', True, 'sm_75', '6.3', f'wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {R8}, [%rd1];'),
    ('wmma_load_a_size', False, 'sm_75', '6.3', f'wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {R4}, [%rd1];'),
    ('wmma_no_aligned', False, 'sm_75', '6.3', f'wmma.load.a.sync.row.m16n16k16.global.f16 {R8}, [%rd1];'),
    ('wmma_aligned_ptx60', False, 'sm_70', '6.0', f'wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {R8}, [%rd1];'),
    ('wmma_no_sync', False, 'sm_75', '6.3', f'wmma.load.a.aligned.row.m16n16k16.global.f16 {R8}, [%rd1];'),
    ('wmma_load_c_f32_size', False, 'sm_75', '6.3', f'wmma.load.c.sync.aligned.row.m16n16k16.global.f32 {F4}, [%rd1];'),
    ('wmma_load_c_f16', True, 'sm_75', '6.3', f'wmma.load.c.sync.aligned.row.m16n16k16.global.f16 {R4}, [%rd1];'),
    ('wmma_mma_c_size', False, 'sm_75', '6.3', f'wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {F8}, {R8}, {R8B}, {{%f9,%f10,%f11,%f12}};'),
    ('wmma_mma_f16_f32', True, 'sm_75', '6.3', f'wmma.mma.sync.aligned.row.col.m16n16k16.f16.f32 {R4}, {R8}, {R8B}, {{%f9,%f10,%f11,%f12,%f13,%f14,%f15,%f16}};'),
    ('wmma_store_size', False, 'sm_75', '6.3', 'wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd1], {%f1,%f2,%f3,%f4,%f5,%f6,%f7};'),
    ('wmma_store_const', False, 'sm_75', '6.3', f'wmma.store.d.sync.aligned.row.m16n16k16.const.f32 [%rd1], {F8};'),
    ('wmma_stride', True, 'sm_75', '6.3', f'wmma.load.a.sync.aligned.row.m16n16k16.f16 {R8}, [%rd1], %r9;'),
    ('wmma_stride_64bit', False, 'sm_75', '6.3', f'wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {R8}, [%rd1], %rd2;'),
    ('wmma_no_layout', False, 'sm_75', '6.3', f'wmma.load.a.sync.aligned.m16n16k16.global.f16 {R8}, [%rd1];'),
    ('wmma_s8_m16', True, 'sm_75', '6.3', 'wmma.load.a.sync.aligned.row.m16n16k16.s8 {%r1,%r2}, [%rd1];'),
    ('wmma_s8_m16_size', False, 'sm_75', '6.3', f'wmma.load.a.sync.aligned.row.m16n16k16.s8 {R4}, [%rd1];'),
    ('wmma_tf32', True, 'sm_80', '7.0', f'wmma.load.a.sync.aligned.row.m16n16k8.global.tf32 {R4}, [%rd1];'),
    ('wmma_f64', True, 'sm_80', '7.0', 'wmma.load.a.sync.aligned.row.m8n8k4.global.f64 {%fd1}, [%rd1];'),
    # wgmma.
    ('wgmma_f16', True, 'sm_90a', '8.0', f'wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {F4}, %rd1, %rd2, 1, 1, 1, 0, 0;'),
    ('wgmma_d_size', False, 'sm_90a', '8.0', 'wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1,%f2,%f3}, %rd1, %rd2, 1, 1, 1, 0, 0;'),
    ('wgmma_missing_transpose', False, 'sm_90a', '8.0', f'wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {F4}, %rd1, %rd2, 1, 1, 1, 0;'),
    ('wgmma_n16', True, 'sm_90a', '8.0', f'wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {F8}, %rd1, %rd2, 1, 1, 1, 0, 0;'),
    ('wgmma_f16_acc', True, 'sm_90a', '8.0', 'wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16 {%r1,%r2}, %rd1, %rd2, 1, 1, 1, 0, 0;'),
    ('wgmma_f16_acc_size', False, 'sm_90a', '8.0', f'wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16 {R4}, %rd1, %rd2, 1, 1, 1, 0, 0;'),
    ('wgmma_tf32', True, 'sm_90a', '8.0', f'wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {F4}, %rd1, %rd2, 1, 1, 1;'),
    ('wgmma_tf32_transpose', False, 'sm_90a', '8.0', f'wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {F4}, %rd1, %rd2, 1, 1, 1, 0, 0;'),
    ('wgmma_s8', True, 'sm_90a', '8.0', f'wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8 {R4}, %rd1, %rd2, 1;'),
    ('wgmma_scale_d_pred', True, 'sm_90a', '8.0', f'wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {F4}, %rd1, %rd2, %p1, 1, 1, 0, 0;'),
    ('wgmma_transpose_2', False, 'sm_90a', '8.0', f'wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {F4}, %rd1, %rd2, 1, 1, 1, 0, 2;'),
    ('wgmma_scale_2', False, 'sm_90a', '8.0', f'wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {F4}, %rd1, %rd2, 1, 1, 2, 0, 0;'),
    ('wgmma_no_sync', False, 'sm_90a', '8.0', f'wgmma.mma_async.aligned.m64n8k16.f32.f16.f16 {F4}, %rd1, %rd2, 1, 1, 1, 0, 0;'),
    ('wgmma_32bit_descriptor', False, 'sm_90a', '8.0', f'wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {F4}, %r1, %rd2, 1, 1, 1, 0, 0;'),
    ('wgmma_a_in_registers', True, 'sm_90a', '8.0', f'wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {F4}, {R4}, %rd2, 1, 1, 1, 0;'),
    ('wgmma_wait_group_reg', False, 'sm_90a', '8.0', 'wgmma.wait_group.sync.aligned %r1;'),
    ('wgmma_fence_no_sync', False, 'sm_90a', '8.0', 'wgmma.fence.aligned;'),
    # Rounding, .approx, .ftz, .sat, multiply modes and bit-instruction types.
    ('fma_f32_no_rounding', False, 'sm_80', '7.0', 'fma.f32 %f1, %f2, %f3, %f4;'),
    ('fma_f64_no_rounding', False, 'sm_80', '7.0', 'fma.f64 %fd1, %fd2, %fd3, %fd4;'),
    ('mad_f32_no_rounding', False, 'sm_80', '7.0', 'mad.f32 %f1, %f2, %f3, %f4;'),
    ('mad_rn_f32', True, 'sm_80', '7.0', 'mad.rn.f32 %f1, %f2, %f3, %f4;'),
    ('div_f32_no_mode', False, 'sm_80', '7.0', 'div.f32 %f1, %f2, %f3;'),
    ('div_full_f32', True, 'sm_80', '7.0', 'div.full.f32 %f1, %f2, %f3;'),
    ('div_f64_no_rounding', False, 'sm_80', '7.0', 'div.f64 %fd1, %fd2, %fd3;'),
    ('div_approx_f64', False, 'sm_80', '7.0', 'div.approx.f64 %fd1, %fd2, %fd3;'),
    ('sqrt_f32_no_mode', False, 'sm_80', '7.0', 'sqrt.f32 %f1, %f2;'),
    ('sqrt_approx_f64', False, 'sm_80', '7.0', 'sqrt.approx.f64 %fd1, %fd2;'),
    ('rcp_f32_no_mode', False, 'sm_80', '7.0', 'rcp.f32 %f1, %f2;'),
    ('rcp_approx_ftz_f64', True, 'sm_80', '7.0', 'rcp.approx.ftz.f64 %fd1, %fd2;'),
    ('rsqrt_no_approx', False, 'sm_80', '7.0', 'rsqrt.f32 %f1, %f2;'),
    ('sin_no_approx', False, 'sm_80', '7.0', 'sin.f32 %f1, %f2;'),
    ('sin_f64', False, 'sm_80', '7.0', 'sin.approx.f64 %fd1, %fd2;'),
    ('ex2_f64', False, 'sm_80', '7.0', 'ex2.approx.f64 %fd1, %fd2;'),
    ('lg2_no_approx', False, 'sm_80', '7.0', 'lg2.f32 %f1, %f2;'),
    ('add_ftz_f64', False, 'sm_80', '7.0', 'add.ftz.f64 %fd1, %fd2, %fd3;'),
    ('add_sat_f64', False, 'sm_80', '7.0', 'add.sat.f64 %fd1, %fd2, %fd3;'),
    ('add_sat_u32', False, 'sm_80', '7.0', 'add.sat.u32 %r1, %r2, %r3;'),
    ('add_sat_s32', True, 'sm_80', '7.0', 'add.sat.s32 %r1, %r2, %r3;'),
    ('min_ftz_f64', False, 'sm_80', '7.0', 'min.ftz.f64 %fd1, %fd2, %fd3;'),
    ('mul_u32_no_mode', False, 'sm_80', '7.0', 'mul.u32 %r1, %r2, %r3;'),
    ('mad_u32_no_mode', False, 'sm_80', '7.0', 'mad.u32 %r1, %r2, %r3, %r4;'),
    ('cvt_rn_f32_f32', False, 'sm_80', '7.0', 'cvt.rn.f32.f32 %f1, %f2;'),
    ('cvt_rni_f32_f32', True, 'sm_80', '7.0', 'cvt.rni.f32.f32 %f1, %f2;'),
    ('cvt_rn_u32_u16', False, 'sm_80', '7.0', 'cvt.rn.u32.u16 %r1, %h2;'),
    ('testp_f16', False, 'sm_80', '7.0', 'testp.finite.f16 %p1, %h1;'),
    ('copysign_f16', False, 'sm_80', '7.0', 'copysign.f16 %h1, %h2, %h3;'),
    ('abs_u32', False, 'sm_80', '7.0', 'abs.u32 %r1, %r2;'),
    ('neg_u32', False, 'sm_80', '7.0', 'neg.u32 %r1, %r2;'),
    ('popc_b16', False, 'sm_80', '7.0', 'popc.b16 %r1, %h1;'),
    ('brev_b16', False, 'sm_80', '7.0', 'brev.b16 %h1, %h2;'),
    ('bfe_u16', False, 'sm_80', '7.0', 'bfe.u16 %h1, %h2, %r1, %r2;'),
    ('prmt_b64', False, 'sm_80', '7.0', 'prmt.b64 %rd1, %rd2, %rd3, %rd4;'),
    ('lop3_b64', False, 'sm_80', '7.0', 'lop3.b64 %rd1, %rd2, %rd3, %rd4, 0x96;'),
    ('shf_no_mode', False, 'sm_80', '7.0', 'shf.l.b32 %r1, %r2, %r3, %r4;'),
    ('shf_b64', False, 'sm_80', '7.0', 'shf.l.wrap.b64 %rd1, %rd2, %rd3, %r4;'),
    ('shf_wrap', True, 'sm_80', '7.0', 'shf.l.wrap.b32 %r1, %r2, %r3, %r4;'),
    ('slct_u32_selector', False, 'sm_80', '7.0', 'slct.f32.u32 %f1, %f2, %f3, %r4;'),
    ('slct_f32_selector', True, 'sm_80', '7.0', 'slct.f32.f32 %f1, %f2, %f3, %f4;'),
    # ld/st memory orders, scopes, cache operators and spaces.
    ('ld_relaxed_no_scope', False, 'sm_80', '7.0', 'ld.relaxed.global.u32 %r1, [%rd1];'),
    ('ld_acquire_gpu', True, 'sm_80', '7.0', 'ld.acquire.gpu.global.u32 %r1, [%rd1];'),
    ('st_acquire', False, 'sm_80', '7.0', 'st.acquire.gpu.global.u32 [%rd1], %r1;'),
    ('ld_release', False, 'sm_80', '7.0', 'ld.release.gpu.global.u32 %r1, [%rd1];'),
    ('st_release_gpu', True, 'sm_80', '7.0', 'st.release.gpu.global.u32 [%rd1], %r1;'),
    ('ld_volatile_scope', False, 'sm_80', '7.0', 'ld.volatile.gpu.global.u32 %r1, [%rd1];'),
    ('st_nc', False, 'sm_80', '7.0', 'st.global.nc.u32 [%rd1], %r1;'),
    ('ld_shared_nc', False, 'sm_80', '7.0', 'ld.shared.nc.u32 %r1, [%rd1];'),
    ('st_cv', False, 'sm_80', '7.0', 'st.global.cv.u32 [%rd1], %r1;'),
    ('ld_wt', False, 'sm_80', '7.0', 'ld.global.wt.u32 %r1, [%rd1];'),
    ('st_wt', True, 'sm_80', '7.0', 'st.global.wt.u32 [%rd1], %r1;'),
    ('st_const', False, 'sm_80', '7.0', 'st.const.u32 [%rd1], %r1;'),
    ('st_kernel_param', False, 'sm_80', '7.0', 'st.param.u32 [p], %r1;'),
    ('ldu_shared', False, 'sm_80', '7.0', 'ldu.shared.u32 %r1, [%rd1];'),
    ('prefetch_shared', False, 'sm_80', '7.0', 'prefetch.shared.L2 [%rd1];'),
    ('isspacep_int_dest', False, 'sm_80', '7.0', 'isspacep.global %r1, %rd1;'),
    # atom, red, fence, redux, legacy warp instructions.
    ('atom_bf16_sm80', False, 'sm_80', '7.0', 'atom.global.add.noftz.bf16 %h1, [%rd1], %h2;'),
    ('atom_bf16_sm90', True, 'sm_90', '7.8', 'atom.global.add.noftz.bf16 %h1, [%rd1], %h2;'),
    ('atom_f16_sm75', True, 'sm_75', '7.0', 'atom.global.add.noftz.f16 %h1, [%rd1], %h2;'),
    ('atom_vector_sm80', False, 'sm_80', '8.1', 'atom.global.v2.f32.add {%f1,%f2}, [%rd1], {%f3,%f4};'),
    ('atom_vector_ptx80', False, 'sm_90', '8.0', 'atom.global.v2.f32.add {%f1,%f2}, [%rd1], {%f3,%f4};'),
    ('atom_vector_sm90', True, 'sm_90', '8.1', 'atom.global.v2.f32.add {%f1,%f2}, [%rd1], {%f3,%f4};'),
    ('atom_b128_b64_regs', False, 'sm_90', '8.3', 'atom.global.exch.b128 %rd1, [%rd2], %rd3;'),
    ('atom_add_u16', False, 'sm_80', '7.0', 'atom.global.add.u16 %h1, [%rd1], %h2;'),
    ('atom_max_f32', False, 'sm_90', '8.1', 'atom.global.max.f32 %f1, [%rd1], %f2;'),
    ('atom_inc_u64', False, 'sm_80', '7.0', 'atom.global.inc.u64 %rd1, [%rd1], %rd2;'),
    ('atom_add_s64', False, 'sm_80', '7.0', 'atom.global.add.s64 %rd1, [%rd1], %rd2;'),
    ('atom_min_s64', True, 'sm_80', '7.0', 'atom.global.min.s64 %rd1, [%rd1], %rd2;'),
    ('atom_and_u32', False, 'sm_80', '7.0', 'atom.global.and.u32 %r1, [%rd1], %r2;'),
    ('atom_and_b32', True, 'sm_80', '7.0', 'atom.global.and.b32 %r1, [%rd1], %r2;'),
    ('atom_add_b32', False, 'sm_80', '7.0', 'atom.global.add.b32 %r1, [%rd1], %r2;'),
    ('atom_cas_missing_operand', False, 'sm_80', '7.0', 'atom.global.cas.b32 %r1, [%rd1], %r2;'),
    ('atom_cas_b16', True, 'sm_80', '7.0', 'atom.global.cas.b16 %h1, [%rd1], %h2, %h3;'),
    ('atom_wide_dest', False, 'sm_80', '7.0', 'atom.global.add.u32 %rd1, [%rd1], %r2;'),
    ('atom_const', False, 'sm_80', '7.0', 'atom.const.add.u32 %r1, [%rd1], %r2;'),
    ('atom_local', False, 'sm_80', '7.0', 'atom.local.add.u32 %r1, [%rd1], %r2;'),
    ('atom_acquire', True, 'sm_80', '7.0', 'atom.acquire.gpu.global.add.u32 %r1, [%rd1], %r2;'),
    ('red_cas', False, 'sm_80', '7.0', 'red.global.cas.b32 [%rd1], %r2, %r3;'),
    ('red_exch', False, 'sm_80', '7.0', 'red.global.exch.b32 [%rd1], %r2;'),
    ('red_acquire', False, 'sm_80', '7.0', 'red.acquire.gpu.global.add.u32 [%rd1], %r2;'),
    ('red_with_result', False, 'sm_80', '7.0', 'red.global.add.u32 %r1, [%rd1], %r2;'),
    ('fence_proxy_async_sm80', False, 'sm_80', '7.0', 'fence.proxy.async;'),
    ('fence_proxy_async_sm90', True, 'sm_90', '8.0', 'fence.proxy.async.shared::cta;'),
    ('fence_relaxed', False, 'sm_80', '7.0', 'fence.relaxed.gpu;'),
    ('fence_acquire', True, 'sm_80', '7.0', 'fence.acquire.gpu;'),
    ('vote_without_sync', False, 'sm_75', '7.0', 'vote.any.pred %p1, %p2;'),
    ('shfl_without_sync', False, 'sm_75', '7.0', 'shfl.down.b32 %r1, %r2, 1, 31;'),
    ('shfl_without_sync_ptx63', True, 'sm_75', '6.3', 'shfl.down.b32 %r1, %r2, 1, 31;'),
    ('redux_f32_sm80', False, 'sm_80', '7.0', 'redux.sync.min.f32 %f1, %f2, 0xffffffff;'),
    ('redux_f32_sm100a', True, 'sm_100a', '8.6', 'redux.sync.min.f32 %f1, %f2, 0xffffffff;'),
    ('redux_add_u64', False, 'sm_80', '7.0', 'redux.sync.add.u64 %rd1, %rd2, 0xffffffff;'),
    ('redux_and_u32', False, 'sm_80', '7.0', 'redux.sync.and.u32 %r1, %r2, 0xffffffff;'),
    ('redux_and_b32', True, 'sm_80', '7.0', 'redux.sync.and.b32 %r1, %r2, 0xffffffff;'),
    # tcgen05.
    ('tcgen05_alloc', True, 'sm_100a', '8.6', 'tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%rd1], %r1;'),
    ('tcgen05_alloc_no_group', False, 'sm_100a', '8.6', 'tcgen05.alloc.sync.aligned.shared::cta.b32 [%rd1], 32;'),
    ('tcgen05_alloc_no_sync', False, 'sm_100a', '8.6', 'tcgen05.alloc.cta_group::1.aligned.shared::cta.b32 [%rd1], 32;'),
    ('tcgen05_alloc_b64', False, 'sm_100a', '8.6', 'tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b64 [%rd1], 32;'),
    ('tcgen05_alloc_global', False, 'sm_100a', '8.6', 'tcgen05.alloc.cta_group::1.sync.aligned.global.b32 [%rd1], 32;'),
    ('tcgen05_alloc_register', False, 'sm_100a', '8.6', 'tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 %r1, 32;'),
    ('tcgen05_dealloc', True, 'sm_100a', '8.6', 'tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r1, 32;'),
    ('tcgen05_dealloc_no_count', False, 'sm_100a', '8.6', 'tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r1;'),
    ('tcgen05_relinquish_sm100', False, 'sm_100', '8.6', 'tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;'),
    ('tcgen05_ld_x2', True, 'sm_100a', '8.6', 'tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1,%r2}, [%r3];'),
    ('tcgen05_ld_x2_three_regs', False, 'sm_100a', '8.6', 'tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1,%r2,%r4}, [%r3];'),
    ('tcgen05_ld_16x256b', True, 'sm_100a', '8.6', 'tcgen05.ld.sync.aligned.16x256b.x1.b32 {%r1,%r2,%r4,%r5}, [%r3];'),
    ('tcgen05_ld_64bit_address', False, 'sm_100a', '8.6', 'tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1,%r2}, [%rd3];'),
    ('tcgen05_ld_b64', False, 'sm_100a', '8.6', 'tcgen05.ld.sync.aligned.32x32b.x2.b64 {%rd1,%rd2}, [%r3];'),
    ('tcgen05_st_one_reg', False, 'sm_100a', '8.6', 'tcgen05.st.sync.aligned.32x32b.x2.b32 [%r3], {%r1};'),
    ('tcgen05_wait_no_sync', False, 'sm_100a', '8.6', 'tcgen05.wait::ld.aligned;'),
    ('tcgen05_commit_no_group', False, 'sm_100a', '8.6', 'tcgen05.commit.mbarrier::arrive::one.b64 [%rd1];'),
    ('tcgen05_mma', True, 'sm_100a', '8.6', 'tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;'),
    ('tcgen05_mma_four_operands', False, 'sm_100a', '8.6', 'tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2;'),
    ('tcgen05_mma_64bit_idesc', False, 'sm_100a', '8.6', 'tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %rd2, %p1;'),
    ('tcgen05_mma_no_kind', False, 'sm_100a', '8.6', 'tcgen05.mma.cta_group::1 [%r1], %rd1, %rd2, %r2, %p1;'),
    ('tcgen05_mma_a_in_tmem', True, 'sm_100a', '8.6', 'tcgen05.mma.cta_group::1.kind::tf32 [%r1], [%r3], %rd2, %r2, %p1;'),
    ('tcgen05_cp_32bit_descriptor', False, 'sm_100a', '8.6', 'tcgen05.cp.cta_group::1.128x256b [%r1], %r2;'),
    # Textures and surfaces.
    ('tex_2d', True, 'sm_80', '7.0', f'tex.2d.v4.f32.f32 {F4}, [tref, {{%f5,%f6}}];'),
    ('tex_2d_one_coord', False, 'sm_80', '7.0', f'tex.2d.v4.f32.f32 {F4}, [tref, {{%f5}}];'),
    ('tex_3d_four_coords', True, 'sm_80', '7.0', f'tex.3d.v4.f32.f32 {F4}, [tref, {{%f5,%f6,%f7,%f8}}];'),
    ('tex_a1d', True, 'sm_80', '7.0', f'tex.a1d.v4.f32.f32 {F4}, [tref, {{%r5,%f6}}];'),
    ('tex_v2_f32', False, 'sm_80', '7.0', 'tex.2d.v2.f32.f32 {%f1,%f2}, [tref, {%f5,%f6}];'),
    ('tex_scalar_f32', False, 'sm_80', '7.0', 'tex.2d.f32.f32 %f1, [tref, {%f5,%f6}];'),
    ('tex_s32_coords', True, 'sm_80', '7.0', f'tex.2d.v4.f32.s32 {F4}, [tref, {{%r5,%r6}}];'),
    ('tex_f64_coords', False, 'sm_80', '7.0', f'tex.2d.v4.f32.f64 {F4}, [tref, {{%fd5,%fd6}}];'),
    ('tex_level', True, 'sm_80', '7.0', f'tex.level.2d.v4.f32.f32 {F4}, [tref, {{%f5,%f6}}], %f7;'),
    ('tex_level_no_lod', False, 'sm_80', '7.0', f'tex.level.2d.v4.f32.f32 {F4}, [tref, {{%f5,%f6}}];'),
    ('tld4_2d', True, 'sm_80', '7.0', f'tld4.r.2d.v4.f32.f32 {F4}, [tref, {{%f5,%f6}}];'),
    ('tld4_1d', False, 'sm_80', '7.0', f'tld4.r.1d.v4.f32.f32 {F4}, [tref, {{%f5}}];'),
    ('tld4_two_results', False, 'sm_80', '7.0', 'tld4.r.2d.v4.f32.f32 {%f1,%f2}, [tref, {%f5,%f6}];'),
    ('suld_2d', True, 'sm_80', '7.0', f'suld.b.2d.v4.b32.trap {R4}, [sref, {{%r5,%r6}}];'),
    ('suld_2d_one_coord', False, 'sm_80', '7.0', f'suld.b.2d.v4.b32.trap {R4}, [sref, {{%r5}}];'),
    ('suld_1d_scalar_coord', True, 'sm_80', '7.0', 'suld.b.1d.b32.trap %r1, [sref, %r5];'),
    ('suld_float_coords', False, 'sm_80', '7.0', f'suld.b.2d.v4.b32.trap {R4}, [sref, {{%f5,%f6}}];'),
    ('suld_64bit_coords', False, 'sm_80', '7.0', f'suld.b.2d.v4.b32.trap {R4}, [sref, {{%rd5,%rd6}}];'),
    ('suld_256_bits', False, 'sm_80', '7.0', 'suld.b.2d.v4.b64.trap {%rd1,%rd2,%rd3,%rd4}, [sref, {%r5,%r6}];'),
    ('suld_no_clamp_mode', False, 'sm_80', '7.0', f'suld.b.2d.v4.b32 {R4}, [sref, {{%r5,%r6}}];'),
    ('suld_3d_three_coords', False, 'sm_80', '7.0', f'suld.b.3d.v4.b32.trap {R4}, [sref, {{%r5,%r6,%r7}}];'),
    ('sust_2d', True, 'sm_80', '7.0', f'sust.b.2d.v4.b32.trap [sref, {{%r5,%r6}}], {R4};'),
    ('sust_two_values', False, 'sm_80', '7.0', 'sust.b.2d.v4.b32.trap [sref, {%r5,%r6}], {%r1,%r2};'),
    ('sust_clamp', True, 'sm_80', '7.0', 'sust.b.2d.b32.clamp [sref, {%r5,%r6}], %r1;'),
    ('sured_one_coord', False, 'sm_80', '7.0', 'sured.b.add.2d.trap.u32 [sref, {%r5}], %r1;'),
    ('sured_2d', True, 'sm_80', '7.0', 'sured.b.add.2d.trap.u32 [sref, {%r5,%r6}], %r1;'),
    ('txq_b64', False, 'sm_80', '7.0', 'txq.width.b64 %rd1, [tref];'),
    ('txq_b32', True, 'sm_80', '7.0', 'txq.width.b32 %r1, [tref];'),
    ('samplerref_unified', False, 'sm_80', '7.0', 'mov.u32 %r1, 0;', '.global .samplerref samp;\n'),
    ('samplerref_independent', True, 'sm_80, texmode_independent', '7.0', 'mov.u32 %r1, 0;', '.global .samplerref samp;\n'),
]
TEXTURES = '.global .texref tref;\n.global .surfref sref;\n'

def ptxas_accepts(text, target):
    arch = target.split(',')[0]
    if int(''.join(ch for ch in target[3:] if ch.isdigit())) < 75:
        arch = 'sm_75'   # ptxas 13 compiles for sm_75 and newer; it still checks features against .target
    with tempfile.NamedTemporaryFile('w', suffix='.ptx', delete=False) as f:
        f.write(text)
        path = f.name
    try:
        r = subprocess.run(['ptxas', '-arch=' + arch, path, '-o', '/dev/null'], capture_output=True, text=True)
        return r.returncode == 0, r.stderr
    finally:
        os.unlink(path)

def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    verify = '--verify' in sys.argv
    base = args[0] if args else os.path.join(os.path.dirname(__file__), '..', '..', 'tests', 'ptx-front', 'agreement')
    names = set()
    bad = 0
    for name, valid, target, version, body, *pre in CASES:
        assert name not in names, name
        names.add(name)
        header = pre[0] if pre else TEXTURES if body.split('.')[0] in ('tex', 'tld4', 'suld', 'sust', 'sured', 'txq') else ''
        text = module(target, version, body, header)
        path = os.path.join(base, 'valid' if valid else 'invalid', f'chk_{name}.ptx')
        with open(path, 'w') as f:
            f.write(text)
        if verify:
            ok, log = ptxas_accepts(text, target)
            if ok != valid:
                bad += 1
                print(f'{name}: expected {"valid" if valid else "invalid"}, ptxas says otherwise\n{log}')
    print(f'{len(CASES)} cases written' + (f', {bad} disagree with ptxas' if verify else ''))
    return 1 if bad else 0

if __name__ == '__main__':
    sys.exit(main())
