"""Template and class APIs for the PTX sweep (gen.py): group -> (includes, kernel bodies). A body runs in
`__global__ void k(unsigned char* in, unsigned char* out)`; a body starting with `HOST:` is a host function
instead (device-wide CUB and Thrust algorithms instantiate their kernels from host code). Every body is one
use of one API, so a body nvcc or ptxas rejects for an architecture drops out alone."""

I = "int* iin = reinterpret_cast<int*>(in); int* iout = reinterpret_cast<int*>(out); "
F = "float* fin = reinterpret_cast<float*>(in); float* fout = reinterpret_cast<float*>(out); "
CG = "namespace cg = cooperative_groups; auto block = cg::this_thread_block(); auto tile = cg::tiled_partition<32>(block); "

COOPERATIVE_GROUPS = [
    I + CG + "block.sync(); iout[block.thread_rank()] = block.size();",
    I + CG + "iout[threadIdx.x] = cg::reduce(tile, iin[threadIdx.x], cg::plus<int>());",
    I + CG + "iout[threadIdx.x] = cg::reduce(tile, iin[threadIdx.x], cg::less<int>());",
    I + CG + "iout[threadIdx.x] = cg::reduce(tile, iin[threadIdx.x], cg::greater<int>());",
    I + CG + "iout[threadIdx.x] = cg::reduce(tile, iin[threadIdx.x], cg::bit_and<int>());",
    I + CG + "iout[threadIdx.x] = cg::reduce(tile, iin[threadIdx.x], cg::bit_or<int>());",
    I + CG + "iout[threadIdx.x] = cg::reduce(tile, iin[threadIdx.x], cg::bit_xor<int>());",
    F + CG + "fout[threadIdx.x] = cg::reduce(tile, fin[threadIdx.x], cg::plus<float>());",
    F + CG + "fout[threadIdx.x] = cg::reduce(tile, double(fin[threadIdx.x]), cg::plus<double>());",
    I + CG + "iout[threadIdx.x] = cg::inclusive_scan(tile, iin[threadIdx.x]);",
    I + CG + "iout[threadIdx.x] = cg::exclusive_scan(tile, iin[threadIdx.x], cg::bit_xor<int>());",
    I + CG + "auto t16 = cg::tiled_partition<16>(block); iout[threadIdx.x] = cg::inclusive_scan(t16, iin[threadIdx.x]);",
    I + CG + "auto t4 = cg::tiled_partition<4>(block); iout[threadIdx.x] = t4.shfl_down(iin[threadIdx.x], 1) + t4.shfl(iin[0], 2);",
    I + CG + "iout[threadIdx.x] = tile.shfl_xor(iin[threadIdx.x], 3) + tile.shfl_up(iin[threadIdx.x], 2);",
    I + CG + "iout[threadIdx.x] = tile.any(iin[threadIdx.x] > 3) + tile.all(iin[threadIdx.x] > 0) + tile.ballot(iin[threadIdx.x] & 1);",
    I + CG + "iout[threadIdx.x] = tile.match_any(iin[threadIdx.x]);",
    I + CG + "auto c = cg::coalesced_threads(); iout[threadIdx.x] = c.thread_rank() + c.shfl(iin[threadIdx.x], 0);",
    I + CG + "if (iin[threadIdx.x] > 2) { auto c = cg::coalesced_threads(); iout[threadIdx.x] = cg::reduce(c, iin[threadIdx.x], cg::plus<int>()); }",
    I + CG + "auto part = cg::labeled_partition(tile, iin[threadIdx.x] & 3); iout[threadIdx.x] = part.size();",
    I + CG + "auto part = cg::binary_partition(tile, iin[threadIdx.x] & 1); iout[threadIdx.x] = part.thread_rank();",
    I + "namespace cg = cooperative_groups; auto g = cg::this_grid(); g.sync(); iout[g.thread_rank()] = g.num_blocks();",
    I + CG + "__shared__ int sh[256]; cg::memcpy_async(block, sh, iin, sizeof(int) * 256); cg::wait(block); iout[threadIdx.x] = sh[threadIdx.x];",
    I + CG + "__shared__ int sh[64]; cg::memcpy_async(tile, sh, iin, sizeof(int) * 64); cg::wait(tile); iout[threadIdx.x] = sh[threadIdx.x % 64];",
    I + CG + "__shared__ int sh[64]; cg::memcpy_async(block, sh, cuda::aligned_size_t<16>(sizeof(int) * 64), iin, cuda::aligned_size_t<16>(sizeof(int) * 64)); cg::wait_prior<0>(block); iout[threadIdx.x] = sh[threadIdx.x % 64];",
    I + "namespace cg = cooperative_groups; auto cl = cg::this_cluster(); cl.sync(); iout[threadIdx.x] = cl.block_rank() + cl.num_blocks();",
    I + "namespace cg = cooperative_groups; __shared__ int s; auto cl = cg::this_cluster(); s = 1; cl.sync(); int* r = cl.map_shared_rank(&s, 0); iout[threadIdx.x] = *r;",
    I + CG + "cg::invoke_one(tile, [&] { iout[0] = 1; }); iout[threadIdx.x + 1] = tile.meta_group_rank() + tile.meta_group_size();",
    I + CG + "iout[threadIdx.x] = cg::invoke_one_broadcast(tile, [&] { return iin[0]; });",
]

