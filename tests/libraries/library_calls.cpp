// NVIDIA's math libraries called through their C APIs with fixed inputs and seeds. The same binary records the
// results on a GPU and checks cuemu's against that record:
//
//   library-calls record FILE [CASE]   run every case, write FILE (recorded/nvidia-h100.txt); with CASE, append
//                                      that case's result only
//   library-calls check FILE CASE      run one case, compare with FILE's record of it; exit 0 and print "PASS CASE"
//   library-calls exact CASE           run one case whose exact result the host computes (integer GEMMs), compare
//                                      bit for bit with that
//   library-calls run CASE             run one case, say whether it succeeded (no comparison)
//   library-calls list                 the case names
//
// Record format, one block per case: "case NAME KIND COUNT" then COUNT 32-bit words in hex (the bit patterns of
// f32 or i32 results, f16/bf16 results widened to f32, exactly; an f64 result is two words, low then high), or
// "error NAME message" where the GPU refused.
//
// Inputs are generated on the host by a fixed linear congruential generator. The GEMM, SpMV/SpMM inputs are
// multiples of 1/4 in [-1, 1]: every product is a multiple of 1/16 and every partial sum of up to 64 of them is
// at most 64 in magnitude, which f32 (24 bits), f16 (11 bits) and every accumulation order represent exactly.
// Those results must therefore match the GPU bit for bit whatever blocking and order a kernel uses (tensor
// cores included: the inputs are exact in f16, bf16 and tf32). One case ("sgemm.general") takes arbitrary
// floats to exercise rounding, with the tolerance its accumulation order allows (see check()).
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cufft.h>
#include <curand.h>
#include <cusolverDn.h>
#include <cusparse.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Failure {
  std::string message;
};

