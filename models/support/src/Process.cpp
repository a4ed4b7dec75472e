#include "mixtd/support/Process.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace mixtd {

namespace {

template <typename F>
F symbol(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

// oneDNN's dnnl_cpu_isa_avx2 (dnnl_types.h of oneDNN 2.x; no header ships
// with Debian's libdnnl, and mixtd does not link it: LibTorch does).
constexpr int kDnnlIsaAvx2 = 0x7;

}  // namespace

void keep_freed_memory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest (HEAP_MAX_SIZE / 2 on 64-bit)
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

void use_one_blas_thread() {
  using SetThreads = void (*)(int);
  if (auto* set = symbol<SetThreads>("openblas_set_num_threads")) set(1);
}

std::string pin_cpu_kernels() {
  use_one_blas_thread();
  const char* native = std::getenv("MIXTD_NATIVE_KERNELS");
  if (native && *native && std::strcmp(native, "0") != 0) return "native (MIXTD_NATIVE_KERNELS)";
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return "native (no AVX2 and FMA)";
  std::string done;
  // OpenBLAS (DYNAMIC_ARCH) chose its kernels when it was loaded, from the
  // CPU or OPENBLAS_CORETYPE; choose again with the variable set. Nothing
  // has called it yet, and its buffers do not depend on the choice.
  using Name = char* (*)();
  using Init = void (*)();
  auto* name = symbol<Name>("openblas_get_corename");
  auto* quit = symbol<Init>("gotoblas_dynamic_quit");
  auto* init = symbol<Init>("gotoblas_dynamic_init");
  if (name && quit && init) {
    setenv("OPENBLAS_CORETYPE", "Haswell", 1);  // also for child processes
    if (std::strcmp(name(), "Haswell") != 0) {
      quit();
      init();
    }
    done += std::string("openblas ") + name();
  }
  // oneDNN reads its limit once, at its first primitive; the call wins over
  // ONEDNN_MAX_CPU_ISA / DNNL_MAX_CPU_ISA.
  using SetIsa = int (*)(int);
  using GetIsa = int (*)();
  auto* set_isa = symbol<SetIsa>("dnnl_set_max_cpu_isa");
  auto* get_isa = symbol<GetIsa>("dnnl_get_effective_cpu_isa");
  if (set_isa && get_isa) {
    const bool ok = set_isa(kDnnlIsaAvx2) == 0 && get_isa() == kDnnlIsaAvx2;
    done += std::string(done.empty() ? "" : ", ") + (ok ? "onednn avx2" : "onednn unpinned");
  }
  // ATen reads it at its first dispatch. LibTorch 1.13 already takes AVX2
  // on AVX-512 CPUs (its AVX-512 kernels are opt-in through this very
  // variable); setting it keeps a user's or a later LibTorch's choice out.
  setenv("ATEN_CPU_CAPABILITY", "avx2", 1);
  return done + (done.empty() ? "" : ", ") + "aten avx2";
#else
  return "native (not x86-64)";
#endif
}

}  // namespace mixtd
