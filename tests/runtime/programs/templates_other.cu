#include "check.h"
#include "templates_common.h"

void scaleElsewhere(double* data, double factor, int n) {
  apply<Scale<double>><<<(n + 127) / 128, 128>>>(data, Scale<double>{factor}, n);
  CHECK_CUDA(cudaGetLastError());
}

void squareElsewhere(int* data, int n) {
  apply<Square<int>><<<(n + 63) / 64, 64>>>(data, Square<int>{}, n);
  CHECK_CUDA(cudaGetLastError());
}