#define CHECK_CUDA(call)                                                                                 \
  do {                                                                                                   \
    cudaError_t e_ = (call);                                                                             \
    if (e_ != cudaSuccess)                                                                               \
      throw Failure{std::string(#call) + " -> " + cudaGetErrorName(e_) + ": " + cudaGetErrorString(e_)}; \
  } while (0)
#define CHECK_STATUS(call, success)                                                                   \
  do {                                                                                                \
    auto s_ = (call);                                                                                 \
    if (s_ != (success)) throw Failure{std::string(#call) + " -> status " + std::to_string(int(s_))}; \
  } while (0)
#define CHECK_CUBLAS(call) CHECK_STATUS(call, CUBLAS_STATUS_SUCCESS)
#define CHECK_CURAND(call) CHECK_STATUS(call, CURAND_STATUS_SUCCESS)
#define CHECK_CUSPARSE(call) CHECK_STATUS(call, CUSPARSE_STATUS_SUCCESS)
#define CHECK_CUFFT(call) CHECK_STATUS(call, CUFFT_SUCCESS)
#define CHECK_CUSOLVER(call) CHECK_STATUS(call, CUSOLVER_STATUS_SUCCESS)

// Results of one case: 32-bit words and how they compare.
struct Result {
  enum class Kind { F32, I32, F64 } kind = Kind::F32;
  std::vector<uint32_t> words;
  // Allowed |got - want| for element i (F32 and F64); empty: bit-exact.
  std::vector<double> tolerance;
  // The result computed on the host, where it is exact whatever the device's order (integer GEMMs); else empty.
  std::vector<uint32_t> exact;
};

const char* kindName(Result::Kind kind) {
  return kind == Result::Kind::I32 ? "i32" : kind == Result::Kind::F64 ? "f64" : "f32";
}
size_t wordsPerValue(Result::Kind kind) { return kind == Result::Kind::F64 ? 2 : 1; }

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

Result floats(const std::vector<float>& v) {
  Result r;
  for (float f : v) r.words.push_back(bitsOf(f));
  return r;
}

Result doubles(const std::vector<double>& v) {
  Result r;
  r.kind = Result::Kind::F64;
  for (double d : v) {
    uint64_t u;
    std::memcpy(&u, &d, 8);
    r.words.push_back(uint32_t(u));
    r.words.push_back(uint32_t(u >> 32));
  }
  return r;
}

// Element i of a result as a double (F32 and F64 kinds).
double valueAt(const Result& r, size_t i) {
  if (r.kind == Result::Kind::F64) {
    uint64_t u = uint64_t(r.words[2 * i]) | uint64_t(r.words[2 * i + 1]) << 32;
    double d;
    std::memcpy(&d, &u, 8);
    return d;
  }
  return double(floatOf(r.words[i]));
}

// Fixed pseudo-random inputs (Knuth's MMIX LCG).
struct Lcg {
  uint64_t state;
  explicit Lcg(uint64_t seed) : state(seed) {}
  uint32_t next() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(state >> 33);
  }
  // A multiple of 1/4 in [-1, 1].
  float quarter() { return float(int(next() % 9) - 4) / 4.0f; }
  // Uniform in [-1, 1).
  float general() { return float(next() % 2000001) / 1000000.0f - 1.0f; }
};

std::vector<float> quarters(size_t n, uint64_t seed) {
  Lcg g(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = g.quarter();
  return v;
}

template <typename T> struct DeviceBuffer {
  T* ptr = nullptr;
  size_t count = 0;
  explicit DeviceBuffer(size_t n) : count(n) { CHECK_CUDA(cudaMalloc(&ptr, n * sizeof(T))); }
  DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) {
    CHECK_CUDA(cudaMemcpy(ptr, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  std::vector<T> read() const {
    std::vector<T> host(count);
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMemcpy(host.data(), ptr, count * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }
};

// ---- cuRAND ----------------------------------------------------------------------------------------------------

constexpr size_t kRandomCount = 4096;

Result curandCase(curandRngType_t type, bool normal) {
  curandGenerator_t gen;
  CHECK_CURAND(curandCreateGenerator(&gen, type));
  CHECK_CURAND(curandSetPseudoRandomGeneratorSeed(gen, 1234));
  DeviceBuffer<float> out(kRandomCount);
  if (normal)
    CHECK_CURAND(curandGenerateNormal(gen, out.ptr, kRandomCount, 0.0f, 1.0f));
  else
    CHECK_CURAND(curandGenerateUniform(gen, out.ptr, kRandomCount));
  auto host = out.read();
  curandDestroyGenerator(gen);
  Result r = floats(host);
  // Uniform: the generator's integer output scaled to (0, 1], bit-exact by construction. Normal: the Box-Muller
  // transform, z0, z1 = r cos t, r sin t with r = sqrt(-2 ln u), computed by each device's approximate log2, sine and
  // cosine (cuRAND's kernels use lg2.approx, sin.approx, cos.approx), whose last bits differ between the GPU's
  // special function unit and cuemu. The PTX ISA bounds their absolute error: 2^-20.5 for sin/cos on [-pi, pi],
  // 2^-22.6 for lg2 near 1, which reaches r as 2 ln 2 * 2^-22.6 / (2r) < 2^-22.1 / r. Each of z0, z1 may thus be off
  // by 2^-20.5 r + 2^-22.1 / r on either device: the tolerance is twice that, doubled again for the rounding of the
  // square root and the products (r from the output pair itself; measured worst: a quarter of it).
  if (normal)
    for (size_t i = 0; i < host.size(); ++i) {
      double radius = std::max(std::hypot(double(host[i & ~size_t(1)]), double(host[i | 1])), 1e-30);
      r.tolerance.push_back(4.0 * (std::pow(2.0, -20.5) * radius + std::pow(2.0, -22.1) / radius));
    }
  return r;
}

// ---- cuSPARSE --------------------------------------------------------------------------------------------------

struct Csr {
  int rows, cols;
  std::vector<int> offsets, columns;
  std::vector<float> values;
};

// 256 x 256, 0..15 nonzeros per row at pseudo-random columns, quarter values.
Csr sparseMatrix() {
  Csr m{256, 256, {0}, {}, {}};
  Lcg g(77);
  for (int r = 0; r < m.rows; ++r) {
    int n = int(g.next() % 16);
    std::vector<bool> used(m.cols, false);
    for (int i = 0; i < n; ++i) {
      int c = int(g.next() % m.cols);
      if (!used[c]) used[c] = true;
    }
    for (int c = 0; c < m.cols; ++c)
      if (used[c]) {
        m.columns.push_back(c);
        float v = g.quarter();
        m.values.push_back(v == 0.0f ? 0.5f : v);
      }
    m.offsets.push_back(int(m.columns.size()));
  }
  return m;
}

Result spmvCase() {
  Csr a = sparseMatrix();
  auto x = quarters(a.cols, 5);
  auto y0 = quarters(a.rows, 6);
  DeviceBuffer<int> offsets(a.offsets), columns(a.columns);
  DeviceBuffer<float> values(a.values), dx(x), dy(y0);
  cusparseHandle_t handle;
  CHECK_CUSPARSE(cusparseCreate(&handle));
  cusparseSpMatDescr_t mat;
  cusparseDnVecDescr_t vx, vy;
  CHECK_CUSPARSE(cusparseCreateCsr(&mat, a.rows, a.cols, int64_t(a.values.size()), offsets.ptr, columns.ptr, values.ptr,
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  CHECK_CUSPARSE(cusparseCreateDnVec(&vx, a.cols, dx.ptr, CUDA_R_32F));
  CHECK_CUSPARSE(cusparseCreateDnVec(&vy, a.rows, dy.ptr, CUDA_R_32F));
  float alpha = 2.0f, beta = -1.0f;
  size_t bytes = 0;
  CHECK_CUSPARSE(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat, vx, &beta, vy,
                                         CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
  DeviceBuffer<char> work(bytes ? bytes : 1);
  CHECK_CUSPARSE(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat, vx, &beta, vy, CUDA_R_32F,
                              CUSPARSE_SPMV_ALG_DEFAULT, work.ptr));
  auto y = dy.read();
  cusparseDestroySpMat(mat);
  cusparseDestroyDnVec(vx);
  cusparseDestroyDnVec(vy);
  cusparseDestroy(handle);
  return floats(y);
}

Result spmmCase() {
  Csr a = sparseMatrix();
  const int n = 16;
  auto b = quarters(size_t(a.cols) * n, 7);
  auto c0 = quarters(size_t(a.rows) * n, 8);
  DeviceBuffer<int> offsets(a.offsets), columns(a.columns);
  DeviceBuffer<float> values(a.values), db(b), dc(c0);
  cusparseHandle_t handle;
  CHECK_CUSPARSE(cusparseCreate(&handle));
  cusparseSpMatDescr_t mat;
  cusparseDnMatDescr_t mb, mc;
  CHECK_CUSPARSE(cusparseCreateCsr(&mat, a.rows, a.cols, int64_t(a.values.size()), offsets.ptr, columns.ptr, values.ptr,
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  CHECK_CUSPARSE(cusparseCreateDnMat(&mb, a.cols, n, a.cols, db.ptr, CUDA_R_32F, CUSPARSE_ORDER_COL));
  CHECK_CUSPARSE(cusparseCreateDnMat(&mc, a.rows, n, a.rows, dc.ptr, CUDA_R_32F, CUSPARSE_ORDER_COL));
  float alpha = 1.0f, beta = 0.5f;
  size_t bytes = 0;
  CHECK_CUSPARSE(cusparseSpMM_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                         &alpha, mat, mb, &beta, mc, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &bytes));
  DeviceBuffer<char> work(bytes ? bytes : 1);
  CHECK_CUSPARSE(cusparseSpMM(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat,
                              mb, &beta, mc, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, work.ptr));
  auto c = dc.read();
  cusparseDestroySpMat(mat);
  cusparseDestroyDnMat(mb);
  cusparseDestroyDnMat(mc);
  cusparseDestroy(handle);
  return floats(c);
}

// ---- cuFFT -----------------------------------------------------------------------------------------------------

// A transform's result depends on its kernels' radix order and twiddle factors (the GPU runs cuFFT's SASS, cuemu
// its compute_120 PTX), so each output may differ by the classic FFT bound: relative L2 error below
// log2(n) * 2^-24 per pass, with |y_k| <= ||y||_2 = sqrt(n) ||x||_2; tolerance 2 log2(n) 2^-24 sqrt(n) ||x||_2,
// doubled because both devices' results carry such an error.
std::vector<double> fftTolerance(const std::vector<float>& input, size_t n, size_t outputs) {
  double norm = 0;
  for (float v : input) norm += double(v) * v;
  double allowed = 2.0 * 2.0 * std::log2(double(n)) * std::ldexp(1.0, -24) * std::sqrt(double(n) * norm);
  return std::vector<double>(outputs, allowed);
}

struct FftPlan {
  cufftHandle plan = 0;
  ~FftPlan() { cufftDestroy(plan); }
};

// Complex-to-complex, forward, in place: `batch` transforms of the given shape (1 or 2 dimensions).
Result fftC2cCase(std::vector<int> shape, int batch, uint64_t seed) {
  size_t n = 1;
  for (int d : shape) n *= size_t(d);
  auto x = quarters(2 * n * size_t(batch), seed);
  DeviceBuffer<float> data(x);
  FftPlan p;
  CHECK_CUFFT(cufftPlanMany(&p.plan, int(shape.size()), shape.data(), nullptr, 1, 0, nullptr, 1, 0, CUFFT_C2C, batch));
  CHECK_CUFFT(cufftExecC2C(p.plan, reinterpret_cast<cufftComplex*>(data.ptr), reinterpret_cast<cufftComplex*>(data.ptr),
                           CUFFT_FORWARD));
  Result r = floats(data.read());
  r.tolerance = fftTolerance(x, n, r.words.size());
  return r;
}

// Real-to-complex, forward, out of place (n/2+1 outputs), then complex-to-real back (unnormalised: n * x).
Result fftR2cC2rCase(int n, uint64_t seed) {
  auto x = quarters(size_t(n), seed);
  DeviceBuffer<float> in(x), spectrum{2 * size_t(n / 2 + 1)}, back{size_t(n)};
  FftPlan forward, inverse;
  CHECK_CUFFT(cufftPlan1d(&forward.plan, n, CUFFT_R2C, 1));
  CHECK_CUFFT(cufftPlan1d(&inverse.plan, n, CUFFT_C2R, 1));
  CHECK_CUFFT(cufftExecR2C(forward.plan, in.ptr, reinterpret_cast<cufftComplex*>(spectrum.ptr)));
  CHECK_CUFFT(cufftExecC2R(inverse.plan, reinterpret_cast<cufftComplex*>(spectrum.ptr), back.ptr));
  auto s = spectrum.read();
  auto b = back.read();
  s.insert(s.end(), b.begin(), b.end());
  Result r = floats(s);
  r.tolerance = fftTolerance(x, size_t(n), s.size() - b.size());
  // The round trip passes through two transforms: twice the bound, scaled by n (the unnormalised inverse).
  for (size_t i = 0; i < b.size(); ++i) r.tolerance.push_back(2.0 * std::sqrt(double(n)) * r.tolerance[0]);
  return r;
}

// ---- cuBLAS ----------------------------------------------------------------------------------------------------

// C (m x n) = alpha * op(A) * op(B) + beta * C, column-major; A is m x k, B is k x n.
constexpr int kM = 64, kN = 48, kK = 40;

struct Blas {
  cublasHandle_t handle;
  Blas() { CHECK_CUBLAS(cublasCreate(&handle)); }
  ~Blas() { cublasDestroy(handle); }
};

Result sgemmCase() {
  auto a = quarters(kM * kK, 11), b = quarters(kK * kN, 12), c0 = quarters(kM * kN, 13);
  DeviceBuffer<float> da(a), db(b), dc(c0);
  Blas blas;
  float alpha = 1.0f, beta = 0.5f;
  CHECK_CUBLAS(cublasSgemm(blas.handle, CUBLAS_OP_N, CUBLAS_OP_N, kM, kN, kK, &alpha, da.ptr, kM, db.ptr, kK, &beta,
                           dc.ptr, kM));
  return floats(dc.read());
}

// Arbitrary floats: the result depends on the accumulation order. Each element's error bound is the classic
// one for a k-term dot product in f32, k * 2^-24 * sum|a_i b_i| (plus beta*c's rounding), doubled because both
// the GPU's and cuemu's results carry it.
Result sgemmGeneralCase() {
  Lcg g(21);
  std::vector<float> a(kM * kK), b(kK * kN);
  for (auto& x : a) x = g.general();
  for (auto& x : b) x = g.general();
  DeviceBuffer<float> da(a), db(b), dc(size_t(kM) * kN);
  CHECK_CUDA(cudaMemset(dc.ptr, 0, sizeof(float) * kM * kN));
  Blas blas;
  float alpha = 1.0f, beta = 0.0f;
  CHECK_CUBLAS(cublasSgemm(blas.handle, CUBLAS_OP_T, CUBLAS_OP_N, kM, kN, kK, &alpha, da.ptr, kK, db.ptr, kK, &beta,
                           dc.ptr, kM));
  Result r = floats(dc.read());
  for (int j = 0; j < kN; ++j)
    for (int i = 0; i < kM; ++i) {
      double s = 0;
      for (int p = 0; p < kK; ++p) s += std::fabs(double(a[i * kK + p]) * b[j * kK + p]);
      r.tolerance.push_back(2.0 * kK * std::ldexp(1.0, -24) * s);
    }
  return r;
}

Result hgemmCase() {
  auto a = quarters(kM * kK, 14), b = quarters(kK * kN, 15), c0 = quarters(kM * kN, 16);
  auto toHalf = [](const std::vector<float>& v) {
    std::vector<__half> h;
    for (float f : v) h.push_back(__float2half(f));
    return h;
  };
  DeviceBuffer<__half> da(toHalf(a)), db(toHalf(b)), dc(toHalf(c0));
  Blas blas;
  __half alpha = __float2half(1.0f), beta = __float2half(-1.0f);
  CHECK_CUBLAS(cublasHgemm(blas.handle, CUBLAS_OP_N, CUBLAS_OP_T, kM, kN, kK, &alpha, da.ptr, kM, db.ptr, kN, &beta,
                           dc.ptr, kM));
  std::vector<float> c;
  for (__half h : dc.read()) c.push_back(__half2float(h));
  return floats(c);
}

// cublasGemmEx with A, B of `inType`, C of `outType`, computed as `compute`.
template <typename In, typename Out> Result gemmExCase(cudaDataType inType, cudaDataType outType,
                                                       cublasComputeType_t compute, uint64_t seed, In (*convert)(float),
                                                       float (*widen)(Out)) {
  auto a = quarters(kM * kK, seed), b = quarters(kK * kN, seed + 1);
  std::vector<In> ha, hb;
  for (float f : a) ha.push_back(convert(f));
  for (float f : b) hb.push_back(convert(f));
  DeviceBuffer<In> da(ha), db(hb);
  DeviceBuffer<Out> dc(size_t(kM) * kN);
  CHECK_CUDA(cudaMemset(dc.ptr, 0, sizeof(Out) * kM * kN));
  Blas blas;
  Result r;
  if (compute == CUBLAS_COMPUTE_32I) {
    int32_t alpha = 1, beta = 0;
    CHECK_CUBLAS(cublasGemmEx(blas.handle, CUBLAS_OP_T, CUBLAS_OP_N, kM, kN, kK, &alpha, da.ptr, inType, kK, db.ptr,
                              inType, kK, &beta, dc.ptr, outType, kM, compute, CUBLAS_GEMM_DEFAULT));
    r.kind = Result::Kind::I32;
  } else {
    float alpha = 2.0f, beta = 0.0f;
    CHECK_CUBLAS(cublasGemmEx(blas.handle, CUBLAS_OP_N, CUBLAS_OP_N, kM, kN, kK, &alpha, da.ptr, inType, kM, db.ptr,
                              inType, kK, &beta, dc.ptr, outType, kM, compute, CUBLAS_GEMM_DEFAULT));
  }
  for (Out v : dc.read()) {
    float f = widen(v);
    r.words.push_back(compute == CUBLAS_COMPUTE_32I ? uint32_t(int32_t(f)) : bitsOf(f));
  }
  return r;
}

__half toHalf(float f) { return __float2half(f); }
__nv_bfloat16 toBf16(float f) { return __float2bfloat16(f); }
float same(float f) { return f; }
int8_t toInt8(float f) { return int8_t(f * 4.0f); }  // the quarters as integers -4..4
float fromInt32(int32_t v) { return float(v); }

// int8 operands of an m x n x k product with A transposed ("TN": k consecutive for each row of A and each column of
// B), the integers -4..4, and their product as the host computes it (Result::exact: exact whatever the order).
struct Int8Product {
  std::vector<int8_t> a, b;
  Result result;
};
Int8Product int8Product(int m, int n, int k, uint64_t seed) {
  Int8Product p;
  for (float f : quarters(size_t(k) * m, seed)) p.a.push_back(toInt8(f));
  for (float f : quarters(size_t(k) * n, seed + 1)) p.b.push_back(toInt8(f));
  p.result.kind = Result::Kind::I32;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      int32_t sum = 0;
      for (int q = 0; q < k; ++q) sum += int32_t(p.a[size_t(i) * k + q]) * int32_t(p.b[size_t(j) * k + q]);
      p.result.exact.push_back(uint32_t(sum));
    }
  return p;
}

// cublasGemmEx on int8 A, B (transposed A, as cuBLAS's integer kernels want: "TN"), int32 C, computed as 32-bit
// integers, of an m x n x k product: the integers -4..4 give results that are exact whatever the order, and the host
// computes them (Result::exact). Which kernel cuBLASLt takes depends on the shape (measured on the 12.x profiles,
// README "NVIDIA's math libraries"): 128 x 128 x 128 its cutlass wmma kernel for s8 (PTX), 64 x 16 x 40 its
// small-N kernel (gemmSN, PTX); 64 x 64 x 40 a kernel it ships as SASS only, and 64 x 48 x 40 none at all.
Result int8GemmExCase(int m, int n, int k, uint64_t seed) {
  Int8Product product = int8Product(m, n, k, seed);
  const std::vector<int8_t>&ha = product.a, &hb = product.b;
  Result r = std::move(product.result);
  DeviceBuffer<int8_t> da(ha), db(hb);
  DeviceBuffer<int32_t> dc(size_t(m) * n);
  CHECK_CUDA(cudaMemset(dc.ptr, 0, sizeof(int32_t) * m * n));
  Blas blas;
  int32_t alpha = 1, beta = 0;
  CHECK_CUBLAS(cublasGemmEx(blas.handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, da.ptr, CUDA_R_8I, k, db.ptr,
                            CUDA_R_8I, k, &beta, dc.ptr, CUDA_R_32I, m, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT));
  for (int32_t v : dc.read()) r.words.push_back(uint32_t(v));
  return r;
}

Result stridedBatchedCase() {
  constexpr int batch = 3;
  auto a = quarters(size_t(kM) * kK * batch, 31), b = quarters(size_t(kK) * kN * batch, 32);
  DeviceBuffer<float> da(a), db(b), dc(size_t(kM) * kN * batch);
  Blas blas;
  float alpha = 1.0f, beta = 0.0f;
  CHECK_CUBLAS(cublasSgemmStridedBatched(blas.handle, CUBLAS_OP_N, CUBLAS_OP_N, kM, kN, kK, &alpha, da.ptr, kM,
                                         int64_t(kM) * kK, db.ptr, kK, int64_t(kK) * kN, &beta, dc.ptr, kM,
                                         int64_t(kM) * kN, batch));
  return floats(dc.read());
}

Result batchedCase() {
  constexpr int batch = 3;
  auto a = quarters(size_t(kM) * kK * batch, 41), b = quarters(size_t(kK) * kN * batch, 42);
  DeviceBuffer<float> da(a), db(b), dc(size_t(kM) * kN * batch);
  std::vector<float*> pa, pb, pc;
  for (int i = 0; i < batch; ++i) {
    pa.push_back(da.ptr + size_t(i) * kM * kK);
    pb.push_back(db.ptr + size_t(i) * kK * kN);
    pc.push_back(dc.ptr + size_t(i) * kM * kN);
  }
  DeviceBuffer<float*> dpa(pa), dpb(pb), dpc(pc);
  Blas blas;
  float alpha = 1.0f, beta = 0.0f;
  CHECK_CUBLAS(cublasSgemmBatched(blas.handle, CUBLAS_OP_N, CUBLAS_OP_N, kM, kN, kK, &alpha, dpa.ptr, kM, dpb.ptr, kK,
                                  &beta, dpc.ptr, kM, batch));
  return floats(dc.read());
}

// cublasLtMatmul, f32, D = relu(A * B + bias) with the bias broadcast along columns.
Result ltMatmulReluBiasCase() {
  auto a = quarters(kM * kK, 51), b = quarters(kK * kN, 52), bias = quarters(kM, 53);
  DeviceBuffer<float> da(a), db(b), dbias(bias), dd(size_t(kM) * kN);
  cublasLtHandle_t lt;
  CHECK_CUBLAS(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t op;
  CHECK_CUBLAS(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_RELU_BIAS;
  CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue));
  const float* biasPtr = dbias.ptr;
  CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &biasPtr, sizeof biasPtr));
  cublasLtMatrixLayout_t la, lb, ld;
  CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, kM, kK, kM));
  CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, kK, kN, kK));
  CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, kM, kN, kM));
  cublasLtMatmulPreference_t pref;
  CHECK_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
  size_t workspaceBytes = 1 << 20;
  CHECK_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspaceBytes,
                                                    sizeof workspaceBytes));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  CHECK_CUBLAS(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &heuristic, &found));
  if (found == 0) throw Failure{"cublasLtMatmulAlgoGetHeuristic found no algorithm"};
  DeviceBuffer<char> workspace(workspaceBytes);
  float alpha = 1.0f, beta = 0.0f;
  CHECK_CUBLAS(cublasLtMatmul(lt, op, &alpha, da.ptr, la, db.ptr, lb, &beta, dd.ptr, ld, dd.ptr, ld, &heuristic.algo,
                              workspace.ptr, workspaceBytes, nullptr));
  auto d = dd.read();
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(op);
  cublasLtDestroy(lt);
  return floats(d);
}

