// What cuBLASLt's heuristics offer for an int8 GEMM (s8 x s8 -> s32, COMPUTE_32I, A transposed: "TN") of
// m x n x k: heur M N K prints the status of cublasLtMatmulAlgoGetHeuristic and each result's algorithm and tile.
// The markers "=== heuristic start/end" on stderr delimit the call in a CUEMU_TRACE or CUBLASLT_LOG_LEVEL log.
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
int main(int argc, char** argv) {
  int m = argc > 1 ? atoi(argv[1]) : 64, n = argc > 2 ? atoi(argv[2]) : 48, k = argc > 3 ? atoi(argv[3]) : 40;
  cudaFree(0);
  cublasLtHandle_t lt;
  cublasLtCreate(&lt);
  cublasLtMatmulDesc_t op;
  cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32I, CUDA_R_32I);
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
  cublasLtMatrixLayout_t la, lb, lc;
  cublasLtMatrixLayoutCreate(&la, CUDA_R_8I, k, m, k);
  cublasLtMatrixLayoutCreate(&lb, CUDA_R_8I, k, n, k);
  cublasLtMatrixLayoutCreate(&lc, CUDA_R_32I, m, n, m);
  cublasLtMatmulPreference_t pref;
  cublasLtMatmulPreferenceCreate(&pref);
  size_t ws = 32 << 20;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  cublasLtMatmulHeuristicResult_t res[8];
  int found = 0;
  fprintf(stderr, "=== heuristic start\n");
  auto st = cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 8, res, &found);
  fprintf(stderr, "=== heuristic end\n");
  printf("heuristic status %d found %d\n", int(st), found);
  for (int i = 0; i < found; ++i) {
    int id = 0, tile = 0;
    size_t w;
    cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w);
    printf("  [%d] algo %d tile %d\n", i, id, tile);
  }
}
