#!/usr/bin/env python3
# Writes hand-written PTX modules that exercise the ISA's instruction forms (one module per instruction group)
# into tests/ptx-front/agreement/valid/isa_*.ptx. Every module is accepted by ptxas (checked by the
# PtxasAgreement test); the front end must parse, check and round-trip them.
# Usage: gen_isa_cases.py [OUTDIR]
import sys
import os
def mod(tgt, body, pre='', ver='9.0'):
    return f'''.version {ver}
.target {tgt}
.address_size 64
.global .align 16 .b8 gbuf[4096];
.global .texref tref;
.global .surfref sref;
{pre}
.visible .entry k(.param .u64 p0, .param .u64 p1)
{{
	.reg .pred %p<8>;
	.reg .b16 %h<8>;
	.reg .b32 %r<32>;
	.reg .f32 %f<32>;
	.reg .b64 %rd<16>;
	.reg .f64 %fd<8>;
	.shared .align 16 .b8 sbuf[4096];
	ld.param.u64 %rd1, [p0];
	mov.u32 %r1, sbuf;
	mov.u64 %rd2, gbuf;
{body}
	ret;
}}
'''
cases = {}
cases['int_arith'] = ('sm_90', '''
	add.sat.s32 %r2, %r3, %r4;
	add.cc.u32 %r2, %r3, %r4;
	addc.cc.u32 %r5, %r6, %r7;
	sub.cc.u32 %r2, %r3, %r4;
	subc.u32 %r5, %r6, %r7;
	mad.lo.cc.u32 %r2, %r3, %r4, %r5;
	madc.hi.u32 %r2, %r3, %r4, %r5;
	mul.hi.u64 %rd3, %rd4, %rd5;
	mad.wide.s32 %rd3, %r3, %r4, %rd5;
	mul24.hi.u32 %r2, %r3, %r4;
	mad24.lo.s32 %r2, %r3, %r4, %r5;
	sad.u32 %r2, %r3, %r4, %r5;
	div.s64 %rd3, %rd4, %rd5;
	rem.u32 %r2, %r3, 7;
	abs.s16 %h1, %h2;
	neg.s64 %rd3, %rd4;
	min.u16x2 %r2, %r3, %r4;
	max.relu.s32 %r2, %r3, %r4;
	popc.b64 %r2, %rd3;
	clz.b32 %r2, %r3;
	bfind.s64 %r2, %rd3;
	fns.b32 %r2, %r3, %r4, 1;
	brev.b64 %rd3, %rd4;
	bfe.s64 %rd3, %rd4, %r2, %r3;
	bfi.b64 %rd3, %rd4, %rd5, %r2, %r3;
	dp4a.u32.s32 %r2, %r3, %r4, %r5;
	dp2a.hi.s32.u32 %r2, %r3, %r4, %r5;
	szext.clamp.u32 %r2, %r3, %r4;
	bmsk.wrap.b32 %r2, %r3, %r4;
	and.pred %p1, %p2, %p3;
	or.b64 %rd3, %rd4, 0xff00ff00ff00ff00;
	xor.b16 %h1, %h2, 0x7fff;
	not.pred %p1, %p2;
	cnot.b32 %r2, %r3;
	lop3.b32 %r2, %r3, %r4, %r5, 0xe8;
	shf.r.clamp.b32 %r2, %r3, %r4, %r5;
	shl.b64 %rd3, %rd4, 3;
	shr.s32 %r2, %r3, %r4;
	prmt.b32.rc16 %r2, %r3, %r4, %r5;
	prmt.b32 %r2, %r3, %r4, 0x3210;
''')
cases['float_arith'] = ('sm_90', '''
	add.rz.ftz.sat.f32 %f1, %f2, %f3;
	sub.rm.f64 %fd1, %fd2, %fd3;
	mul.rp.f32 %f1, %f2, 0f40000000;
	fma.rn.ftz.sat.f32 %f1, %f2, %f3, %f4;
	mad.rn.f64 %fd1, %fd2, %fd3, %fd4;
	div.approx.ftz.f32 %f1, %f2, %f3;
	div.full.f32 %f1, %f2, %f3;
	div.rn.f64 %fd1, %fd2, %fd3;
	abs.ftz.f32 %f1, %f2;
	neg.f64 %fd1, %fd2;
	min.ftz.NaN.f32 %f1, %f2, %f3;
	max.f64 %fd1, %fd2, %fd3;
	rcp.rn.ftz.f32 %f1, %f2;
	rcp.approx.ftz.f64 %fd1, %fd2;
	sqrt.rz.f64 %fd1, %fd2;
	rsqrt.approx.f32 %f1, %f2;
	sin.approx.ftz.f32 %f1, %f2;
	cos.approx.f32 %f1, %f2;
	lg2.approx.ftz.f32 %f1, %f2;
	ex2.approx.f32 %f1, %f2;
	tanh.approx.f32 %f1, %f2;
	testp.notanumber.f64 %p1, %fd1;
	testp.subnormal.f32 %p1, %f1;
	copysign.f64 %fd1, %fd2, %fd3;
	add.rn.f16 %h1, %h2, %h3;
	fma.rn.sat.f16x2 %r2, %r3, %r4, %r5;
	mul.rn.bf16 %h1, %h2, %h3;
	fma.rn.bf16x2 %r2, %r3, %r4, %r5;
	neg.bf16x2 %r2, %r3;
	abs.f16 %h1, %h2;
	max.NaN.f16 %h1, %h2, %h3;
	ex2.approx.f16x2 %r2, %r3;
	tanh.approx.bf16 %h1, %h2;
	add.rn.f64 %fd1, %fd2, 0d3FF0000000000000;
	setp.gtu.f32 %p1, %f1, %f2;
	setp.num.and.f64 %p1|%p2, %fd1, %fd2, %p3;
	setp.eq.ftz.f32 %p1, %f1, 0f00000000;
	set.le.u32.f32 %r2, %f1, %f2;
	set.ne.and.f32.s32 %f1, %r2, %r3, !%p1;
	setp.lo.u32 %p1, %r2, %r3;
	setp.hs.u64 %p1, %rd2, %rd3;
	selp.f64 %fd1, %fd2, %fd3, %p1;
	slct.f32.s32 %f1, %f2, %f3, %r2;
	slct.ftz.s32.f32 %r2, %r3, %r4, %f1;
	set.eq.f16x2.f16x2 %r2, %r3, %r4;
	setp.lt.bf16x2 %p1|%p2, %r3, %r4;
''')
cases['convert'] = ('sm_90', '''
	cvt.rni.s32.f32 %r2, %f1;
	cvt.rzi.sat.u16.f64 %h1, %fd1;
	cvt.rn.f32.s64 %f1, %rd3;
	cvt.rz.ftz.f32.f64 %f1, %fd1;
	cvt.f64.f32 %fd1, %f1;
	cvt.s8.s32 %h1, %r2;
	cvt.u32.u8 %r2, %h1;
	cvt.rn.f16.f32 %h1, %f1;
	cvt.f32.f16 %f1, %h1;
	cvt.rn.relu.f16x2.f32 %r2, %f1, %f2;
	cvt.rn.bf16.f32 %h1, %f1;
	cvt.rna.tf32.f32 %r2, %f1;
	cvt.rn.satfinite.e5m2x2.f32 %h1, %f1, %f2;
	cvt.rn.f16x2.e4m3x2 %r2, %h1;
	cvt.rni.sat.s8.f16 %h1, %h2;
	cvta.to.shared.u64 %rd3, %rd4;
	cvta.local.u64 %rd3, %rd4;
	cvta.const.u64 %rd3, %rd4;
	cvta.shared::cluster.u64 %rd3, %rd4;
	isspacep.global %p1, %rd3;
	isspacep.shared::cluster %p1, %rd3;
	mapa.shared::cluster.u32 %r2, %r1, %r3;
	mapa.u64 %rd3, %rd4, 1;
	getctarank.shared::cluster.u32 %r2, %r1;
	cvt.pack.sat.s8.s32.b32 %r2, %r3, %r4, %r5;
''')
cases['memory'] = ('sm_90', '''
	ld.global.ca.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1+16];
	ld.global.nc.L1::no_allocate.L2::256B.v2.u64 {%rd3, %rd4}, [%rd1];
	ld.volatile.shared.u16 %h1, [%r1+2];
	ld.relaxed.cta.shared.b32 %r2, [sbuf+4];
	ld.acquire.sys.global.s64 %rd3, [gbuf+8];
	ld.local.b8 %h1, [%rd3];
	ld.const.f64 %fd1, [%rd3];
	ld.weak.global.cs.u32 %r2, [%rd1];
	ld.global.lu.v2.f64 {%fd1, %fd2}, [%rd1];
	ld.global.cv.b16 %h1, [%rd1];
	ld.mmio.relaxed.sys.global.u32 %r2, [%rd1];
	ld.global.v2.b32 {%r2, _}, [%rd1];
	ldu.global.v2.f32 {%f1, %f2}, [%rd1];
	ld.shared::cluster.u32 %r2, [%r1];
	ld.global.L1::evict_first.b32 %r2, [%rd1];
	st.global.wb.v4.b32 [%rd1], {%r2, %r3, %r4, %r5};
	st.global.wt.f64 [%rd1+8], %fd1;
	st.shared.v2.u16 [%r1], {%h1, %h2};
	st.volatile.global.u8 [%rd1], %h1;
	st.relaxed.gpu.global.b64 [%rd1], %rd3;
	st.release.cta.shared.u32 [%r1], 7;
	st.local.cg.b32 [%rd3], %r2;
	st.mmio.relaxed.sys.global.u32 [%rd1], %r2;
	st.global.L1::no_allocate.u32 [gbuf+16], %r2;
	prefetch.global.L1 [%rd1];
	prefetch.local.L2 [%rd3];
	prefetch.global.L2::evict_normal [%rd1];
	prefetchu.L1 [%rd1];
	createpolicy.range.L2::evict_last.L2::evict_unchanged.b64 %rd4, [%rd1], 256, 1024;
	createpolicy.fractional.L2::evict_first.b64 %rd4, 0.5;
	ld.global.L2::cache_hint.u32 %r2, [%rd1], %rd4;
	st.global.L2::cache_hint.u32 [%rd1], %r2, %rd4;
	alloca.u64 %rd5, 64, 16;
	stacksave.u64 %rd6;
	stackrestore.u64 %rd6;
	mov.u64 %rd7, %globaltimer;
	mov.u32 %r2, %dynamic_smem_size;
	mov.u32 %r3, %lanemask_lt;
	mov.u32 %r4, %cluster_ctaid.y;
	mov.v4.u32 {%r5, %r6, %r7, %r8}, %tid;
	mov.b64 %rd3, {%r2, %r3};
	mov.b64 {%r2, %r3}, %rd3;
	mov.b32 {%h1, %h2}, %r2;
	mov.f32 %f1, 0fBF800000;
	mov.u64 %rd3, sbuf;
''')
cases['atomics'] = ('sm_90', '''
	atom.global.add.u32 %r2, [%rd1], 1;
	atom.shared.cas.b64 %rd3, [%r1], %rd4, %rd5;
	atom.global.exch.b32 %r2, [gbuf], %r3;
	atom.acquire.gpu.global.min.s64 %rd3, [%rd1], %rd4;
	atom.release.sys.global.max.u32 %r2, [%rd1], %r3;
	atom.acq_rel.cta.shared.inc.u32 %r2, [%r1], 10;
	atom.relaxed.cluster.global.dec.u32 %r2, [%rd1], 10;
	atom.global.and.b32 %r2, [%rd1], %r3;
	atom.or.b64 %rd3, [%rd1], %rd4;
	atom.global.xor.b32 %r2, [%rd1], %r3;
	atom.global.add.f64 %fd1, [%rd1], %fd2;
	atom.global.add.noftz.f16 %h1, [%rd1], %h2;
	atom.global.add.noftz.bf16x2 %r2, [%rd1], %r3;
	atom.global.v2.f32.add {%f1, %f2}, [%rd1], {%f3, %f4};
	atom.global.cas.b16 %h1, [%rd1], %h2, %h3;
	atom.global.L2::cache_hint.add.u32 %r2, [%rd1], 1, %rd4;
	atom.shared::cluster.add.u32 %r2, [%r1], 1;
	red.global.add.u64 [%rd1], %rd3;
	red.shared.min.s32 [%r1], %r2;
	red.release.gpu.global.or.b32 [%rd1], %r2;
	red.global.add.noftz.f16x2 [%rd1], %r2;
	red.global.v4.f32.add [%rd1], {%f1, %f2, %f3, %f4};
''')
cases['warp_sync'] = ('sm_90', '''
	bar.sync 0;
	bar.sync 1, 64;
	bar.cta.sync %r2, %r3;
	bar.arrive 2, 32;
	bar.red.popc.u32 %r2, 0, %p1;
	bar.red.or.pred %p2, 1, 64, !%p1;
	barrier.sync %r2;
	barrier.sync.aligned 0;
	barrier.arrive.aligned 1, 64;
	barrier.red.and.aligned.pred %p2, 0, %p1;
	barrier.cluster.arrive.relaxed.aligned;
	barrier.cluster.wait.acquire;
	bar.warp.sync -1;
	membar.cta;
	membar.sys;
	fence.sc.cluster;
	fence.acq_rel.sys;
	fence.proxy.alias;
	fence.proxy.async.global;
	fence.mbarrier_init.release.cluster;
	vote.sync.all.pred %p1, %p2, -1;
	vote.sync.any.pred %p1, !%p2, %r2;
	vote.sync.uni.pred %p1, %p2, -1;
	vote.sync.ballot.b32 %r2, %p2, -1;
	match.sync.any.b32 %r2, %r3, -1;
	match.sync.all.b64 %r2|%p1, %rd3, -1;
	activemask.b32 %r2;
	redux.sync.min.u32 %r2, %r3, -1;
	redux.sync.xor.b32 %r2, %r3, %r4;
	elect.sync %r2|%p1, -1;
	shfl.sync.up.b32 %r2|%p1, %r3, 1, 0, -1;
	shfl.sync.idx.b32 %r2, %r3, %r4, 31, %r5;
	griddepcontrol.launch_dependents;
	nanosleep.u32 100;
	pmevent.mask 0x3;
	mbarrier.init.shared::cta.b64 [%r1], 32;
	mbarrier.arrive.shared.b64 %rd3, [%r1];
	mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 %rd3, [%r1], 128;
	mbarrier.arrive.noComplete.shared.b64 %rd3, [%r1], 1;
	mbarrier.arrive_drop.shared.b64 %rd3, [%r1];
	mbarrier.expect_tx.relaxed.cluster.shared::cta.b64 [%r1], 64;
	mbarrier.complete_tx.relaxed.cluster.shared::cta.b64 [%r1], 64;
	mbarrier.test_wait.shared.b64 %p1, [%r1], %rd3;
	mbarrier.test_wait.parity.acquire.cta.shared::cta.b64 %p1, [%r1], %r2;
	mbarrier.try_wait.shared::cta.b64 %p1, [%r1], %rd3, 1000;
	mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r2;
	mbarrier.pending_count.b64 %r2, %rd3;
	mbarrier.inval.shared.b64 [%r1];
	cp.async.ca.shared.global [%r1], [%rd1], 4;
	cp.async.cg.shared.global.L2::128B [%r1], [%rd1], 16, 8;
	cp.async.commit_group;
	cp.async.wait_group 1;
	cp.async.wait_all;
	cp.async.mbarrier.arrive.noinc.shared.b64 [%r1];
	cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 128, [%r1];
	cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r1], 128;
	cp.async.bulk.prefetch.L2.global [%rd1], 256;
	cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd1], [%r1], 128;
	cp.async.bulk.commit_group;
	cp.async.bulk.wait_group.read 0;
	cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r1];
	cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%rd1, {%r2}], [%r1];
	cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.tile.bulk_group [%rd1, {%r2}], [%r1];
	cp.async.bulk.prefetch.tensor.2d.L2.global [%rd1, {%r2, %r3}];
	st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r1], %r2, [%r1];
	red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r1], %r2, [%r1];
	multimem.ld_reduce.relaxed.sys.global.add.u32 %r2, [%rd1];
	multimem.st.relaxed.gpu.global.f32 [%rd1], %f1;
	multimem.red.relaxed.gpu.global.add.u64 [%rd1], %rd3;
	discard.global.L2 [%rd1], 128;
	applypriority.global.L2::evict_normal [%rd1], 128;
	prefetch.tensormap [%rd1];
	fence.proxy.tensormap::generic.acquire.gpu [%rd1], 128;
''')
cases['matrix_sm80'] = ('sm_80', '''
	wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9}, [%rd1], 16;
	wmma.load.b.sync.aligned.col.m16n16k16.shared.f16 {%r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9}, [%r1];
	wmma.load.c.sync.aligned.row.m16n16k16.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, [%rd1], 16;
	wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, {%r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9}, {%r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9}, {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};
	wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd1], {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, 16;
	mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%f1, %f2, %f3, %f4}, {%r2, %r3}, {%r4}, {%f5, %f6, %f7, %f8};
	mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f1, %f2, %f3, %f4}, {%r2, %r3, %r4, %r5}, {%r6, %r7}, {%f5, %f6, %f7, %f8};
	mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%fd1, %fd2}, {%fd3}, {%fd4}, {%fd5, %fd6};
	mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {%r2, %r3, %r4, %r5}, {%r6, %r7, %r8, %r9}, {%r10, %r11}, {%r12, %r13, %r14, %r15};
	mma.sync.aligned.m16n8k256.row.col.and.popc.s32.b1.b1.s32 {%r2, %r3, %r4, %r5}, {%r6, %r7, %r8, %r9}, {%r10, %r11}, {%r12, %r13, %r14, %r15};
	ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r2}, [%r1];
	movmatrix.sync.aligned.m8n8.trans.b16 %r2, %r3;
''')
cases['texture'] = ('sm_80', '''
	tex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [tref, {%r2}];
	tex.2d.v4.s32.f32 {%r2, %r3, %r4, %r5}, [tref, {%f1, %f2}];
	tex.3d.v4.u32.f32 {%r2, %r3, %r4, %r5}, [%rd3, {%f1, %f2, %f3, %f4}];
	tex.a2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd3, {%r2, %f1, %f2, %f3}];
	tex.level.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd3, {%f5, %f6}], %f7;
	tex.grad.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd3, {%f5, %f6}], {%f7, %f8}, {%f9, %f10};
	tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}|%p1, [%rd3, {%f5, %f6}];
	tld4.r.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd3, {%f5, %f6}];
	tld4.a.2d.v4.s32.f32 {%r2, %r3, %r4, %r5}, [tref, {%f5, %f6}];
	txq.width.b32 %r2, [tref];
	txq.level.height.b32 %r2, [%rd3], %r3;
	txq.num_mipmap_levels.b32 %r2, [%rd3];
	istypep.texref %p1, %rd3;
	suld.b.2d.v4.b32.trap {%r2, %r3, %r4, %r5}, [sref, {%r6, %r7}];
	suld.b.1d.b8.clamp %h1, [%rd3, {%r2}];
	sust.b.2d.v2.b32.zero [%rd3, {%r2, %r3}], {%r4, %r5};
	sust.p.3d.v4.b32.trap [sref, {%r2, %r3, %r4, %r5}], {%r6, %r7, %r8, %r9};
	sured.b.add.2d.u32.trap [%rd3, {%r2, %r3}], %r4;
	suq.width.b32 %r2, [sref];
''')
cases['control'] = ('sm_80', '''
	@%p1 bra.uni $L1;
	@!%p2 bra $L1;
	ts: .branchtargets $L1, $L2;
	brx.idx.uni %r2, ts;
$L1:
	{
	.reg .b32 t;
	mov.u32 t, 1;
	}
$L2:
	@%p1 exit;
	@%p2 trap;
	brkpt;
''')
cases['video'] = ('sm_80', '''
	vadd.s32.u32.s32.sat %r2, %r3.h0, %r4.h1;
	vsub.u32.u32.u32.add %r2, %r3.b0, %r4.b3, %r5;
	vabsdiff.s32.s32.s32.min %r2, %r3, %r4, %r5;
	vmin.u32.u32.u32 %r2.b1, %r3, %r4, %r5;
	vmax.s32.s32.s32.max %r2, %r3, %r4, %r5;
	vshl.u32.u32.u32.clamp %r2, %r3, %r4;
	vshr.s32.s32.u32.wrap.add %r2, %r3, %r4, %r5;
	vmad.s32.s32.u32.sat %r2, %r3.h1, -%r4, %r5;
	vset.s32.u32.ne.add %r2, %r3, %r4, %r5;
	vadd2.s32.s32.u32.sat %r2.h10, %r3.h01, %r4.h32, %r5;
	vsub2.u32.u32.u32.add %r2, %r3, %r4, %r5;
	vavrg2.s32.s32.s32 %r2, %r3, %r4, %r5;
	vabsdiff2.u32.u32.u32 %r2, %r3, %r4, %r5;
	vmin2.s32.s32.s32.add %r2, %r3, %r4, %r5;
	vset2.u32.u32.lt %r2, %r3, %r4, %r5;
	vadd4.u32.u32.u32.sat %r2.b3210, %r3.b7654, %r4, %r5;
	vsub4.s32.s32.s32 %r2, %r3, %r4, %r5;
	vavrg4.u32.u32.u32.add %r2, %r3, %r4, %r5;
	vabsdiff4.s32.s32.s32 %r2, %r3, %r4, %r5;
	vmax4.u32.u32.u32 %r2, %r3, %r4, %r5;
	vset4.s32.s32.gt.add %r2, %r3, %r4, %r5;
''')
cases['wgmma_sm90a'] = ('sm_90a', '''
	wgmma.fence.sync.aligned;
	wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, %rd3, %rd4, %p1, 1, 1, 0, 0;
	wgmma.mma_async.sync.aligned.m64n8k32.f16.e4m3.e5m2 {%r2, %r3}, %rd3, %rd4, 1, -1, 1;
	wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, {%r2, %r3, %r4, %r5}, %rd4, 1, 1, 1, 1;
	wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8.satfinite {%r2, %r3, %r4, %r5}, %rd3, %rd4, 1;
	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 1;
	setmaxnreg.dec.sync.aligned.u32 64;
	tensormap.replace.tile.global_address.global.b1024.b64 [%rd1], %rd3;
	tensormap.replace.tile.rank.shared::cta.b1024.b32 [%r1], 2;
	tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd1], [%r1], 128;
	stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%r1], {%r2, %r3, %r4, %r5};
''')
cases['tcgen05_sm100a'] = ('sm_100a', '''
	tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;
	tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
	tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r2, %r3}, [%r4];
	tcgen05.st.sync.aligned.16x64b.x1.b32 [%r4], {%r2};
	tcgen05.wait::ld.sync.aligned;
	tcgen05.wait::st.sync.aligned;
	tcgen05.cp.cta_group::1.128x256b [%r4], %rd3;
	tcgen05.shift.cta_group::1.down [%r4];
	tcgen05.mma.cta_group::1.kind::f16 [%r4], %rd3, %rd4, %r5, %p1;
	tcgen05.mma.cta_group::1.kind::tf32 [%r4], [%r6], %rd4, %r5, %p1;
	tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r1];
	tcgen05.fence::before_thread_sync;
	tcgen05.fence::after_thread_sync;
	tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r4, 32;
	clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%r1], [%r1];
	st.bulk.weak.shared::cta [%r1], 64, 0;
''')
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../tests/ptx-front/agreement/valid')
os.makedirs(out, exist_ok=True)
for name, (tgt, body) in cases.items():
    open(os.path.join(out, f'isa_{name}.ptx'), 'w').write(mod(tgt, body))