// The int8 64 x 48 x 40 product that cublasGemmEx cannot do on compute capability 12.x (cuBLASLt's heuristics offer
// no algorithm there), through cublasLtMatmul with algorithm 64 chosen by hand: the cutlass wmma s8 kernel, which has
// compute_120 PTX, with a 128 x 128 tile of which the product fills only 64 x 48. Exact on the host.
Result ltMatmulInt8Algo64Case() {
  const int m = kM, n = kN, k = kK;
  Int8Product product = int8Product(m, n, k, 75);
  const std::vector<int8_t>&ha = product.a, &hb = product.b;
  Result r = std::move(product.result);
  DeviceBuffer<int8_t> da(ha), db(hb);
  DeviceBuffer<int32_t> dd(size_t(m) * n);
  CHECK_CUDA(cudaMemset(dd.ptr, 0, sizeof(int32_t) * m * n));
  cublasLtHandle_t lt;
  CHECK_CUBLAS(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t op;
  CHECK_CUBLAS(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32I, CUDA_R_32I));
  cublasOperation_t transA = CUBLAS_OP_T;
  CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &transA, sizeof transA));
  cublasLtMatrixLayout_t la, lb, ld;
  CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&la, CUDA_R_8I, k, m, k));
  CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8I, k, n, k));
  CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32I, m, n, m));
  cublasLtMatmulAlgo_t algo;
  CHECK_CUBLAS(cublasLtMatmulAlgoInit(lt, CUBLAS_COMPUTE_32I, CUDA_R_32I, CUDA_R_8I, CUDA_R_8I, CUDA_R_32I, CUDA_R_32I,
                                      64, &algo));
  int tile = CUBLASLT_MATMUL_TILE_128x128, stages = CUBLASLT_MATMUL_STAGES_32x2;
  CHECK_CUBLAS(cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile));
  CHECK_CUBLAS(cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages));
  cublasLtMatmulHeuristicResult_t check{};
  CHECK_CUBLAS(cublasLtMatmulAlgoCheck(lt, op, la, lb, ld, ld, &algo, &check));
  DeviceBuffer<char> workspace(std::max<size_t>(check.workspaceSize, 1));
  int32_t alpha = 1, beta = 0;
  CHECK_CUBLAS(cublasLtMatmul(lt, op, &alpha, da.ptr, la, db.ptr, lb, &beta, dd.ptr, ld, dd.ptr, ld, &algo,
                              workspace.ptr, check.workspaceSize, nullptr));
  for (int32_t v : dd.read()) r.words.push_back(uint32_t(v));
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(op);
  cublasLtDestroy(lt);
  return r;
}

