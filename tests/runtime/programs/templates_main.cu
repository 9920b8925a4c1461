// Templates instantiated in two translation units (each with its own fatbinary, registered separately).
#include "check.h"
#include "templates_common.h"

#include <vector>

int main() {
  CORPUS_PROGRAM("templates");
  const int n = 4096;
  std::vector<int> ints(n);
  std::vector<double> doubles(n);
  for (int i = 0; i < n; ++i) {
    ints[i] = i;
    doubles[i] = i * 0.5;
  }
  int* di;
  double* dd;
  CHECK_CUDA(cudaMalloc(&di, n * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&dd, n * sizeof(double)));
  CHECK_CUDA(cudaMemcpy(di, ints.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dd, doubles.data(), n * sizeof(double), cudaMemcpyHostToDevice));
  scaleHere(di, 3, n);          // this TU: Scale<int>
  scaleElsewhere(dd, 4.0, n);   // other TU: Scale<double>
  squareElsewhere(di, n);       // other TU: Square<int>
  CHECK_CUDA(cudaMemcpy(ints.data(), di, n * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(doubles.data(), dd, n * sizeof(double), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    if (ints[i] != (3 * i) * (3 * i)) corpus::fail("int pipeline", __FILE__, __LINE__);
    if (doubles[i] != i * 2.0) corpus::fail("double pipeline", __FILE__, __LINE__);
  }
  CHECK_CUDA(cudaFree(di));
  CHECK_CUDA(cudaFree(dd));
  return corpus::pass();
}

void scaleHere(int* data, int factor, int n) {
  apply<Scale<int>><<<(n + 127) / 128, 128>>>(data, Scale<int>{factor}, n);
  CHECK_CUDA(cudaGetLastError());
}