ATOMIC_TYPES = [("int", "fetch_add(2)"), ("unsigned", "fetch_max(2u)"), ("long long", "fetch_min(2)"),
                ("float", "fetch_add(1.5f)"), ("double", "fetch_add(2.5)"), ("unsigned long long", "fetch_or(6ull)"),
                ("int", "fetch_and(12)"), ("int", "fetch_xor(3)"), ("int", "exchange(5)"),
                ("unsigned", "fetch_sub(1u)")]
SCOPES = ["cuda::thread_scope_system", "cuda::thread_scope_device", "cuda::thread_scope_block"]

CUDA_STD = []
for t, op in ATOMIC_TYPES:
    for s in SCOPES:
        CUDA_STD.append(f"cuda::atomic_ref<{t}, {s}> a(*reinterpret_cast<{t}*>(in)); auto r = a.{op}; memcpy(out, &r, sizeof r);")
CUDA_STD += [
    "cuda::std::atomic_ref<int> a(*reinterpret_cast<int*>(in)); int e = 1; bool ok = a.compare_exchange_strong(e, 2); out[0] = ok;",
    "cuda::atomic_ref<long long, cuda::thread_scope_device> a(*reinterpret_cast<long long*>(in)); long long e = 1; out[0] = a.compare_exchange_weak(e, 3, cuda::std::memory_order_acq_rel);",
    "cuda::atomic_ref<int, cuda::thread_scope_device> a(*reinterpret_cast<int*>(in)); out[0] = a.load(cuda::std::memory_order_acquire); a.store(4, cuda::std::memory_order_release);",
    "cuda::atomic_ref<int, cuda::thread_scope_block> a(*reinterpret_cast<int*>(in)); out[0] = a.load(cuda::std::memory_order_relaxed); a.store(4, cuda::std::memory_order_seq_cst);",
    "cuda::atomic_ref<int, cuda::thread_scope_device> a(*reinterpret_cast<int*>(in)); a.wait(0); a.notify_all();",
    "cuda::std::atomic_thread_fence(cuda::std::memory_order_seq_cst); cuda::atomic_thread_fence(cuda::std::memory_order_acquire, cuda::thread_scope_block); out[0] = 1;",
    "__shared__ cuda::std::atomic<int> s; if (threadIdx.x == 0) s.store(0); __syncthreads(); s.fetch_add(1); __syncthreads(); out[0] = s.load();",
    "__shared__ cuda::barrier<cuda::thread_scope_block> bar; if (threadIdx.x == 0) init(&bar, blockDim.x); __syncthreads(); bar.arrive_and_wait(); out[threadIdx.x] = 1;",
    "__shared__ cuda::barrier<cuda::thread_scope_block> bar; if (threadIdx.x == 0) init(&bar, blockDim.x); __syncthreads(); auto t = bar.arrive(); bar.wait(cuda::std::move(t)); out[threadIdx.x] = 2;",
    "__shared__ cuda::barrier<cuda::thread_scope_block> bar; if (threadIdx.x == 0) init(&bar, blockDim.x); __syncthreads(); bar.arrive_and_drop(); out[threadIdx.x] = 3;",
    "__shared__ cuda::barrier<cuda::thread_scope_block> bar; __shared__ int sh[128]; if (threadIdx.x == 0) init(&bar, blockDim.x); __syncthreads(); cuda::memcpy_async(sh, reinterpret_cast<int*>(in), sizeof(int) * 128, bar); bar.arrive_and_wait(); out[threadIdx.x] = sh[threadIdx.x % 128];",
    "__shared__ cuda::barrier<cuda::thread_scope_block> bar; __shared__ alignas(16) int sh[128]; if (threadIdx.x == 0) init(&bar, blockDim.x); __syncthreads(); cuda::memcpy_async(sh, reinterpret_cast<int*>(in), cuda::aligned_size_t<16>(sizeof(int) * 128), bar); bar.arrive_and_wait(); out[threadIdx.x] = sh[threadIdx.x % 128];",
    "auto* bar = reinterpret_cast<cuda::barrier<cuda::thread_scope_device>*>(in); bar->arrive_and_wait(); out[0] = 1;",
    "auto* sem = reinterpret_cast<cuda::std::counting_semaphore<4>*>(in); sem->acquire(); sem->release(); out[0] = 1;",
    "auto* sem = reinterpret_cast<cuda::counting_semaphore<cuda::thread_scope_device, 8>*>(in); out[0] = sem->try_acquire(); sem->release(2);",
    "auto* sem = reinterpret_cast<cuda::binary_semaphore<cuda::thread_scope_block>*>(in); sem->acquire(); sem->release();",
    "auto* l = reinterpret_cast<cuda::std::latch*>(in); l->count_down(); l->wait(); out[0] = l->try_wait();",
    "auto* l = reinterpret_cast<cuda::latch<cuda::thread_scope_device>*>(in); l->arrive_and_wait(); out[0] = 1;",
    "__shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, 2> st; auto p = cuda::make_pipeline(cooperative_groups::this_thread_block(), &st); __shared__ int sh[64]; p.producer_acquire(); cuda::memcpy_async(sh, reinterpret_cast<int*>(in), sizeof(int) * 64, p); p.producer_commit(); p.consumer_wait(); out[threadIdx.x] = sh[threadIdx.x % 64]; p.consumer_release();",
    "auto p = cuda::make_pipeline(); __shared__ int sh[64]; p.producer_acquire(); cuda::memcpy_async(&sh[threadIdx.x % 64], reinterpret_cast<int*>(in) + threadIdx.x % 64, sizeof(int), p); p.producer_commit(); cuda::pipeline_consumer_wait_prior<0>(p); out[threadIdx.x] = sh[threadIdx.x % 64];",
]