Result dgemmCase() {
  auto a = quarters(kM * kK, 71), b = quarters(kK * kN, 72), c0 = quarters(kM * kN, 73);
  DeviceBuffer<double> da(std::vector<double>(a.begin(), a.end())), db(std::vector<double>(b.begin(), b.end())),
      dc(std::vector<double>(c0.begin(), c0.end()));
  Blas blas;
  double alpha = 1.0, beta = 0.5;
  CHECK_CUBLAS(cublasDgemm(blas.handle, CUBLAS_OP_N, CUBLAS_OP_N, kM, kN, kK, &alpha, da.ptr, kM, db.ptr, kK, &beta,
                           dc.ptr, kM));
  return doubles(dc.read());
}

// f16 in and out, f32 compute: what CuPy's matmul of float16 arrays asks cuBLAS for.
Result gemmExHalfOutCase() {
  auto a = quarters(kM * kK, 75), b = quarters(kK * kN, 76);
  std::vector<__half> ha, hb;
  for (float f : a) ha.push_back(__float2half(f));
  for (float f : b) hb.push_back(__float2half(f));
  DeviceBuffer<__half> da(ha), db(hb), dc(size_t(kM) * kN);
  Blas blas;
  float alpha = 1.0f, beta = 0.0f;
  CHECK_CUBLAS(cublasGemmEx(blas.handle, CUBLAS_OP_N, CUBLAS_OP_N, kM, kN, kK, &alpha, da.ptr, CUDA_R_16F, kM, db.ptr,
                            CUDA_R_16F, kK, &beta, dc.ptr, CUDA_R_16F, kM, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  std::vector<float> c;
  for (__half h : dc.read()) c.push_back(__half2float(h));
  return floats(c);
}

// cuSOLVER's LU factorisation and solve, as CuPy's linalg.solve calls them: getrf (partial pivoting), then getrs.
// A = L U is built with a unit lower L whose entries are at most 1/2 in magnitude (so no row is ever swapped: the
// diagonal of each remaining column is its largest entry) and an upper U with power-of-two diagonal; every entry
// is a multiple of 1/16. Eliminating in any order reproduces L and U exactly, and b = A x with x of quarters, so the
// exact answers are representable. Kernels that invert a triangular block explicitly round (the inverse's entries
// need more bits), so each value may differ by that rounding, amplified at most by the conditioning of the
// triangular factors: the tolerance is 2^-12 (f32) / 2^-40 (f64) of the largest value in the result.
// Result: the factors (n x n, column-major), the pivots (as floats), then the solution (n x nrhs).
template <typename T> Result getrfGetrsCase(uint64_t seed) {
  constexpr int n = 40, nrhs = 3;
  Lcg g(seed);
  std::vector<T> lower(size_t(n) * n, 0), upper(size_t(n) * n, 0);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      if (i > j) lower[i + size_t(j) * n] = T(int(g.next() % 5) - 2) / T(4);
      if (i == j) {
        lower[i + size_t(j) * n] = 1;
        upper[i + size_t(j) * n] = T((g.next() & 1) ? 2 : -1) * T(1 << (g.next() % 3));
      }
      if (i < j) upper[i + size_t(j) * n] = T(g.quarter());
    }
  std::vector<T> a(size_t(n) * n, 0), x(size_t(n) * nrhs), b(size_t(n) * nrhs, 0);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < n; ++k) a[i + size_t(j) * n] += lower[i + size_t(k) * n] * upper[k + size_t(j) * n];
  for (auto& v : x) v = T(g.quarter());
  for (int r = 0; r < nrhs; ++r)
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < n; ++k) b[i + size_t(r) * n] += a[i + size_t(k) * n] * x[k + size_t(r) * n];
  DeviceBuffer<T> da(a), db(b);
  DeviceBuffer<int> pivots(n), info(1);
  cusolverDnHandle_t handle;
  CHECK_CUSOLVER(cusolverDnCreate(&handle));
  int work = 0;
  if constexpr (sizeof(T) == 4) {
    CHECK_CUSOLVER(cusolverDnSgetrf_bufferSize(handle, n, n, da.ptr, n, &work));
    DeviceBuffer<T> workspace(size_t(std::max(work, 1)));
    CHECK_CUSOLVER(cusolverDnSgetrf(handle, n, n, da.ptr, n, workspace.ptr, pivots.ptr, info.ptr));
    CHECK_CUSOLVER(cusolverDnSgetrs(handle, CUBLAS_OP_N, n, nrhs, da.ptr, n, pivots.ptr, db.ptr, n, info.ptr));
  } else {
    CHECK_CUSOLVER(cusolverDnDgetrf_bufferSize(handle, n, n, da.ptr, n, &work));
    DeviceBuffer<T> workspace(size_t(std::max(work, 1)));
    CHECK_CUSOLVER(cusolverDnDgetrf(handle, n, n, da.ptr, n, workspace.ptr, pivots.ptr, info.ptr));
    CHECK_CUSOLVER(cusolverDnDgetrs(handle, CUBLAS_OP_N, n, nrhs, da.ptr, n, pivots.ptr, db.ptr, n, info.ptr));
  }
  auto factors = da.read();
  auto p = pivots.read();
  auto solution = db.read();
  int status = info.read()[0];
  cusolverDnDestroy(handle);
  if (status != 0) throw Failure{"getrf/getrs info " + std::to_string(status)};
  std::vector<T> all(factors);
  for (int v : p) all.push_back(T(v));
  all.insert(all.end(), solution.begin(), solution.end());
  double largest = 0;
  for (T v : all) largest = std::max(largest, std::fabs(double(v)));
  Result r;
  if constexpr (sizeof(T) == 4)
    r = floats(all);
  else
    r = doubles(all);
  r.tolerance.assign(all.size(), std::ldexp(largest, sizeof(T) == 4 ? -12 : -40));
  for (size_t i = factors.size(); i < factors.size() + p.size(); ++i) r.tolerance[i] = 0;  // pivots: exact
  return r;
}

