#include "mixtd/nn/DataSource.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>

#include "mixtd/nn/ImageFolder.h"
#include "mixtd/nn/Npy.h"
#include "mixtd/support/Error.h"

namespace mixtd::nn {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::size_t at = 0;
  for (;;) {
    const auto comma = s.find(',', at);
    out.push_back(s.substr(at, comma - at));
    if (comma == std::string::npos) return out;
    at = comma + 1;
  }
}

// The per-channel values of --mean/--std for `c` channels (one value: all).
std::vector<float> per_channel(const std::vector<float>& given, const float* fallback, std::int64_t c,
                               const std::string& what) {
  if (given.empty()) return {fallback, fallback + c};
  require(given.size() == 1 || static_cast<std::int64_t>(given.size()) == c,
          what + ": " + std::to_string(given.size()) + " values for " + std::to_string(c) + " channels (give 1 or " +
              std::to_string(c) + ")");
  for (float v : given) require(std::isfinite(v), what + ": " + std::to_string(v) + " is not finite");
  if (what == "--std")
    for (float v : given) require(v > 0, "--std " + std::to_string(v) + ": must be > 0");
  if (given.size() == 1) return std::vector<float>(static_cast<std::size_t>(c), given[0]);
  return given;
}

void require_labels(const Dataset& d, const std::string& file) {
  for (std::size_t i = 0; i < d.labels.size(); ++i)
    require(d.labels[i] >= 0 && d.labels[i] < 1000000, file + ": label " + std::to_string(d.labels[i]) + " of item " +
                                                           std::to_string(i) + " out of range 0..999999");
}

