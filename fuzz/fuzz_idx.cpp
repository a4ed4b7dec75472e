// nn::load_idx on an IDX pair (MNIST/Fashion-MNIST images, magic 2051, and
// labels, magic 2049; plain or gzipped). It takes two paths, so the input
// is split in two: a 4-byte big-endian length L, then L bytes of the images
// file (fewer if the input ends first), then the labels file.
#include <algorithm>

#include "FuzzInput.h"
#include "mixtd/nn/Data.h"
#include "mixtd/support/Error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  const std::size_t length =
      (std::size_t{data[0]} << 24) | (std::size_t{data[1]} << 16) | (std::size_t{data[2]} << 8) | std::size_t{data[3]};
  const std::size_t split = std::min(length, size - 4);
  const auto images = mixtd::fuzz::write_input(data + 4, split, "fuzz-images.idx");
  const auto labels = mixtd::fuzz::write_input(data + 4 + split, size - 4 - split, "fuzz-labels.idx");
  try {
    (void)mixtd::nn::load_idx(images, labels);
  } catch (const mixtd::Error&) {
  }
  return 0;
}
