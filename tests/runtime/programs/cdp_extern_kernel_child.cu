// The child kernel of cdp_extern_kernel_main.cu, in a translation unit of its own.
__global__ void childElsewhere(int* p, int v) { *p = v; }