const std::map<std::string, std::function<Result()>>& cases() {
  static const std::map<std::string, std::function<Result()>> all = {
      {"curand.uniform.xorwow", [] { return curandCase(CURAND_RNG_PSEUDO_DEFAULT, false); }},
      {"curand.normal.xorwow", [] { return curandCase(CURAND_RNG_PSEUDO_DEFAULT, true); }},
      {"curand.uniform.philox", [] { return curandCase(CURAND_RNG_PSEUDO_PHILOX4_32_10, false); }},
      {"curand.normal.philox", [] { return curandCase(CURAND_RNG_PSEUDO_PHILOX4_32_10, true); }},
      {"cufft.c2c.1d.256.batch2", [] { return fftC2cCase({256}, 2, 91); }},
      {"cufft.c2c.1d.1000", [] { return fftC2cCase({1000}, 1, 92); }},
      {"cufft.c2c.2d.32x48",
       [] {
         return fftC2cCase({32, 48}, 1, 93);
       }},
      {"cufft.r2c.c2r.1d.512", [] { return fftR2cC2rCase(512, 94); }},
      {"cusparse.spmv.csr", spmvCase},
      {"cusparse.spmm.csr", spmmCase},
      {"cublas.sgemm", sgemmCase},
      {"cublas.sgemm.general", sgemmGeneralCase},
      {"cublas.hgemm", hgemmCase},
      {"cublas.gemmex.f16",
       [] { return gemmExCase<__half, float>(CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 61, toHalf, same); }},
      {"cublas.gemmex.bf16",
       [] { return gemmExCase<__nv_bfloat16, float>(CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, 63, toBf16, same); }},
      {"cublas.gemmex.tf32",
       [] { return gemmExCase<float, float>(CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 65, same, same); }},
      {"cublas.gemmex.int8",
       [] { return gemmExCase<int8_t, int32_t>(CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I, 67, toInt8, fromInt32); }},
      {"cublas.gemmex.int8.m128n128k128", [] { return int8GemmExCase(128, 128, 128, 69); }},
      {"cublas.gemmex.int8.m64n16k40", [] { return int8GemmExCase(64, 16, 40, 71); }},
      {"cublas.gemmex.int8.m64n64k40", [] { return int8GemmExCase(64, 64, 40, 73); }},
      {"cublas.sgemm.batched", batchedCase},
      {"cublas.sgemm.strided_batched", stridedBatchedCase},
      {"cublaslt.matmul.relu_bias", ltMatmulReluBiasCase},
      {"cublaslt.matmul.int8.algo64", ltMatmulInt8Algo64Case},
      {"cublas.dgemm", dgemmCase},
      {"cublas.gemmex.f16.f16out", gemmExHalfOutCase},
      {"cusolver.getrf_getrs.f32", [] { return getrfGetrsCase<float>(81); }},
      {"cusolver.getrf_getrs.f64", [] { return getrfGetrsCase<double>(82); }},
  };
  return all;
}

