// Process-wide settings for mixtd's executables (allocator, BLAS threads,
// the CPU kernels of the numerical libraries).
#pragma once

#include <string>

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

// The same seed gives the same answer on any x86-64 CPU with AVX2 and FMA
// (docs/search.md, "Same seed, same answer"): OpenBLAS, oneDNN and ATen
// each pick their kernels for the CPU they run on, and kernels of other
// widths sum in another order. OpenBLAS's choice moves the SVD and CP-ALS
// factors, and through BFP8 rounding a query's top-1 by up to 11 images of
// 1,024 (its SkylakeX or Cooperlake kernels against the Haswell ones); oneDNN's
// moves the float network's logits and statistics in the last bits. So this
// pins OpenBLAS to its Haswell kernels, oneDNN to AVX2 and ATen to AVX2 —
// the widest every such CPU has — and one OpenBLAS thread. Call it first
// in main(), before any of them has run (oneDNN's choice is fixed at its
// first use). MIXTD_NATIVE_KERNELS=1 in the environment keeps each
// library's own choice (faster on AVX-512 CPUs; answers then depend on the
// CPU). Without AVX2 and FMA nothing but the thread count is pinned. Every
// library is looked up at run time (dlsym): a no-op for those not loaded.
// Returns what it did, e.g. "openblas Haswell, onednn avx2, aten avx2".
// For executables only.
std::string pin_cpu_kernels();

}  // namespace mixtd
