// Two allocations never freed (reported with --leak-check full).
#include "common.h"
int main() {
  void *a, *b, *c;
  STEP(cudaMalloc(&a, 1024));
  STEP(cudaMalloc(&b, 4096));
  STEP(cudaMalloc(&c, 256));
  STEP(cudaFree(c));
  return finish();
}