void writeResult(std::ostream& out, const std::string& name, const Result& r) {
  out << "case " << name << ' ' << kindName(r.kind) << ' ' << r.words.size() << '\n';
  for (size_t i = 0; i < r.words.size(); ++i) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08x", r.words[i]);
    out << buf << ((i % 8 == 7 || i + 1 == r.words.size()) ? '\n' : ' ');
  }
}

std::string deviceDescription() {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return "unknown device";
  int driver = 0;
  cudaDriverGetVersion(&driver);
  int blas = 0;
  cublasGetProperty(MAJOR_VERSION, &blas);
  int blasMinor = 0;
  cublasGetProperty(MINOR_VERSION, &blasMinor);
  return std::string(prop.name) + " (compute capability " + std::to_string(prop.major) + "." +
         std::to_string(prop.minor) + "), CUDA driver API " + std::to_string(driver) + ", cuBLAS " +
         std::to_string(blas) + "." + std::to_string(blasMinor);
}

// Runs the case `name` into `got`: 0, or after printing why, 2 for an unknown case and 1 for one that failed.
int runCase(const std::string& name, Result& got) {
  auto it = cases().find(name);
  if (it == cases().end()) {
    std::printf("unknown case %s\n", name.c_str());
    return 2;
  }
  try {
    got = it->second();
  } catch (const Failure& f) {
    std::printf("FAIL %s: %s\n", name.c_str(), f.message.c_str());
    return 1;
  }
  return 0;
}

