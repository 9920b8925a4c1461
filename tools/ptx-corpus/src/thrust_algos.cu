// Corpus source: Thrust algorithms on device vectors.
#include <thrust/device_vector.h>
#include <thrust/sort.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/transform.h>
#include <thrust/copy.h>
#include <thrust/merge.h>
#include <thrust/unique.h>
#include <thrust/functional.h>
#include <thrust/inner_product.h>
#include <thrust/count.h>
#include <thrust/sequence.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/zip_iterator.h>

struct IsOdd {
    __host__ __device__ bool operator()(int x) const { return x & 1; }
};
struct Square {
    __host__ __device__ float operator()(float x) const { return x * x; }
};

void run_thrust(int n) {
    thrust::device_vector<int> a(n), b(n), c(2 * n);
    thrust::device_vector<float> f(n), g(n);
    thrust::device_vector<double> d(n);
    thrust::sequence(a.begin(), a.end());
    thrust::sort(a.begin(), a.end());
    thrust::sort(f.begin(), f.end(), thrust::greater<float>());
    thrust::stable_sort_by_key(d.begin(), d.end(), a.begin());
    int s = thrust::reduce(a.begin(), a.end());
    double ds = thrust::reduce(d.begin(), d.end(), 0.0, thrust::maximum<double>());
    thrust::inclusive_scan(a.begin(), a.end(), b.begin());
    thrust::exclusive_scan(f.begin(), f.end(), g.begin());
    thrust::transform(f.begin(), f.end(), g.begin(), Square());
    thrust::copy_if(a.begin(), a.end(), b.begin(), IsOdd());
    thrust::merge(a.begin(), a.end(), b.begin(), b.end(), c.begin());
    auto end = thrust::unique(a.begin(), a.end());
    (void)end;
    float dot = thrust::inner_product(f.begin(), f.end(), g.begin(), 0.0f);
    auto cnt = thrust::count_if(thrust::counting_iterator<int>(0), thrust::counting_iterator<int>(n), IsOdd());
    (void)(s + ds + dot + cnt);
}
