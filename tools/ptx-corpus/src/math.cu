// Corpus source: the CUDA math library in float and double, fast intrinsics and conversions.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

__global__ void math_float(const float* in, float* out) {
    float x = in[threadIdx.x], y = in[threadIdx.x + 32];
    int e;
    float ip;
    out[0] = sinf(x) + cosf(x) + tanf(x) + asinf(x) + acosf(x) + atanf(x) + atan2f(y, x);
    out[1] = sinhf(x) + coshf(x) + tanhf(x) + asinhf(x) + acoshf(x) + atanhf(x);
    out[2] = expf(x) + exp2f(x) + exp10f(x) + expm1f(x) + logf(x) + log2f(x) + log10f(x) + log1pf(x);
    out[3] = powf(x, y) + sqrtf(x) + rsqrtf(x) + cbrtf(x) + rcbrtf(x) + hypotf(x, y) + norm3df(x, y, x);
    out[4] = erff(x) + erfcf(x) + erfinvf(x) + erfcinvf(x) + lgammaf(x) + tgammaf(x) + normcdff(x) + normcdfinvf(x);
    out[5] = j0f(x) + j1f(x) + y0f(x) + y1f(x) + jnf(2, x) + ynf(3, x) + cyl_bessel_i0f(x) + cyl_bessel_i1f(x);
    out[6] = fmodf(x, y) + remainderf(x, y) + frexpf(x, &e) + ldexpf(x, e) + modff(x, &ip) + ip + scalbnf(x, 3) +
             ilogbf(x) + logbf(x) + nextafterf(x, y) + copysignf(x, y) + fdimf(x, y) + fmaf(x, y, 1.0f);
    out[7] = floorf(x) + ceilf(x) + truncf(x) + roundf(x) + rintf(x) + nearbyintf(x) + (float)lrintf(x) +
             (float)llroundf(x) + fminf(x, y) + fmaxf(x, y) + fabsf(x);
    out[8] = __sinf(x) + __cosf(x) + __expf(x) + __logf(x) + __powf(x, y) + __fdividef(x, y) + __tanf(x) +
             __log2f(x) + __log10f(x) + __exp10f(x) + __saturatef(x);
    out[9] = __fadd_rn(x, y) + __fadd_rz(x, y) + __fmul_ru(x, y) + __fmul_rd(x, y) + __fdiv_rn(x, y) +
             __fsqrt_rn(x) + __frcp_rz(x) + __fmaf_rn(x, y, x) + __fmaf_ieee_rz(x, y, x) + __fsub_ru(x, y);
    float s, c;
    sincosf(x, &s, &c);
    sincospif(y, &s, &c);
    out[10] = s + c + sinpif(x) + cospif(x) + isnan(x) + isinf(y) + isfinite(x) + signbit(y);
    out[11] = __int2float_rn(e) + __uint2float_rz(e) + __ll2float_rd(e) + __float2int_rn(x) + __float2uint_rz(x) +
              __float2ll_ru(x) + __float2ull_rd(y) + __float_as_int(x) + __int_as_float(e);
}

__global__ void math_double(const double* in, double* out) {
    double x = in[threadIdx.x], y = in[threadIdx.x + 32];
    int e;
    out[0] = sin(x) + cos(x) + tan(x) + asin(x) + acos(x) + atan(x) + atan2(y, x);
    out[1] = sinh(x) + cosh(x) + tanh(x) + asinh(x) + acosh(x) + atanh(x);
    out[2] = exp(x) + exp2(x) + exp10(x) + expm1(x) + log(x) + log2(x) + log10(x) + log1p(x);
    out[3] = pow(x, y) + sqrt(x) + rsqrt(x) + cbrt(x) + hypot(x, y) + erf(x) + erfc(x) + lgamma(x) + tgamma(x);
    out[4] = fmod(x, y) + remainder(x, y) + frexp(x, &e) + ldexp(x, e) + floor(x) + ceil(x) + trunc(x) + round(x) +
             rint(x) + fmin(x, y) + fmax(x, y) + fabs(x) + fma(x, y, 1.0) + erfinv(x) + normcdf(x) + j0(x);
    out[5] = __dadd_rn(x, y) + __dmul_rz(x, y) + __ddiv_ru(x, y) + __dsqrt_rd(x) + __drcp_rn(x) + __fma_rz(x, y, x) +
             __double2float_rn(x) + __double2int_rz(x) + __double2ll_rn(y) + __int2double_rn(e) + __ll2double_rd(e) +
             __double2hiint(x) + __double2loint(x) + __hiloint2double(e, e);
}