Dataset load_npy_pair(const std::string& images, const std::string& labels) {
  const NpyArray x = read_npy(images);
  const NpyArray y = read_npy(labels);
  require(x.shape.size() == 4, images + ": shape " + x.shape_str() + ": images must be NCHW (rank 4), not rank " +
                                   std::to_string(x.shape.size()));
  require(y.shape.size() == 1, labels + ": shape " + y.shape_str() + ": labels must be rank 1 (N,)");
  require(x.shape[0] == y.shape[0], images + ": " + std::to_string(x.shape[0]) + " images but " + labels + " has " +
                                        std::to_string(y.shape[0]) + " labels");
  require(x.shape[0] > 0, images + ": no images (shape " + x.shape_str() + ")");
  Dataset d;
  d.name = fs::path(images).filename().string();
  d.c = x.shape[1];
  d.h = x.shape[2];
  d.w = x.shape[3];
  d.images = npy_float32(x, images);
  d.labels = npy_labels(y, labels);
  require_labels(d, labels);
  d.classes = *std::max_element(d.labels.begin(), d.labels.end()) + 1;
  float lo = 0, hi = 0;
  for (float v : d.images) {
    require(std::isfinite(v), images + ": holds a non-finite value (NaN or Inf)");
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (lo >= 0 && hi > 2)
    std::cerr << "mixtd: warning: " << images << ": values " << lo << ".." << hi
              << " look like raw pixels; NPY images are used as they are (normalise them as the network expects)\n";
  return d;
}

std::string cifar_dir(const std::string& dir) {
  std::error_code ec;  // a name the file system refuses (too long) is no folder/file, not an exception
  require(fs::is_directory(dir, ec), dir + ": no such folder (cifar10:DIR wants the folder of data_batch_1.bin ...)");
  if (fs::exists(fs::path(dir) / "data_batch_1.bin", ec)) return dir;
  if (fs::exists(fs::path(dir) / "cifar-10-batches-bin" / "data_batch_1.bin", ec))
    return (fs::path(dir) / "cifar-10-batches-bin").string();
  throw Error(dir + ": no data_batch_1.bin (the CIFAR-10 binary version: data_batch_1..5.bin, test_batch.bin)");
}

Dataset concat(std::vector<Dataset> parts, const std::string& name) {
  Dataset all = std::move(parts.front());
  for (std::size_t i = 1; i < parts.size(); ++i) {
    all.images.insert(all.images.end(), parts[i].images.begin(), parts[i].images.end());
    all.labels.insert(all.labels.end(), parts[i].labels.begin(), parts[i].labels.end());
  }
  all.name = name;
  return all;
}

std::int64_t search_size_for(const DataConfig& c, std::int64_t train) {
  if (c.search_size >= 0) {
    require(2 * c.search_size < train, "--search-size " + std::to_string(c.search_size) + ": legal 0.." +
                                           std::to_string((train - 1) / 2) + " (the training part has " +
                                           std::to_string(train) + " images; validation takes as many again)");
    return c.search_size;
  }
  return std::min<std::int64_t>(5000, train / 10);
}

std::string shape_of(const Dataset& d) {
  return std::to_string(d.c) + "x" + std::to_string(d.h) + "x" + std::to_string(d.w);
}

std::string label_range(const DataSplit& s) {
  std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = -1;
  for (const auto* d : {&s.train, &s.search, &s.test})
    for (auto l : d->labels) {
      lo = std::min(lo, l);
      hi = std::max(hi, l);
    }
  return "labels " + std::to_string(lo) + ".." + std::to_string(hi);
}

void describe(DataSplit& s, const std::string& spec, bool known_classes) {
  const Dataset& any = s.test;
  const std::int64_t n = std::max({s.test.classes, s.train.classes, s.search.classes});
  const std::string classes = known_classes ? std::to_string(n) + " classes" : label_range(s);
  if (s.has_train)
    s.description = spec + ": train " + std::to_string(s.train.size()) + ", search " + std::to_string(s.search.size()) +
                    ", validation " + std::to_string(s.validation.size()) + ", test " + std::to_string(s.test.size()) +
                    " images of " + shape_of(any) + ", " + classes;
  else
    s.description = spec + ": " + std::to_string(s.test.size()) + " images of " + shape_of(any) + ", " + classes +
                    " (one pool: search and test are the same images)";
}

DataSplit one_pool(Dataset pool) {
  DataSplit s;
  s.has_train = false;
  s.test = pool;
  s.search = pool;
  s.search.name = pool.name + "-search";
  s.test.name = pool.name;
  s.train = pool.subset({});
  return s;
}

ImageFolderOptions folder_options(const DataConfig& c) {
  ImageFolderOptions o;
  o.resize = c.resize;
  o.crop = c.crop;
  const auto m = per_channel(c.mean, kImagenetMean.data(), 3, "--mean");
  const auto sd = per_channel(c.stddev, kImagenetStd.data(), 3, "--std");
  std::copy(m.begin(), m.end(), o.mean.begin());
  std::copy(sd.begin(), sd.end(), o.stddev.begin());
  o.skip_bad = c.skip_bad;
  o.cache_mb = c.cache_mb;
  return o;
}

DataSplit load_imagefolder(const DataConfig& c, const std::string& arg) {
  const auto parts = split_commas(arg);
  require(parts.size() <= 2 && !parts[0].empty(),
          "--dataset imagefolder:" + arg + ": legal imagefolder:DIR or imagefolder:DIR,LABELS.txt");
  const fs::path dir = parts[0];
  std::error_code ec;  // a name the file system refuses (too long) is no folder/file, not an exception
  require(fs::is_directory(dir, ec), dir.string() + ": no such folder");
  const ImageFolderOptions o = folder_options(c);
  if (parts.size() == 2) return one_pool(image_folder_dataset(read_label_file(dir, parts[1]), o, dir.string()));
  fs::path test_dir;
  for (const char* t : {"val", "test"})
    if (fs::is_directory(dir / t, ec)) test_dir = dir / t;
  if (!fs::is_directory(dir / "train", ec) || test_dir.empty())
    return one_pool(image_folder_dataset(scan_class_folders(dir), o, dir.string()));
  const ImageList train = scan_class_folders(dir / "train");
  const ImageList test = scan_class_folders(test_dir);
  require(train.classes == test.classes, test_dir.string() + ": " + std::to_string(test.classes.size()) +
                                             " class folders, " + (dir / "train").string() + " has " +
                                             std::to_string(train.classes.size()) +
                                             " (the two parts must have the same class folders)");
  DataSplit s;
  Dataset all = image_folder_dataset(train, o, (dir / "train").string());
  split_search(all, search_size_for(c, all.size()), c.seed, s);
  s.test = image_folder_dataset(test, o, test_dir.string());
  return s;
}

}  // namespace

std::string data_spec_help() {
  return "fmnist[:DIR] | npy:IMAGES.npy,LABELS.npy[,TEST_IMAGES.npy,TEST_LABELS.npy] | cifar10:DIR | "
         "imagefolder:DIR[,LABELS.txt] (docs/data.md)";
}

Dataset load_cifar_batch(const std::string& file, const float mean[3], const float stddev[3]) {
  constexpr std::size_t kRecord = 1 + 3 * 32 * 32;
  std::ifstream in(file, std::ios::binary);
  require(in.good(), file + ": cannot open (missing CIFAR-10 batch file?)");
  const std::vector<char> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  require(!b.empty() && b.size() % kRecord == 0, file + ": " + std::to_string(b.size()) +
                                                     " bytes is not a whole number of 3073-byte CIFAR-10 records "
                                                     "(a batch file is 30,730,000 bytes)");
  Dataset d;
  d.name = fs::path(file).filename().string();
  d.c = 3;
  d.h = d.w = 32;
  const std::size_t n = b.size() / kRecord;
  d.images.resize(n * 3072);
  d.labels.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto* r = reinterpret_cast<const unsigned char*>(b.data()) + i * kRecord;
    require(r[0] < 10, file + ": label " + std::to_string(r[0]) + " of record " + std::to_string(i) +
                           " is not a class 0..9 (is this CIFAR-100?)");
    d.labels[i] = r[0];
    for (std::size_t k = 0; k < 3072; ++k) {
      const std::size_t ch = k / 1024;
      d.images[i * 3072 + k] = (static_cast<float>(r[1 + k]) / 255.0f - mean[ch]) / stddev[ch];
    }
  }
  return d;
}

