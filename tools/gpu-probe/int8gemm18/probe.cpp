// cuBLASLt int8 GEMMs (s8 x s8 -> s32, COMPUTE_32I) of m x n x k: probe [M N K [TRANSA]]. Runs the heuristics'
// results, then every algorithm id cuBLASLt lists for these types: each tile/stages configuration that
// cublasLtMatmulAlgoCheck accepts (the first three run), each compared with the exact product computed on the host.
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cstdint>

#define CK(x)                                 \
  do {                                        \
    auto s_ = (x);                            \
    if (s_ != 0) {                            \
      std::printf("%s -> %d\n", #x, int(s_)); \
    }                                         \
  } while (0)

int main(int argc, char** argv) {
  int m = 64, n = 48, k = 40;
  if (argc > 3) {
    m = atoi(argv[1]);
    n = atoi(argv[2]);
    k = atoi(argv[3]);
  }
  int transA = argc > 4 ? atoi(argv[4]) : 1;
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  std::printf("device %s cc %d.%d sms %d smem/sm %zu smem/block optin %zu\n", prop.name, prop.major, prop.minor,
              prop.multiProcessorCount, prop.sharedMemPerMultiprocessor, prop.sharedMemPerBlockOptin);
  std::vector<int8_t> ha(size_t(m) * k), hb(size_t(k) * n);
  for (size_t i = 0; i < ha.size(); ++i) ha[i] = int8_t((i * 7 + 3) % 9) - 4;
  for (size_t i = 0; i < hb.size(); ++i) hb[i] = int8_t((i * 5 + 1) % 9) - 4;
  // A: transA ? stored k x m (lda=k), op(A)=A^T  : stored m x k (lda=m)
  std::vector<int32_t> ref(size_t(m) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      int32_t s = 0;
      for (int p = 0; p < k; ++p) {
        int8_t a = transA ? ha[size_t(i) * k + p] : ha[size_t(p) * m + i];
        s += int32_t(a) * int32_t(hb[size_t(j) * k + p]);
      }
      ref[size_t(j) * m + i] = s;
    }
  int8_t *da, *db;
  int32_t* dc;
  void* ws;
  size_t wsSize = 32 << 20;
  cudaMalloc(&da, ha.size());
  cudaMalloc(&db, hb.size());
  cudaMalloc(&dc, ref.size() * 4);
  cudaMalloc(&ws, wsSize);
  cudaMemcpy(da, ha.data(), ha.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(db, hb.data(), hb.size(), cudaMemcpyHostToDevice);
  cublasLtHandle_t lt;
  CK(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t op;
  CK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32I, CUDA_R_32I));
  cublasOperation_t ta = transA ? CUBLAS_OP_T : CUBLAS_OP_N, tb = CUBLAS_OP_N;
  CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  cublasLtMatrixLayout_t la, lb, lc;
  CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_8I, transA ? k : m, transA ? m : k, transA ? k : m));
  CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8I, k, n, k));
  CK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32I, m, n, m));
  cublasLtMatmulPreference_t pref;
  CK(cublasLtMatmulPreferenceCreate(&pref));
  CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsSize, sizeof wsSize));
  cublasLtMatmulHeuristicResult_t res[16];
  int found = 0;
  auto st = cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 16, res, &found);
  std::printf("heuristic: status %d found %d\n", int(st), found);
  int32_t alpha = 1, beta = 0;
  auto runAlgo = [&](const cublasLtMatmulAlgo_t* algo, const char* what) {
    cudaMemset(dc, 0x7f, ref.size() * 4);
    auto s = cublasLtMatmul(lt, op, &alpha, da, la, db, lb, &beta, dc, lc, dc, lc, algo, ws, wsSize, 0);
    auto e = cudaDeviceSynchronize();
    std::vector<int32_t> out(ref.size());
    cudaMemcpy(out.data(), dc, out.size() * 4, cudaMemcpyDeviceToHost);
    size_t bad = 0;
    for (size_t i = 0; i < out.size(); ++i) bad += out[i] != ref[i];
    std::printf("  %s: matmul status %d sync %d mismatches %zu of %zu\n", what, int(s), int(e), bad, out.size());
  };
  for (int i = 0; i < found; ++i) {
    int id = 0, tile = 0, stages = 0;
    size_t w = 0;
    cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &w);
    std::printf("heuristic[%d]: algo %d tile %d stages %d ws %zu\n", i, id, tile, stages, res[i].workspaceSize);
    char buf[64];
    std::snprintf(buf, sizeof buf, "heuristic %d", i);
    runAlgo(&res[i].algo, buf);
  }
  int ids[128];
  int nids = 0;
  CK(cublasLtMatmulAlgoGetIds(lt, CUBLAS_COMPUTE_32I, CUDA_R_32I, CUDA_R_8I, CUDA_R_8I, CUDA_R_32I, CUDA_R_32I, 128,
                              ids, &nids));
  std::printf("algo ids: %d:", nids);
  for (int i = 0; i < nids; ++i) std::printf(" %d", ids[i]);
  std::printf("\n");
  for (int i = 0; i < nids; ++i) {
    cublasLtMatmulAlgo_t algo;
    if (cublasLtMatmulAlgoInit(lt, CUBLAS_COMPUTE_32I, CUDA_R_32I, CUDA_R_8I, CUDA_R_8I, CUDA_R_32I, CUDA_R_32I, ids[i],
                               &algo))
      continue;
    size_t w = 0;
    int tiles[128];
    size_t nt = 0;
    cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_TILE_IDS, tiles, sizeof tiles, &nt);
    nt /= sizeof(int);
    int stagesArr[128];
    size_t ns = 0;
    cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_STAGES_IDS, stagesArr, sizeof stagesArr, &ns);
    ns /= sizeof(int);
    std::printf("algo %d: %zu tiles, %zu stage ids\n", ids[i], nt, ns);
    int passed = 0;
    for (size_t t = 0; t < (nt ? nt : 1); ++t)
      for (size_t s = 0; s < (ns ? ns : 1); ++s) {
        if (nt) cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tiles[t], sizeof(int));
        if (ns) cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stagesArr[s], sizeof(int));
        cublasLtMatmulHeuristicResult_t r;
        auto c = cublasLtMatmulAlgoCheck(lt, op, la, lb, lc, lc, &algo, &r);
        if (c == 0 && passed < 3) {
          std::printf("  check ok: tile %d stages %d ws %zu\n", nt ? tiles[t] : -1, ns ? stagesArr[s] : -1,
                      r.workspaceSize);
          char buf[64];
          std::snprintf(buf, sizeof buf, "algo %d tile %d stages %d", ids[i], nt ? tiles[t] : -1,
                        ns ? stagesArr[s] : -1);
          if (r.workspaceSize <= wsSize) runAlgo(&algo, buf);
        }
        passed += c == 0;
      }
    std::printf("  %d configurations pass the check\n", passed);
  }
  return 0;
}
