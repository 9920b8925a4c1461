/* An object for native_loader_test.cpp: built as the native tier's compiler builds kernels (large code model, no PIC),
   with unwind tables, a read-only string, a writable counter and a call of a C library function. */
#include <stdlib.h>

static const char kMessage[] = "cuemu loader";
static long calls;

long cuemu_kernel(const char* number) {
  ++calls;
  return strtol(number, 0, 10) * 3;
}

long cuemu_calls(void) { return calls; }
const char* cuemu_message(void) { return kMessage; }

/* calls f: an exception f throws unwinds through this frame only where the loader registered its unwind tables */
long cuemu_through(long (*f)(long), long x) { return f(x) * 2 + 1; }
