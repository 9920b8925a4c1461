// Corpus source: a few CUB algorithms, small enough for the checked-in corpus.
#include <cub/cub.cuh>

struct Positive {
    __device__ bool operator()(const int& x) const { return x > 0; }
};

void cub_small(const int* in, int* out, float* fin, float* fout, int* num, int n, cudaStream_t s) {
    void* temp = nullptr;
    size_t bytes = 0;
    cub::DeviceReduce::Sum(temp, bytes, fin, fout, n, s);
    cub::DeviceScan::ExclusiveSum(temp, bytes, in, out, n, s);
    cub::DeviceSelect::If(temp, bytes, in, out, num, n, Positive{}, s);
    cub::DeviceHistogram::HistogramEven(temp, bytes, fin, out, 33, 0.0f, 1.0f, n, s);
}