CUDA_PTX = [
    "out[0] = cuda::ptx::get_sreg_laneid() + cuda::ptx::get_sreg_warpid() + cuda::ptx::get_sreg_nsmid();",
    "out[0] = cuda::ptx::get_sreg_clock64() & 1; out[1] = cuda::ptx::get_sreg_globaltimer() & 1;",
    "__shared__ uint64_t bar; if (threadIdx.x == 0) cuda::ptx::mbarrier_init(&bar, blockDim.x); __syncthreads(); uint64_t st = cuda::ptx::mbarrier_arrive(&bar); while (!cuda::ptx::mbarrier_try_wait(&bar, st)) {} out[0] = 1;",
    "__shared__ uint64_t bar; cuda::ptx::mbarrier_init(&bar, 1); cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared, &bar, 16); out[0] = cuda::ptx::mbarrier_try_wait_parity(&bar, 0);",
    "cuda::ptx::fence_proxy_async(cuda::ptx::space_shared); cuda::ptx::fence(cuda::ptx::sem_sc, cuda::ptx::scope_gpu); out[0] = 1;",
    "cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster); cuda::ptx::fence_proxy_tensormap_generic(cuda::ptx::sem_release, cuda::ptx::scope_gpu); out[0] = 1;",
    "__shared__ alignas(16) int sh[64]; __shared__ uint64_t bar; cuda::ptx::mbarrier_init(&bar, 1); cuda::ptx::cp_async_bulk(cuda::ptx::space_shared, cuda::ptx::space_global, sh, in, 256, &bar); out[0] = sh[0];",
    "__shared__ alignas(16) int sh[64]; cuda::ptx::cp_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, out, sh, 256); cuda::ptx::cp_async_bulk_commit_group(); cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>{});",
    "cuda::ptx::red_async(cuda::ptx::op_add, reinterpret_cast<uint32_t*>(out), 1u, reinterpret_cast<uint64_t*>(in));",
    "out[0] = cuda::ptx::elect_sync(0xffffffffu);",
    "cuda::ptx::st_async(reinterpret_cast<int32_t*>(out), 1, reinterpret_cast<uint64_t*>(in));",
    "uint32_t v = cuda::ptx::shfl_sync_idx(0u, 0u, 0x1f, 0xffffffffu); out[0] = v;",
    "cuda::ptx::tensormap_replace_global_address(cuda::ptx::space_global, in, reinterpret_cast<uint64_t>(out)); out[0] = 1;",
    "cuda::ptx::barrier_cluster_arrive(); cuda::ptx::barrier_cluster_wait(); out[0] = cuda::ptx::get_sreg_cluster_ctarank();",
    "out[0] = cuda::ptx::getctarank(cuda::ptx::space_cluster, in);",
    "cuda::ptx::prefetch_L2(in); out[0] = 1;",
]

