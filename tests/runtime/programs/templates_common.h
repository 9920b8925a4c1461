// Shared by templates_main.cu and templates_other.cu.
#pragma once

template <typename T> struct Scale {
  T factor;
  __device__ T operator()(T x) const { return x * factor; }
};

template <typename T> struct Square {
  __device__ T operator()(T x) const { return x * x; }
};

template <typename Op, typename T> __global__ void apply(T* data, Op op, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = op(data[i]);
}

void scaleHere(int* data, int factor, int n);
void scaleElsewhere(double* data, double factor, int n);
void squareElsewhere(int* data, int n);
