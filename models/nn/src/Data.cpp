#include "mixtd/nn/Data.h"

#include <zlib.h>

#include <algorithm>
#include <fstream>

#include "mixtd/support/Error.h"
#include "mixtd/support/Rng.h"

namespace mixtd::nn {

numerics::FloatTensor Dataset::batch(std::int64_t begin, std::int64_t count) const {
  begin = std::clamp<std::int64_t>(begin, 0, size());
  count = std::clamp<std::int64_t>(count, 0, size() - begin);
  numerics::FloatTensor t(count, c, h, w);
  if (store) {
    for (std::int64_t k = 0; k < count; ++k)
      store->load(items[static_cast<std::size_t>(begin + k)], t.data.data() + k * per_image());
    return t;
  }
  const auto* src = images.data() + begin * per_image();
  std::copy(src, src + count * per_image(), t.data.begin());
  return t;
}

std::vector<std::int64_t> Dataset::batch_labels(std::int64_t begin, std::int64_t count) const {
  begin = std::clamp<std::int64_t>(begin, 0, size());
  count = std::clamp<std::int64_t>(count, 0, size() - begin);
  return {labels.begin() + begin, labels.begin() + begin + count};
}

Dataset Dataset::subset(const std::vector<std::int64_t>& indices) const {
  Dataset d;
  d.name = name;
  d.c = c;
  d.h = h;
  d.w = w;
  d.classes = classes;
  d.store = store;
  const std::int64_t k = per_image();
  if (!store) d.images.resize(indices.size() * static_cast<std::size_t>(k));
  d.labels.resize(indices.size());
  if (store) d.items.resize(indices.size());
  for (std::size_t i = 0; i < indices.size(); ++i) {
    const std::int64_t j = indices[i];
    require(j >= 0 && j < size(),
            name + ": subset index " + std::to_string(j) + " out of range 0.." + std::to_string(size() - 1));
    if (store)
      d.items[i] = items[static_cast<std::size_t>(j)];
    else
      std::copy(images.begin() + j * k, images.begin() + (j + 1) * k,
                d.images.begin() + static_cast<std::int64_t>(i) * k);
    d.labels[i] = labels[static_cast<std::size_t>(j)];
  }
  return d;
}

std::vector<std::uint8_t> read_gzip(const std::filesystem::path& path) {
  {
    std::ifstream probe(path, std::ios::binary);
    require(probe.good(), path.string() + ": cannot open (missing file?)");
  }
  gzFile f = gzopen(path.c_str(), "rb");
  require(f != nullptr, path.string() + ": cannot open for reading");
  std::vector<std::uint8_t> out;
  // 64 KiB reads are as fast as larger ones for zlib; a zeroed 1 MiB buffer
  // per file was most of the time of reading a small file (each a fresh
  // mmap under ASan: fuzz_idx spent 80% of its time in the kernel).
  std::vector<std::uint8_t> buf(1 << 16);
  for (;;) {
    const int got = gzread(f, buf.data(), static_cast<unsigned>(buf.size()));
    if (got < 0) {
      int err = 0;
      const std::string msg = gzerror(f, &err);
      gzclose(f);
      throw Error(path.string() + ": not a valid gzip file (" + msg + ")");
    }
    if (got == 0) break;
    out.insert(out.end(), buf.begin(), buf.begin() + got);
  }
  gzclose(f);
  return out;
}

namespace {

std::uint32_t be32(const std::vector<std::uint8_t>& b, std::size_t at) {
  return (std::uint32_t{b[at]} << 24) | (std::uint32_t{b[at + 1]} << 16) | (std::uint32_t{b[at + 2]} << 8) |
         std::uint32_t{b[at + 3]};
}

}  // namespace

Dataset load_idx(const std::filesystem::path& images, const std::filesystem::path& labels, float mean, float stddev) {
  const auto img = read_gzip(images);
  const auto lab = read_gzip(labels);
  require(img.size() >= 16, images.string() + ": truncated IDX header (" + std::to_string(img.size()) + " bytes)");
  require(be32(img, 0) == 2051,
          images.string() + ": wrong magic number " + std::to_string(be32(img, 0)) + " (an IDX image file has 2051)");
  require(lab.size() >= 8, labels.string() + ": truncated IDX header (" + std::to_string(lab.size()) + " bytes)");
  require(be32(lab, 0) == 2049,
          labels.string() + ": wrong magic number " + std::to_string(be32(lab, 0)) + " (an IDX label file has 2049)");
  const std::int64_t n = be32(img, 4), rows = be32(img, 8), cols = be32(img, 12);
  const std::int64_t nl = be32(lab, 4);
  require(n == nl, images.string() + ": " + std::to_string(n) + " images but " + labels.string() + " has " +
                       std::to_string(nl) + " labels");
  require(rows > 0 && cols > 0 && rows <= 4096 && cols <= 4096,
          images.string() + ": bad image size " + std::to_string(rows) + "x" + std::to_string(cols));
  const std::size_t need = 16 + static_cast<std::size_t>(n * rows * cols);
  require(img.size() >= need, images.string() + ": truncated: " + std::to_string(img.size()) + " bytes, header says " +
                                  std::to_string(need));
  require(
      lab.size() >= 8 + static_cast<std::size_t>(n),
      labels.string() + ": truncated: " + std::to_string(lab.size()) + " bytes, header says " + std::to_string(8 + n));
  Dataset d;
  d.name = images.filename().string();
  d.c = 1;
  d.h = rows;
  d.w = cols;
  d.images.resize(static_cast<std::size_t>(n * rows * cols));
  const float scale = 1.0f / (255.0f * stddev), shift = mean / stddev;
  for (std::size_t i = 0; i < d.images.size(); ++i) d.images[i] = static_cast<float>(img[16 + i]) * scale - shift;
  d.labels.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const int v = lab[8 + static_cast<std::size_t>(i)];
    require(v < d.classes, labels.string() + ": label " + std::to_string(v) + " of item " + std::to_string(i) +
                               " is not a class 0..9");
    d.labels[static_cast<std::size_t>(i)] = v;
  }
  return d;
}