CUB = [
    I + "using BR = cub::BlockReduce<int, 128>; __shared__ BR::TempStorage t; int r = BR(t).Sum(iin[threadIdx.x]); if (threadIdx.x == 0) iout[0] = r;",
    F + "using BR = cub::BlockReduce<float, 128, cub::BLOCK_REDUCE_RAKING>; __shared__ BR::TempStorage t; float r = BR(t).Reduce(fin[threadIdx.x], cuda::maximum<>{}); if (threadIdx.x == 0) fout[0] = r;",
    I + "using BR = cub::BlockReduce<double, 128, cub::BLOCK_REDUCE_WARP_REDUCTIONS>; __shared__ BR::TempStorage t; double r = BR(t).Sum(double(iin[threadIdx.x])); if (threadIdx.x == 0) iout[0] = int(r);",
    I + "using BS = cub::BlockScan<int, 128>; __shared__ BS::TempStorage t; int r; BS(t).ExclusiveSum(iin[threadIdx.x], r); iout[threadIdx.x] = r;",
    I + "using BS = cub::BlockScan<long long, 128, cub::BLOCK_SCAN_WARP_SCANS>; __shared__ BS::TempStorage t; long long r; BS(t).InclusiveScan((long long)iin[threadIdx.x], r, cuda::minimum<>{}); iout[threadIdx.x] = int(r);",
    I + "using WR = cub::WarpReduce<int>; __shared__ WR::TempStorage t[4]; int r = WR(t[threadIdx.x / 32]).Sum(iin[threadIdx.x]); iout[threadIdx.x] = r;",
    I + "using WS = cub::WarpScan<unsigned>; __shared__ WS::TempStorage t[4]; unsigned r; WS(t[threadIdx.x / 32]).InclusiveSum(unsigned(iin[threadIdx.x]), r); iout[threadIdx.x] = int(r);",
    I + "using RS = cub::BlockRadixSort<int, 128, 4>; __shared__ RS::TempStorage t; int k[4]; for (int i = 0; i < 4; ++i) k[i] = iin[threadIdx.x * 4 + i]; RS(t).Sort(k); for (int i = 0; i < 4; ++i) iout[threadIdx.x * 4 + i] = k[i];",
    F + "using RS = cub::BlockRadixSort<float, 128, 2, int>; __shared__ RS::TempStorage t; float k[2]; int v[2]; for (int i = 0; i < 2; ++i) { k[i] = fin[threadIdx.x * 2 + i]; v[i] = i; } RS(t).SortDescending(k, v); fout[threadIdx.x] = k[0] + v[1];",
    I + "using BL = cub::BlockLoad<int, 128, 4, cub::BLOCK_LOAD_TRANSPOSE>; using BSt = cub::BlockStore<int, 128, 4, cub::BLOCK_STORE_WARP_TRANSPOSE>; __shared__ union { BL::TempStorage l; BSt::TempStorage s; } t; int d[4]; BL(t.l).Load(iin, d); __syncthreads(); BSt(t.s).Store(iout, d);",
    I + "using BL = cub::BlockLoad<int, 128, 4, cub::BLOCK_LOAD_VECTORIZE>; int d[4]; BL().Load(iin, d, 300); iout[threadIdx.x] = d[0] + d[3];",
    I + "using BH = cub::BlockHistogram<unsigned char, 128, 4, 256>; __shared__ BH::TempStorage t; __shared__ unsigned h[256]; unsigned char s[4]; for (int i = 0; i < 4; ++i) s[i] = in[threadIdx.x * 4 + i]; BH(t).Histogram(s, h); __syncthreads(); iout[threadIdx.x] = h[threadIdx.x];",
    I + "using BE = cub::BlockExchange<int, 128, 4>; __shared__ BE::TempStorage t; int d[4]; for (int i = 0; i < 4; ++i) d[i] = iin[threadIdx.x * 4 + i]; BE(t).StripedToBlocked(d); iout[threadIdx.x] = d[1];",
    I + "using BD = cub::BlockDiscontinuity<int, 128>; __shared__ BD::TempStorage t; int d[2] = {iin[threadIdx.x], iin[threadIdx.x + 1]}; int f[2]; BD(t).FlagHeads(f, d, cuda::std::not_equal_to<>{}); iout[threadIdx.x] = f[0] + f[1];",
    I + "using BAS = cub::BlockAdjacentDifference<int, 128>; __shared__ BAS::TempStorage t; int d[2] = {iin[threadIdx.x], iin[threadIdx.x + 1]}; int o[2]; BAS(t).SubtractLeft(d, o, cuda::std::minus<>{}); iout[threadIdx.x] = o[0];",
    "HOST: int* d = nullptr; size_t bytes = 0; cub::DeviceReduce::Sum(nullptr, bytes, d, d, 100);",
    "HOST: float* d = nullptr; size_t bytes = 0; cub::DeviceReduce::Max(nullptr, bytes, d, d, 100);",
    "HOST: double* d = nullptr; size_t bytes = 0; cub::DeviceScan::InclusiveSum(nullptr, bytes, d, d, 100);",
    "HOST: int* d = nullptr; size_t bytes = 0; cub::DeviceScan::ExclusiveSum(nullptr, bytes, d, d, 100);",
    "HOST: unsigned* k = nullptr; size_t bytes = 0; cub::DeviceRadixSort::SortKeys(nullptr, bytes, k, k, 100);",
    "HOST: float* k = nullptr; int* v = nullptr; size_t bytes = 0; cub::DeviceRadixSort::SortPairs(nullptr, bytes, k, k, v, v, 100);",
    "HOST: unsigned long long* k = nullptr; size_t bytes = 0; cub::DeviceRadixSort::SortKeysDescending(nullptr, bytes, k, k, 100);",
    "HOST: int* d = nullptr; int* n = nullptr; size_t bytes = 0; cub::DeviceSelect::If(nullptr, bytes, d, d, n, 100, [] __device__(int x) { return x > 0; });",
    "HOST: int* d = nullptr; int* n = nullptr; size_t bytes = 0; cub::DeviceSelect::Unique(nullptr, bytes, d, d, n, 100);",
    "HOST: int* d = nullptr; int* c = nullptr; int* n = nullptr; size_t bytes = 0; cub::DeviceRunLengthEncode::Encode(nullptr, bytes, d, d, c, n, 100);",
    "HOST: float* d = nullptr; int* h = nullptr; size_t bytes = 0; cub::DeviceHistogram::HistogramEven(nullptr, bytes, d, h, 11, 0.0f, 1.0f, 100);",
    "HOST: int* d = nullptr; int* o = nullptr; size_t bytes = 0; cub::DeviceSegmentedReduce::Sum(nullptr, bytes, d, d, 4, o, o + 1);",
    "HOST: int* k = nullptr; int* v = nullptr; int* o = nullptr; size_t bytes = 0; cub::DeviceSegmentedRadixSort::SortPairs(nullptr, bytes, k, k, v, v, 100, 4, o, o + 1);",
    "HOST: int* d = nullptr; size_t bytes = 0; cub::DeviceMergeSort::SortKeys(nullptr, bytes, d, 100, cuda::std::less<int>{});",
    "HOST: int* d = nullptr; cub::DeviceFor::ForEachN(d, 100, [] __device__(int& x) { x += 1; });",
    "HOST: int* k = nullptr; int* o = nullptr; int* n = nullptr; size_t bytes = 0; cub::DeviceReduce::ReduceByKey(nullptr, bytes, k, k, k, o, n, cuda::std::plus<int>{}, 100);",
]