__global__ void half_and_bf16(const __half* h, const __nv_bfloat16* b, __half* oh, __nv_bfloat16* ob, float* of) {
    __half a = h[threadIdx.x], c = h[threadIdx.x + 1];
    __half2 a2 = __halves2half2(a, c), c2 = __half2half2(c);
    __half r = __hadd(a, c) * __hmul(a, c) - __hdiv(a, c) + __hfma(a, c, a) + hsqrt(a) + hexp(c) + hlog(a) + hsin(a) +
               hcos(c) + __habs(a) + __hneg(c) + __hmax(a, c) + __hmin(a, c);
    __half2 r2 = __hadd2(a2, c2) * __hmul2(a2, c2) + __hfma2(a2, c2, a2) + h2sqrt(a2) + h2exp(c2) + __habs2(a2) +
                 __hmax2(a2, c2) + __hmin2(a2, c2);
    oh[threadIdx.x] = r + __low2half(r2) + __high2half(r2) + (__hlt(a, c) ? a : c) + (__hisnan(a) ? c : a);
    __nv_bfloat16 x = b[threadIdx.x], y = b[threadIdx.x + 1];
    __nv_bfloat162 x2 = __halves2bfloat162(x, y);
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    __nv_bfloat16 z = __hadd(x, y) * __hmul(x, y) + __hfma(x, y, x) + __hmax(x, y) + hsqrt(x) + hexp(y);
    __nv_bfloat162 z2 = __hadd2(x2, x2) * __hfma2(x2, x2, x2);
    ob[threadIdx.x] = z + __low2bfloat16(z2) + __high2bfloat16(z2);
#else
    ob[threadIdx.x] = __float2bfloat16(__bfloat162float(x) + __bfloat162float(y));
#endif
    of[threadIdx.x] = __half2float(a) + __bfloat162float(x) + __low2float(a2) + __high2float(r2);
    oh[threadIdx.x + 64] = __float2half_rn(of[0]) + __float2half_rz(of[1]) + __int2half_rn(threadIdx.x) +
                           __ushort_as_half(threadIdx.x);
    ob[threadIdx.x + 64] = __float2bfloat16_rn(of[2]) + __float2bfloat16_rz(of[3]);
    atomicAdd(oh + 128, a);
    atomicAdd((__half2*)(oh + 130), a2);
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    atomicAdd(ob + 128, x);
    atomicAdd((__nv_bfloat162*)(ob + 130), x2);
#endif
}

__global__ void conversions(const double* d, const long long* ll, float* f, int* i, unsigned* u, short* s, char* c) {
    double x = d[threadIdx.x];
    long long y = ll[threadIdx.x];
    f[0] = (float)x + (float)y + (float)(unsigned long long)y + (float)(short)y + (float)(unsigned char)y;
    i[0] = (int)x + (int)f[1] + (int)(short)x + (int)(signed char)y;
    u[0] = (unsigned)x + (unsigned)f[2] + (unsigned)(unsigned short)y;
    s[0] = (short)x + (short)f[3];
    c[0] = (char)x + (char)f[4];
    d[0] == 0 ? (void)0 : (void)(f[5] = (float)(x * y));
}