std::vector<std::int64_t> permutation(std::int64_t n, std::uint64_t seed) {
  std::vector<std::int64_t> p(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) p[static_cast<std::size_t>(i)] = i;
  Rng rng(seed);
  for (std::int64_t i = n - 1; i > 0; --i)
    std::swap(p[static_cast<std::size_t>(i)], p[rng.below(static_cast<std::uint64_t>(i + 1))]);
  return p;
}

void split_search(Dataset all, std::int64_t search_size, std::uint64_t seed, DataSplit& into) {
  // Search and validation take search_size images each and leave at least one to train on.
  require(search_size >= 0 && 2 * search_size < all.size(),
          all.name + ": search set size " + std::to_string(search_size) + ": legal 0.." +
              std::to_string((all.size() - 1) / 2) + " (the validation set takes as many again)");
  const auto p = permutation(all.size(), seed);
  into.search = all.subset({p.begin(), p.begin() + search_size});
  into.validation = all.subset({p.begin() + search_size, p.begin() + 2 * search_size});
  into.train = all.subset({p.begin() + 2 * search_size, p.end()});
}

FmnistSplit load_fmnist(const std::filesystem::path& dir, std::int64_t search_size, std::uint64_t seed) {
  std::error_code ec;  // a name the file system refuses (too long) is no file, not an exception
  require(std::filesystem::exists(dir / "train-images-idx3-ubyte.gz", ec),
          dir.string() +
              ": no Fashion-MNIST here (train-images-idx3-ubyte.gz missing; the Debian package "
              "dataset-fashion-mnist installs it in " +
              std::string(kFmnistDir) + ")");
  FmnistSplit s;
  split_search(load_idx(dir / "train-images-idx3-ubyte.gz", dir / "train-labels-idx1-ubyte.gz"), search_size, seed, s);
  s.search.name = "fmnist-search";
  s.train.name = "fmnist-train";
  s.test = load_idx(dir / "t10k-images-idx3-ubyte.gz", dir / "t10k-labels-idx1-ubyte.gz");
  s.test.name = "fmnist-test";
  s.description = "fmnist (" + dir.string() + "): train " + std::to_string(s.train.size()) + ", search " +
                  std::to_string(s.search.size()) + ", test " + std::to_string(s.test.size()) +
                  " images of 1x28x28, 10 classes";
  return s;
}

}  // namespace mixtd::nn