// Appends one case's result to the record, or all cases' with a header when `only` is empty (a case that crashes
// the process on a GPU then loses only itself when the recorder is run once per case).
int record(const char* path, const std::string& only) {
  std::ofstream out(path, only.empty() ? std::ios::trunc : std::ios::app);
  if (only.empty() || out.tellp() == 0)
    out << "# NVIDIA libraries through tests/libraries/library_calls.cpp, on " << deviceDescription() << '\n';
  for (const auto& [name, run] : cases()) {
    if (!only.empty() && name != only) continue;
    try {
      Result r = run();
      writeResult(out, name, r);
      std::printf("recorded %s\n", name.c_str());
    } catch (const Failure& f) {
      out << "error " << name << ' ' << f.message << '\n';
      std::printf("error %s: %s\n", name.c_str(), f.message.c_str());
    }
    out.flush();
    cudaGetLastError();
  }
  return 0;
}

// The recorded result of one case, or false.
bool readRecord(const char* path, const std::string& name, Result& want, std::string& error) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string tag, caseName;
    fields >> tag >> caseName;
    if (caseName != name) continue;
    if (tag == "error") {
      std::getline(fields, error);
      return false;
    }
    if (tag != "case") continue;
    std::string kind;
    size_t count = 0;
    fields >> kind >> count;
    want.kind = kind == "i32" ? Result::Kind::I32 : kind == "f64" ? Result::Kind::F64 : Result::Kind::F32;
    while (want.words.size() < count && in >> std::hex >> line)
      want.words.push_back(uint32_t(std::stoul(line, nullptr, 16)));
    return want.words.size() == count;
  }
  error = "no record of this case";
  return false;
}

