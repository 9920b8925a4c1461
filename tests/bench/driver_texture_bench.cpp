// Texture fetches through the driver (issue 21, item 5): a kernel that reads every texel of a 2D float texture
// once through tex.2d (normalised coordinates, wrap addressing), with linear filtering (the goal: within 5x of
// native code doing the same filtering) and with point sampling (what simplePitchLinearTexture does), beside a
// native C++ loop computing the same values (the texture unit's 8-bit filter weights). Both run on one host thread
// (CUEMU_THREADS=1 is set here); ratio = interpreter time / native time, in the same run. The results are compared
// too: a benchmark whose values differ from the native ones stops with an error.
//   driver_texture_bench [--benchmark_filter=...]
#include <cuda.h>

#include <benchmark/benchmark.h>

#include "driver_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

const char* kFetch = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry fetch(.param .u64 tex, .param .u64 out, .param .u32 w, .param .u32 h)
{
  .reg .b32 %r<10>;
  .reg .f32 %f<12>;
  .reg .b64 %rd<6>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [tex];
  ld.param.u64 %rd2, [out];
  ld.param.u32 %r1, [w];
  ld.param.u32 %r2, [h];
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %tid.x;
  mad.lo.s32 %r6, %r3, %r4, %r5;
  mov.u32 %r7, %ctaid.y;
  setp.ge.u32 %p1, %r6, %r1;
  @%p1 bra DONE;
  cvt.rn.f32.u32 %f1, %r6;
  add.f32 %f1, %f1, 0f3E99999A;
  cvt.rn.f32.u32 %f2, %r1;
  div.rn.f32 %f3, %f1, %f2;
  cvt.rn.f32.u32 %f4, %r7;
  add.f32 %f4, %f4, 0f3F333333;
  cvt.rn.f32.u32 %f5, %r2;
  div.rn.f32 %f6, %f4, %f5;
  tex.2d.v4.f32.f32 {%f7, %f8, %f9, %f10}, [%rd1, {%f3, %f6}];
  mad.lo.s32 %r8, %r7, %r1, %r6;
  mul.wide.u32 %rd3, %r8, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.f32 [%rd4], %f7;
DONE:
  ret;
}
)";

using driver_bench::check;
constexpr unsigned kWidth = 1024, kHeight = 1024;

long wrap(long i, long n) { return ((i % n) + n) % n; }

// The same values the kernel computes, natively: the coordinates as the kernel forms them, then the texture
// unit's point or linear (weights in 1.8 fixed point) sampling with wrap addressing.
__attribute__((noinline)) void nativeFetch(const float* texels, float* out, bool linear) {
  for (unsigned y = 0; y < kHeight; ++y)
    for (unsigned x = 0; x < kWidth; ++x) {
      float s = (float(x) + 0.3f) / float(kWidth), t = (float(y) + 0.7f) / float(kHeight);
      float u = s * float(kWidth), v = t * float(kHeight);
      float value;
      if (!linear) {
        value = texels[wrap(long(std::floor(v)), kHeight) * kWidth + wrap(long(std::floor(u)), kWidth)];
      } else {
        float uu = u - 0.5f, vv = v - 0.5f, fu = std::floor(uu), fv = std::floor(vv);
        float a = std::round((uu - fu) * 256.0f) / 256.0f, b = std::round((vv - fv) * 256.0f) / 256.0f;
        long i0 = wrap(long(fu), kWidth), i1 = wrap(long(fu) + 1, kWidth);
        long j0 = wrap(long(fv), kHeight), j1 = wrap(long(fv) + 1, kHeight);
        value = 0.0f;
        value += (1.0f - a) * (1.0f - b) * texels[j0 * kWidth + i0];
        value += a * (1.0f - b) * texels[j0 * kWidth + i1];
        value += (1.0f - a) * b * texels[j1 * kWidth + i0];
        value += a * b * texels[j1 * kWidth + i1];
      }
      out[y * kWidth + x] = value;
    }
}

