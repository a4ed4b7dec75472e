// Image data sets for the accuracy oracle (SPEC "Data sets and weights").
//
// Fashion-MNIST comes from the Debian package `dataset-fashion-mnist`: its
// gzipped IDX files are read directly with zlib, nothing is downloaded.
// Images are normalised with the training set's mean and standard deviation
// ((x/255 − 0.2860) / 0.3530) into NCHW float batches.
//
// The fixed split: the 60k training images are shuffled with a seeded
// permutation; the first `search_size` (default 5000) become the *search*
// set (the batches the evolutionary search queries, never trained on), the
// rest the *train* set. The 10k t10k images are the *test* set.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "mixtd/numerics/Tensor.h"

namespace mixtd::nn {

inline constexpr float kFmnistMean = 0.2860f;
inline constexpr float kFmnistStd = 0.3530f;
inline constexpr const char* kFmnistDir = "/usr/share/datasets/fashion-mnist";

// Where a data set's pixels come from when they are not all in memory: an
// image folder decodes (and caches) an image when a batch asks for it.
class ImageStore {
 public:
  virtual ~ImageStore() = default;
  // Writes item `item`'s normalised CHW floats (c*h*w of them) to `out`.
  virtual void load(std::int64_t item, float* out) const = 0;
};

struct Dataset {
  std::string name;
  std::int64_t c = 1, h = 28, w = 28;
  std::vector<float> images;         // [size, c, h, w], normalised; empty when `store` is set
  std::vector<std::int64_t> labels;  // [size]
  std::int64_t classes = 10;
  // Streamed sets: image k is `store`'s item `items[k]`.
  std::shared_ptr<const ImageStore> store;
  std::vector<std::int64_t> items;

  std::int64_t size() const { return static_cast<std::int64_t>(labels.size()); }
  std::int64_t per_image() const { return c * h * w; }
  // Images [begin, begin + count) (clipped to the set) as a tensor.
  numerics::FloatTensor batch(std::int64_t begin, std::int64_t count) const;
  std::vector<std::int64_t> batch_labels(std::int64_t begin, std::int64_t count) const;
  // The images at `indices`, in that order.
  Dataset subset(const std::vector<std::int64_t>& indices) const;
};

// The whole decompressed contents of a .gz file (or a plain file). Throws
// mixtd::Error naming the file if it is missing or not valid gzip.
std::vector<std::uint8_t> read_gzip(const std::filesystem::path& path);

// One IDX pair: images (magic 2051, uint8 [n, rows, cols]) and labels
// (magic 2049, uint8 [n]). Throws mixtd::Error naming the file and the
// offending value (magic, counts, truncated data, label ≥ 10).
Dataset load_idx(const std::filesystem::path& images, const std::filesystem::path& labels, float mean = kFmnistMean,
                 float stddev = kFmnistStd);

// A data set's three parts (DataSource.h loads any source into one).
struct DataSplit {
  Dataset train;       // the training part minus the search and validation sets
  Dataset search;      // search_size training images (the search's fitness), never trained on
  Dataset validation;  // the next search_size (the final choice among fine-tuned designs), never trained on
  Dataset test;        // the test part
  // false: the source is one pool of images (an NPY pair, a flat image
  // folder) that is the search and the test set at once; no training part.
  bool has_train = true;
  std::string description;  // one line: the source, the parts' sizes, the image shape
};
using FmnistSplit = DataSplit;

// Splits `all` (a training part) into search (the first `search_size` of a
// permutation seeded with `seed`), validation (the next `search_size`) and
// train (the rest). Search stays what it was before validation existed.
void split_search(Dataset all, std::int64_t search_size, std::uint64_t seed, DataSplit& into);

// Loads the four files under `dir` and splits them (see above).
FmnistSplit load_fmnist(const std::filesystem::path& dir = kFmnistDir, std::int64_t search_size = 5000,
                        std::uint64_t seed = 0);

// The seeded permutation of [0, n) used by the split (Fisher-Yates on mixtd::Rng).
std::vector<std::int64_t> permutation(std::int64_t n, std::uint64_t seed);

}  // namespace mixtd::nn
