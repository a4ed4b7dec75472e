// Process-wide settings for mixtd's executables (allocator, BLAS threads).
#pragma once

namespace mixtd {

// Keeps freed memory in the process instead of returning it to the kernel
// (glibc: no mmap for large blocks, no heap trimming below 1 GiB). Every
// LibTorch forward allocates its activation tensors afresh; with glibc's
// defaults each one is mmapped, faulted in page by page and unmapped again,
// about 1 M page faults a minute in bench_nn and a bimodal forward time
// (50 or 90 ms on one core). For executables only: a library must not
// change the allocator of the program that links it. A no-op elsewhere.
void keep_freed_memory();

// One OpenBLAS thread, whatever OPENBLAS_NUM_THREADS says: the SVDs and
// CP-ALS behind every decomposition sum in a thread-count-dependent order,
// so factors (and, through BFP8 rounding, a search's accuracy queries and
// its answer) differed in the last bits between machines and settings
// (a test top-1 of 67.34% or 67.59% for one design). Looked up at run time
// (dlsym), a no-op where the BLAS is not OpenBLAS. For executables only.
void use_one_blas_thread();

}  // namespace mixtd
