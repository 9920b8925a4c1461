// Corpus source: Hopper-era instructions through CCCL's cuda::ptx wrappers and inline PTX (compiled for sm_90a).
#include <cuda/ptx>
#include <cuda_fp16.h>
#include <cstdint>

namespace ptx = cuda::ptx;

__global__ void mbarrier_and_bulk(const int4* gin, int4* gout, uint32_t* counters, const void* tmap) {
    __shared__ alignas(128) int4 buf[256];
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) {
        ptx::mbarrier_init(&bar, blockDim.x);
        ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
        ptx::fence_proxy_async(ptx::space_shared);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, buf, gin, sizeof(buf), &bar);
        int32_t coords[2] = {0, 0};
        ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, buf, tmap, coords, &bar);
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar, 2 * sizeof(buf));
    } else {
        (void)ptx::mbarrier_arrive(&bar);
    }
    while (!ptx::mbarrier_try_wait_parity(&bar, 0)) {}
    uint64_t st = ptx::mbarrier_arrive(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar);
    while (!ptx::mbarrier_test_wait(ptx::sem_acquire, ptx::scope_cta, &bar, st)) {}
    gout[threadIdx.x] = buf[threadIdx.x];
    ptx::fence_proxy_async(ptx::space_shared);
    __syncthreads();
    if (threadIdx.x == 0) {
        ptx::cp_async_bulk(ptx::space_global, ptx::space_shared, gout, buf, sizeof(buf));
        ptx::cp_async_bulk_commit_group();
        ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>());
        ptx::cp_async_bulk_wait_group(ptx::n32_t<0>());
    }
    ptx::fence(ptx::sem_sc, ptx::scope_gpu);
    ptx::fence(ptx::sem_acq_rel, ptx::scope_cluster);
    ptx::barrier_cluster_arrive(ptx::sem_release);
    ptx::barrier_cluster_wait(ptx::sem_acquire);
    counters[0] = ptx::getctarank(ptx::space_cluster, buf);
    ptx::red_async(ptx::op_inc, (uint32_t*)buf, 1u, &bar);
    ptx::st_async((uint32_t*)buf, 5u, &bar);
    ptx::multimem_red(ptx::sem_relaxed, ptx::scope_gpu, ptx::op_min, counters + 1, 3u);
    ptx::tensormap_cp_fenceproxy(ptx::sem_release, ptx::scope_gpu, (void*)gout, tmap, ptx::n32_t<128>());
}

