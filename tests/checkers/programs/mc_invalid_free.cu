// cudaFree of a pointer inside a buffer, and of a host pointer.
#include "common.h"
int main() {
  char* a;
  int host = 0;
  STEP(cudaMalloc(&a, 4096));
  STEP(cudaFree(a + 16));
  STEP(cudaFree(&host));
  STEP(cudaFree(a));
  return finish();
}