double seconds(const auto& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void BM_Texture2D(benchmark::State& state) {
  const bool linear = state.range(0) != 0;
  static CUfunction function = driver_bench::loadKernel(kFetch, "fetch");
  std::vector<float> texels(size_t(kWidth) * kHeight);
  for (size_t i = 0; i < texels.size(); ++i) texels[i] = float((i * 2654435761u) % 1000) / 7.0f;
  CUDA_ARRAY_DESCRIPTOR desc{};
  desc.Width = kWidth;
  desc.Height = kHeight;
  desc.Format = CU_AD_FORMAT_FLOAT;
  desc.NumChannels = 1;
  CUarray array = nullptr;
  check(cuArrayCreate(&array, &desc), "cuArrayCreate");
  CUDA_MEMCPY2D copy{};
  copy.srcMemoryType = CU_MEMORYTYPE_HOST;
  copy.srcHost = texels.data();
  copy.srcPitch = kWidth * sizeof(float);
  copy.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  copy.dstArray = array;
  copy.WidthInBytes = kWidth * sizeof(float);
  copy.Height = kHeight;
  check(cuMemcpy2D(&copy), "cuMemcpy2D");
  CUDA_RESOURCE_DESC resource{};
  resource.resType = CU_RESOURCE_TYPE_ARRAY;
  resource.res.array.hArray = array;
  CUDA_TEXTURE_DESC texture{};
  texture.addressMode[0] = texture.addressMode[1] = CU_TR_ADDRESS_MODE_WRAP;
  texture.filterMode = linear ? CU_TR_FILTER_MODE_LINEAR : CU_TR_FILTER_MODE_POINT;
  texture.flags = CU_TRSF_NORMALIZED_COORDINATES;
  CUtexObject tex = 0;
  check(cuTexObjectCreate(&tex, &resource, &texture, nullptr), "cuTexObjectCreate");
  CUdeviceptr out = 0;
  check(cuMemAlloc(&out, texels.size() * sizeof(float)), "cuMemAlloc");
  std::vector<float> expected(texels.size()), got(texels.size());
  double native = 1e30;
  for (int i = 0; i < 3; ++i)
    native = std::min(native, seconds([&] { nativeFetch(texels.data(), expected.data(), linear); }));
  unsigned w = kWidth, h = kHeight;
  void* args[] = {&tex, &out, &w, &h};
  double best = 1e30;
  for (auto _ : state) {
    double t = seconds([&] {
      check(cuLaunchKernel(function, kWidth / 256, kHeight, 1, 256, 1, 1, 0, nullptr, args, nullptr), "cuLaunchKernel");
      check(cuCtxSynchronize(), "cuCtxSynchronize");
    });
    best = std::min(best, t);
    state.SetIterationTime(t);
  }
  check(cuMemcpyDtoH(got.data(), out, got.size() * sizeof(float)), "cuMemcpyDtoH");
  if (std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)) != 0) {
    size_t i = 0;
    while (got[i] == expected[i]) ++i;
    std::fprintf(stderr, "texel %zu: kernel %.9g, native %.9g\n", i, double(got[i]), double(expected[i]));
    state.SkipWithError("the kernel's values differ from the native ones");
  }
  state.counters["native_ms"] = native * 1e3;
  state.counters["interp_ms"] = best * 1e3;
  state.counters["ratio"] = best / native;
  state.counters["ns_per_fetch"] = best * 1e9 / double(texels.size());
  cuMemFree(out);
  cuTexObjectDestroy(tex);
  cuArrayDestroy(array);
}

BENCHMARK(BM_Texture2D)->ArgName("linear")->Arg(0)->Arg(1)->UseManualTime()->MinTime(0.3);

}  // namespace

int main(int argc, char** argv) {
  setenv("CUEMU_THREADS", "1", 0);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