THRUST = [
    "HOST: thrust::device_ptr<int> p; thrust::sort(thrust::device, p, p + 100);",
    "HOST: thrust::device_ptr<float> p; thrust::sort(thrust::device, p, p + 100, thrust::greater<float>());",
    "HOST: thrust::device_ptr<int> k; thrust::device_ptr<double> v; thrust::sort_by_key(thrust::device, k, k + 100, v);",
    "HOST: thrust::device_ptr<int> p; volatile int r = thrust::reduce(thrust::device, p, p + 100);",
    "HOST: thrust::device_ptr<double> p; volatile double r = thrust::reduce(thrust::device, p, p + 100, 0.0, thrust::maximum<double>());",
    "HOST: thrust::device_ptr<int> p; thrust::inclusive_scan(thrust::device, p, p + 100, p);",
    "HOST: thrust::device_ptr<float> p; thrust::exclusive_scan(thrust::device, p, p + 100, p, 1.0f);",
    "HOST: thrust::device_ptr<int> p; thrust::transform(thrust::device, p, p + 100, p, [] __device__(int x) { return 2 * x; });",
    "HOST: thrust::device_ptr<float> a, b; thrust::transform(thrust::device, a, a + 100, b, a, thrust::plus<float>());",
    "HOST: thrust::device_ptr<int> p; volatile auto n = thrust::copy_if(thrust::device, p, p + 100, p, [] __device__(int x) { return x & 1; });",
    "HOST: thrust::device_ptr<int> p; volatile auto e = thrust::unique(thrust::device, p, p + 100);",
    "HOST: thrust::device_ptr<int> p; volatile auto n = thrust::count(thrust::device, p, p + 100, 3);",
    "HOST: thrust::device_ptr<float> p; thrust::fill(thrust::device, p, p + 100, 1.5f); thrust::sequence(thrust::device, p, p + 100);",
    "HOST: thrust::device_ptr<int> a, b; volatile int r = thrust::inner_product(thrust::device, a, a + 100, b, 0);",
    "HOST: thrust::device_ptr<int> k, v, ok, ov; thrust::reduce_by_key(thrust::device, k, k + 100, v, ok, ov);",
    "HOST: thrust::device_ptr<int> a, b, c; thrust::merge(thrust::device, a, a + 50, b, b + 50, c);",
    "HOST: thrust::device_ptr<int> a, b; volatile auto r = thrust::lower_bound(thrust::device, a, a + 100, 5);",
    "HOST: thrust::device_ptr<int> p; volatile auto r = thrust::min_element(thrust::device, p, p + 100);",
    "HOST: thrust::device_ptr<int> p; thrust::for_each(thrust::device, p, p + 100, [] __device__(int& x) { x *= 3; });",
    "HOST: thrust::device_ptr<int> p; thrust::gather(thrust::device, p, p + 50, p, p + 50);",
]

