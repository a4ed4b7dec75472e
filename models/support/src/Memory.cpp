#include "mixtd/support/Memory.h"

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

}  // namespace mixtd
