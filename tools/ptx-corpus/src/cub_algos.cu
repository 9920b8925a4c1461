// Corpus source: CUB device-wide algorithms instantiated for several key and value types.
#include <cub/cub.cuh>
#include <cstdint>

template <typename T>
void instantiate_all(T* d_in, T* d_out, int* d_flags, int n, cudaStream_t s) {
    void* temp = nullptr;
    size_t bytes = 0;
    int* d_num = d_flags + n;
    cub::DeviceRadixSort::SortKeys(temp, bytes, d_in, d_out, n, 0, int(sizeof(T) * 8), s);
    cub::DeviceRadixSort::SortPairs(temp, bytes, d_in, d_out, d_flags, d_flags, n, 0, int(sizeof(T) * 8), s);
    cub::DeviceRadixSort::SortKeysDescending(temp, bytes, d_in, d_out, n, 0, int(sizeof(T) * 8), s);
    cub::DeviceScan::InclusiveSum(temp, bytes, d_in, d_out, n, s);
    cub::DeviceScan::ExclusiveSum(temp, bytes, d_in, d_out, n, s);
    cub::DeviceScan::InclusiveScan(temp, bytes, d_in, d_out, cuda::maximum<>{}, n, s);
    cub::DeviceReduce::Sum(temp, bytes, d_in, d_out, n, s);
    cub::DeviceReduce::Max(temp, bytes, d_in, d_out, n, s);
    cub::DeviceSelect::Flagged(temp, bytes, d_in, d_flags, d_out, d_num, n, s);
    cub::DeviceSelect::Unique(temp, bytes, d_in, d_out, d_num, n, s);
    cub::DeviceMergeSort::SortKeys(temp, bytes, d_out, n, cuda::std::less<T>{}, s);
}

template void instantiate_all<int>(int*, int*, int*, int, cudaStream_t);
template void instantiate_all<float>(float*, float*, int*, int, cudaStream_t);
template void instantiate_all<double>(double*, double*, int*, int, cudaStream_t);
template void instantiate_all<uint64_t>(uint64_t*, uint64_t*, int*, int, cudaStream_t);

void histograms(const unsigned char* samples, const float* fsamples, int* hist, int n, cudaStream_t s) {
    void* temp = nullptr;
    size_t bytes = 0;
    cub::DeviceHistogram::HistogramEven(temp, bytes, samples, hist, 257, 0, 256, n, s);
    cub::DeviceHistogram::HistogramEven(temp, bytes, fsamples, hist, 65, 0.0f, 1.0f, n, s);
}

struct Positive {
    __device__ bool operator()(const int& x) const { return x > 0; }
};
void select_if(const int* in, int* out, int* num, int n, cudaStream_t s) {
    void* temp = nullptr;
    size_t bytes = 0;
    cub::DeviceSelect::If(temp, bytes, in, out, num, n, Positive{}, s);
    cub::DevicePartition::If(temp, bytes, in, out, num, n, Positive{}, s);
    cub::DeviceRunLengthEncode::Encode(temp, bytes, in, out, out + n, num, n, s);
}

// Block-level primitives used directly in a kernel.
__global__ void block_primitives(const int* in, int* out) {
    using BlockLoad = cub::BlockLoad<int, 128, 4, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
    using BlockSort = cub::BlockRadixSort<int, 128, 4>;
    using BlockScan = cub::BlockScan<int, 128>;
    using BlockReduce = cub::BlockReduce<int, 128>;
    using WarpReduce = cub::WarpReduce<int>;
    __shared__ union {
        typename BlockLoad::TempStorage load;
        typename BlockSort::TempStorage sort;
        typename BlockScan::TempStorage scan;
        typename BlockReduce::TempStorage reduce;
        typename WarpReduce::TempStorage warp[4];
    } temp;
    int items[4];
    BlockLoad(temp.load).Load(in + blockIdx.x * 512, items);
    __syncthreads();
    BlockSort(temp.sort).Sort(items);
    __syncthreads();
    BlockScan(temp.scan).ExclusiveSum(items, items);
    __syncthreads();
    int total = BlockReduce(temp.reduce).Sum(items[0]);
    __syncthreads();
    int w = WarpReduce(temp.warp[threadIdx.x / 32]).Sum(items[1]);
    out[blockIdx.x * 128 + threadIdx.x] = items[0] + items[3] + total + w;
}