DataSplit load_split(const DataConfig& c) {
  const auto colon = c.spec.find(':');
  const std::string kind = c.spec.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : c.spec.substr(colon + 1);
  DataSplit s;
  if (kind == "fmnist") {
    require(c.mean.empty() && c.stddev.empty(), "--mean/--std: fmnist has its fixed normalisation (0.2860, 0.3530)");
    const std::string dir = arg.empty() ? c.fmnist_dir : arg;
    std::error_code ec;  // a name the file system refuses (too long) is no folder, not an exception
    require(fs::is_directory(dir, ec),
            dir + ": no such folder (Fashion-MNIST: the Debian package dataset-fashion-mnist)");
    s = load_fmnist(dir, c.search_size >= 0 ? c.search_size : 5000, c.seed);
  } else if (kind == "npy") {
    const auto f = split_commas(arg);
    require((f.size() == 2 || f.size() == 4) && std::none_of(f.begin(), f.end(), [](auto& x) { return x.empty(); }),
            "--dataset " + c.spec + ": legal npy:IMAGES.npy,LABELS.npy or npy:TRAIN_X,TRAIN_Y,TEST_X,TEST_Y");
    require(c.mean.empty() && c.stddev.empty(), "--mean/--std: NPY images are used as they are (normalise them first)");
    if (f.size() == 2) {
      s = one_pool(load_npy_pair(f[0], f[1]));
    } else {
      Dataset train = load_npy_pair(f[0], f[1]);
      s.test = load_npy_pair(f[2], f[3]);
      require(train.c == s.test.c && train.h == s.test.h && train.w == s.test.w,
              f[2] + ": images of " + shape_of(s.test) + ", " + f[0] + " has " + shape_of(train));
      split_search(train, search_size_for(c, train.size()), c.seed, s);
    }
  } else if (kind == "cifar10") {
    require(!arg.empty(), "--dataset cifar10: give the folder: cifar10:DIR");
    const std::string dir = cifar_dir(arg);
    const auto m = per_channel(c.mean, kCifarMean, 3, "--mean");
    const auto sd = per_channel(c.stddev, kCifarStd, 3, "--std");
    std::vector<Dataset> parts;
    for (int i = 1; i <= 5; ++i)
      parts.push_back(load_cifar_batch(dir + "/data_batch_" + std::to_string(i) + ".bin", m.data(), sd.data()));
    Dataset train = concat(std::move(parts), "cifar10-train");
    split_search(train, search_size_for(c, train.size()), c.seed, s);
    s.test = load_cifar_batch(dir + "/test_batch.bin", m.data(), sd.data());
    s.test.name = "cifar10-test";
  } else if (kind == "imagefolder") {
    require(!arg.empty(), "--dataset imagefolder: give the folder: imagefolder:DIR");
    s = load_imagefolder(c, arg);
  } else {
    throw Error("--dataset '" + c.spec + "': legal " + data_spec_help());
  }
  s.search.name = s.search.name.empty() ? "search" : s.search.name;
  describe(s, c.spec, kind != "npy" && !(kind == "imagefolder" && c.spec.find(',') != std::string::npos));
  return s;
}

void require_fits(const Dataset& d, const net::Network& n) {
  require(d.c == n.input_shape.c && d.h == n.input_shape.h && d.w == n.input_shape.w,
          d.name + ": images of " + shape_of(d) + " do not fit network '" + n.name + "' input " + n.input_shape.str() +
              (d.store ? " (an image folder's size is --crop)" : ""));
  const auto outs = n.outputs();
  if (outs.size() != 1) return;
  const std::int64_t classes = n.shape_of(outs[0]).numel();
  for (std::size_t i = 0; i < d.labels.size(); ++i)
    require(d.labels[i] < classes, d.name + ": label " + std::to_string(d.labels[i]) + " of image " +
                                       std::to_string(i) + " is out of range for network '" + n.name + "' with " +
                                       std::to_string(classes) + " outputs (legal 0.." + std::to_string(classes - 1) +
                                       ")");
}

}  // namespace mixtd::nn