__global__ void inline_ptx_sm90(uint32_t* out, const uint32_t* in) {
    uint32_t a = in[threadIdx.x], b = in[threadIdx.x + 32], r = 0, r2 = 0;
    asm volatile("{\n\t.reg .pred p;\n\telect.sync _|p, 0xffffffff;\n\tselp.u32 %0, 1, 0, p;\n\t}" : "=r"(r));
    asm volatile("griddepcontrol.wait;");
    asm volatile("griddepcontrol.launch_dependents;");
    asm("vadd.u32.u32.u32.sat %0, %1.b0, %2.b2, %3;" : "=r"(r2) : "r"(a), "r"(b), "r"(r));
    asm("vmax4.u32.u32.u32 %0, %1, %2, %3;" : "=r"(r2) : "r"(a), "r"(b), "r"(r2));
    asm("vabsdiff2.s32.s32.s32.add %0, %1.h10, %2.h01, %3;" : "=r"(r2) : "r"(a), "r"(b), "r"(r2));
    asm("vset.u32.u32.lt %0, %1, %2;" : "=r"(r) : "r"(a), "r"(r2));
    asm("bfe.u32 %0, %1, 3, 5;" : "=r"(r2) : "r"(r2));
    asm("bfi.b32 %0, %1, %2, 4, 8;" : "=r"(r2) : "r"(a), "r"(r2));
    asm("prmt.b32.f4e %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(r));
    asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(r) : "r"(a), "r"(b), "r"(r));
    asm("shf.l.wrap.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(r));
    asm("bmsk.clamp.b32 %0, %1, %2;" : "=r"(r2) : "r"(a), "r"(r2));
    asm("szext.wrap.s32 %0, %1, %2;" : "=r"(r2) : "r"(a), "r"(r2));
    asm("fns.b32 %0, %1, %2, %3;" : "=r"(r2) : "r"(a), "r"(b), "r"(r2));
    asm("bfind.shiftamt.u32 %0, %1;" : "=r"(r2) : "r"(r2));
    asm("cvt.pack.sat.u8.s32.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(r2));
    float f = __uint_as_float(a);
    uint32_t t;
    asm("{\n\t.reg .pred q;\n\ttestp.finite.f32 q, %1;\n\tselp.u32 %0, 1, 0, q;\n\t}" : "=r"(t) : "f"(f));
    asm("copysign.f32 %0, %1, %2;" : "=f"(f) : "f"(f), "f"(__uint_as_float(b)));
    asm("tanh.approx.f32 %0, %1;" : "=f"(f) : "f"(f));
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(f) : "f"(f));
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    uint32_t packed;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(h) : "f"(f), "f"(f));
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(f), "f"(f));
    asm("fma.rn.relu.bf16x2 %0, %1, %2, %3;" : "=r"(packed) : "r"(packed), "r"(a), "r"(b));
    asm("min.NaN.xorsign.abs.f16x2 %0, %1, %2;" : "=r"(packed) : "r"(packed), "r"(a));
    asm("max.s16x2 %0, %1, %2;" : "=r"(packed) : "r"(packed), "r"(b));
    asm("redux.sync.add.u32 %0, %1, 0xffffffff;" : "=r"(r2) : "r"(r2));
    asm("redux.sync.max.s32 %0, %1, 0xffffffff;" : "=r"(r2) : "r"(r2));
    asm("{\n\t.reg .b32 rr;\n\t.reg .b32 r2;\n\tmov.u32 rr, %%cluster_ctarank;\n\tmov.u32 r2, %%cluster_nctarank;\n\tadd.u32 %0, rr, r2;\n\t}" : "=r"(t));
    asm volatile("nanosleep.u32 %0;" :: "r"(r2 & 255));
    asm volatile("pmevent 3;");
    asm volatile("pmevent.mask 0x5;");
    asm volatile("prefetch.global.L2::evict_last [%0];" :: "l"(in));
    asm volatile("prefetchu.L1 [%0];" :: "l"(in));
    asm volatile("prefetch.tensormap [%0];" :: "l"(in));
    uint64_t pol;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
    asm volatile("ld.global.L1::evict_last.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                 : "=r"(a), "=r"(b), "=r"(r), "=r"(r2) : "l"(in), "l"(pol));
    asm volatile("st.global.L1::no_allocate.v2.u32 [%0], {%1, %2};" :: "l"(out), "r"(a), "r"(b));
    asm volatile("ld.relaxed.gpu.global.L2::128B.u32 %0, [%1];" : "=r"(a) : "l"(in));
    asm volatile("st.release.sys.global.u32 [%0], %1;" :: "l"(out), "r"(a));
    asm volatile("atom.acq_rel.gpu.global.exch.b32 %0, [%1], %2;" : "=r"(a) : "l"(out), "r"(b));
    asm volatile("red.release.cluster.global.add.noftz.f16x2 [%0], %1;" :: "l"(out), "r"(b));
    asm volatile("atom.global.v4.f32.add {%0,%1,%2,%3}, [%4], {%0,%1,%2,%3};"
                 : "+f"(f), "+f"(f), "+f"(f), "+f"(f) : "l"(out));
    asm volatile("discard.global.L2 [%0], 128;" :: "l"(out));
    asm volatile("applypriority.global.L2::evict_normal [%0], 128;" :: "l"(out));
    asm volatile("membar.proxy.alias;");
    asm volatile("fence.proxy.tensormap::generic.release.gpu;");
    asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" :: "l"(in));
    asm volatile("bar.warp.sync 0xffffffff;");
    asm volatile("barrier.sync.aligned 1, 64;");
    asm volatile("bar.arrive 2, 64;");
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %1, 0;\n\tbar.red.popc.u32 %0, 0, p;\n\t}" : "=r"(r) : "r"(a));
    asm volatile("{\n\t.reg .pred p, q;\n\tsetp.ne.u32 p, %1, 0;\n\tbarrier.red.and.pred q, 3, p;\n\tselp.u32 %0, 1, 0, q;\n\t}"
                 : "=r"(r2) : "r"(a));
    asm volatile("setmaxnreg.inc.sync.aligned.u32 240;");
    asm volatile("stackrestore.u64 %0;" :: "l"(pol));
    out[threadIdx.x] = r + r2 + t + h + packed + a + b + __float_as_uint(f);
}

__global__ void matrix_sm90(const half* a, float* c) {
    __shared__ alignas(128) half sa[64 * 16];
    __shared__ alignas(128) half sb[16 * 64];
    sa[threadIdx.x] = a[threadIdx.x];
    sb[threadIdx.x] = a[threadIdx.x + 1024];
    c[1024 + threadIdx.x] = __half2float(sb[(threadIdx.x * 3) % 1024]);
    __syncthreads();
    uint32_t r0, r1, r2, r3;
    uint32_t saddr = static_cast<uint32_t>(__cvta_generic_to_shared(sa + (threadIdx.x % 16) * 8));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(saddr));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared::cta.b16 {%0,%1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(saddr));
    asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1,%2};" :: "r"(saddr), "r"(r2), "r"(r3));
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(r2) : "r"(r3));
    float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "r"(r0), "r"(r1), "r"(r2), "r"(r3), "r"(r0), "r"(r1));
    int i0 = 0, i1 = 0;
    asm volatile("mma.sync.aligned.m8n8k16.row.col.satfinite.s32.s8.s8.s32 {%0,%1}, {%2}, {%3}, {%0,%1};"
                 : "+r"(i0), "+r"(i1) : "r"(r0), "r"(r1));
    asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, 0x0;"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "r"(r0), "r"(r1), "r"(r2), "r"(r3), "r"(r0), "r"(r1), "r"(r2), "r"(r3), "r"(i0));
    uint64_t descA = saddr, descB = saddr + 2048;
    float acc[8] = {};
    asm volatile("wgmma.fence.sync.aligned;");
    asm volatile("wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, 1, 1, 1, 0, 1;"
                 : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]), "+f"(acc[6]),
                   "+f"(acc[7])
                 : "l"(descA), "l"(descB));
    asm volatile("wgmma.commit_group.sync.aligned;");
    asm volatile("wgmma.wait_group.sync.aligned 0;");
    float s = d0 + d1 + d2 + d3 + i0 + i1;
    for (int i = 0; i < 8; ++i) s += acc[i];
    c[threadIdx.x] = s;
}