int check(const char* path, const std::string& name) {
  if (!cases().count(name)) {
    std::printf("unknown case %s\n", name.c_str());
    return 2;
  }
  Result want;
  std::string recordError;
  if (!readRecord(path, name, want, recordError)) {
    std::printf("FAIL %s: %s: %s\n", name.c_str(), path, recordError.c_str());
    return 1;
  }
  Result got;
  if (int status = runCase(name, got)) return status;
  if (got.kind != want.kind || got.words.size() != want.words.size()) {
    std::printf("FAIL %s: %zu %s words, the GPU gave %zu %s words\n", name.c_str(), got.words.size(),
                kindName(got.kind), want.words.size(), kindName(want.kind));
    return 1;
  }
  const size_t per = wordsPerValue(got.kind), values = got.words.size() / per;
  size_t bad = 0, exact = 0;
  double worst = 0;
  for (size_t i = 0; i < values; ++i) {
    if (std::equal(got.words.begin() + i * per, got.words.begin() + (i + 1) * per, want.words.begin() + i * per)) {
      ++exact;
      continue;
    }
    double diff = got.kind == Result::Kind::I32 ? INFINITY : std::fabs(valueAt(got, i) - valueAt(want, i));
    double allowed = got.tolerance.empty() ? 0.0 : got.tolerance[i];
    worst = std::max(worst, diff);
    if (!(diff <= allowed)) {
      if (bad < 5) {
        if (got.kind == Result::Kind::I32)
          std::printf("  [%zu] got %d, the GPU gave %d\n", i, int32_t(got.words[i]), int32_t(want.words[i]));
        else
          std::printf("  [%zu] got %.17g, the GPU gave %.17g, allowed difference %g\n", i, valueAt(got, i),
                      valueAt(want, i), allowed);
      }
      ++bad;
    }
  }
  if (bad) {
    std::printf("FAIL %s: %zu of %zu values differ from the GPU's beyond the tolerance\n", name.c_str(), bad, values);
    return 1;
  }
  std::printf("PASS %s: %zu values, %zu bit-exact, largest difference %g\n", name.c_str(), values, exact, worst);
  return 0;
}

// Compares one case with the result the host computed for it (Result::exact), bit for bit.
int exact(const std::string& name) {
  Result got;
  if (int status = runCase(name, got)) return status;
  if (got.exact.empty()) {
    std::printf("FAIL %s: the case computes no exact result on the host\n", name.c_str());
    return 2;
  }
  if (got.words.size() != got.exact.size()) {
    std::printf("FAIL %s: %zu words, the host computed %zu\n", name.c_str(), got.words.size(), got.exact.size());
    return 1;
  }
  size_t bad = 0;
  for (size_t i = 0; i < got.words.size(); ++i) {
    if (got.words[i] == got.exact[i]) continue;
    if (bad < 5) std::printf("  [%zu] got %08x, the host computed %08x\n", i, got.words[i], got.exact[i]);
    ++bad;
  }
  if (bad) {
    std::printf("FAIL %s: %zu of %zu values differ from the host's\n", name.c_str(), bad, got.words.size());
    return 1;
  }
  std::printf("PASS %s: %zu values, all equal to the host's\n", name.c_str(), got.words.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "list") {
    for (const auto& entry : cases()) std::printf("%s\n", entry.first.c_str());
    return 0;
  }
  if (mode == "record" && (argc == 3 || argc == 4)) return record(argv[2], argc == 4 ? argv[3] : "");
  if (mode == "run" && argc == 3) {
    auto it = cases().find(argv[2]);
    if (it == cases().end()) return 2;
    try {
      Result r = it->second();
      std::printf("ran %s: %zu values\n", argv[2], r.words.size());
      return 0;
    } catch (const Failure& f) {
      std::printf("error %s: %s\n", argv[2], f.message.c_str());
      return 1;
    }
  }
  if (mode == "check" && argc == 4) return check(argv[2], argv[3]);
  if (mode == "exact" && argc == 3) return exact(argv[2]);
  std::fprintf(stderr, "usage: %s record FILE | check FILE CASE | exact CASE | list\n", argv[0]);
  return 2;
}