GROUPS = {
    "cooperative_groups": ("#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\n#include <cooperative_groups/scan.h>\n#include <cooperative_groups/memcpy_async.h>", COOPERATIVE_GROUPS),
    "cuda_std": ("#include <cuda/atomic>\n#include <cuda/std/atomic>\n#include <cuda/barrier>\n#include <cuda/semaphore>\n#include <cuda/std/semaphore>\n#include <cuda/latch>\n#include <cuda/std/latch>\n#include <cuda/pipeline>\n#include <cooperative_groups.h>", CUDA_STD),
    "cuda_ptx": ("#include <cuda/ptx>\n#include <cstdint>", CUDA_PTX),
    "cub": ("#include <cub/cub.cuh>", CUB),
    "thrust": ("#include <thrust/device_ptr.h>\n#include <thrust/execution_policy.h>\n#include <thrust/sort.h>\n#include <thrust/reduce.h>\n#include <thrust/scan.h>\n#include <thrust/transform.h>\n#include <thrust/copy.h>\n#include <thrust/unique.h>\n#include <thrust/count.h>\n#include <thrust/fill.h>\n#include <thrust/sequence.h>\n#include <thrust/inner_product.h>\n#include <thrust/merge.h>\n#include <thrust/binary_search.h>\n#include <thrust/extrema.h>\n#include <thrust/for_each.h>\n#include <thrust/gather.h>\n#include <thrust/functional.h>", THRUST),
}
