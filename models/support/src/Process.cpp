#include "mixtd/support/Process.h"

#include <dlfcn.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace mixtd {

void keep_freed_memory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest (HEAP_MAX_SIZE / 2 on 64-bit)
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

void use_one_blas_thread() {
  using SetThreads = void (*)(int);
  if (auto* set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) set(1);
}

}  // namespace mixtd
