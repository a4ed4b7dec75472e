#include "mixtd/nn/ImageFolder.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "mixtd/nn/Image.h"
#include "mixtd/support/Error.h"

namespace mixtd::nn {

namespace fs = std::filesystem;

namespace {

bool is_image_file(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png";
}

// Decodes, preprocesses and normalises on demand; the uint8 crops are kept
// (up to the cache budget) so a repeated batch costs a copy, not a decode.
class ImageFolderStore final : public ImageStore {
 public:
  ImageFolderStore(std::vector<fs::path> files, ImageFolderOptions o) : files_(std::move(files)), o_(o) {
    const std::int64_t per = 3LL * o_.crop * o_.crop;
    max_cached_ = o_.cache_mb * 1024 * 1024 / per;
  }

  // The preprocessed crop of `item` (decoded now if not cached).
  RgbImage crop(std::int64_t item) const {
    {
      std::lock_guard<std::mutex> lock(mu_);
      const auto it = cache_.find(item);
      if (it != cache_.end()) return it->second;
    }
    RgbImage img = resize_center_crop(decode_image_file(files_[static_cast<std::size_t>(item)]), o_.resize, o_.crop);
    std::lock_guard<std::mutex> lock(mu_);
    if (static_cast<std::int64_t>(cache_.size()) < max_cached_) cache_.emplace(item, img);
    return img;
  }

  void load(std::int64_t item, float* out) const override {
    const RgbImage img = crop(item);
    const std::size_t hw = static_cast<std::size_t>(img.width) * static_cast<std::size_t>(img.height);
    // torchvision: ToTensor (x / 255 in float32), then Normalize ((x - mean) / std).
    for (std::size_t c = 0; c < 3; ++c)
      for (std::size_t i = 0; i < hw; ++i)
        out[c * hw + i] = (static_cast<float>(img.pixels[3 * i + c]) / 255.0f - o_.mean[c]) / o_.stddev[c];
  }

 private:
  std::vector<fs::path> files_;
  ImageFolderOptions o_;
  std::int64_t max_cached_ = 0;
  mutable std::mutex mu_;
  mutable std::unordered_map<std::int64_t, RgbImage> cache_;
};

}  // namespace

ImageList scan_class_folders(const fs::path& dir) {
  std::error_code ec;  // a name the file system refuses (too long) is no folder, not an exception
  require(fs::is_directory(dir, ec), dir.string() + ": no such folder");
  ImageList l;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory()) l.classes.push_back(e.path().filename().string());
  std::sort(l.classes.begin(), l.classes.end());
  require(!l.classes.empty(), dir.string() +
                                  ": no class folders (an image folder is DIR/<class>/<image>.jpg; for a "
                                  "flat folder give a label file: imagefolder:DIR,LABELS.txt)");
  for (std::size_t c = 0; c < l.classes.size(); ++c) {
    const fs::path cdir = dir / l.classes[c];
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(cdir, fs::directory_options::follow_directory_symlink))
      if (e.is_regular_file() && is_image_file(e.path())) files.push_back(e.path());
    require(!files.empty(), cdir.string() + ": empty class folder (no .jpg, .jpeg or .png files)");
    std::sort(files.begin(), files.end());
    for (auto& f : files) {
      l.files.push_back(std::move(f));
      l.labels.push_back(static_cast<std::int64_t>(c));
    }
  }
  return l;
}

ImageList read_label_file(const fs::path& dir, const fs::path& labels) {
  std::error_code ec;  // a name the file system refuses (too long) is no folder/file, not an exception
  require(fs::is_directory(dir, ec), dir.string() + ": no such folder");
  std::ifstream in(labels);
  require(in.good(), labels.string() + ": cannot open the label file");
  ImageList l;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream ss(line);
    std::string name, label, extra;
    if (!(ss >> name)) continue;
    const std::string where = labels.string() + ":" + std::to_string(n);
    require(static_cast<bool>(ss >> label) && !(ss >> extra), where + ": expected 'NAME LABEL', got '" + line + "'");
    std::int64_t v = -1;
    try {
      std::size_t used = 0;
      v = std::stoll(label, &used);
      require(used == label.size(), "");
    } catch (const std::exception&) {
      throw Error(where + ": label '" + label + "' is not an integer");
    }
    require(v >= 0 && v < 1000000, where + ": label " + label + " out of range 0..999999");
    const fs::path f = dir / name;
    require(fs::is_regular_file(f, ec), where + ": no image " + f.string());
    l.files.push_back(f);
    l.labels.push_back(v);
  }
  require(!l.files.empty(), labels.string() + ": no images listed");
  return l;
}

Dataset image_folder_dataset(const ImageList& list, const ImageFolderOptions& o, const std::string& name) {
  require(o.resize >= 1 && o.resize <= 4096, name + ": --resize " + std::to_string(o.resize) + ": legal 1..4096");
  require(o.crop >= 1 && o.crop <= o.resize,
          name + ": --crop " + std::to_string(o.crop) + ": legal 1..--resize (" + std::to_string(o.resize) + ")");
  require(o.cache_mb >= 0 && o.cache_mb <= (1 << 20),
          name + ": --decode-cache-mb " + std::to_string(o.cache_mb) + ": legal 0..1048576");
  Dataset d;
  d.name = name;
  d.c = 3;
  d.h = d.w = o.crop;
  d.classes = list.labels.empty() ? 0 : *std::max_element(list.labels.begin(), list.labels.end()) + 1;
  if (!list.classes.empty()) d.classes = static_cast<std::int64_t>(list.classes.size());
  auto store = std::make_shared<ImageFolderStore>(list.files, o);
  int shown = 0;
  for (std::size_t i = 0; i < list.files.size(); ++i) {
    if (o.skip_bad) {
      try {
        store->crop(static_cast<std::int64_t>(i));
      } catch (const Error& e) {
        if (shown++ < 5) std::cerr << "mixtd: warning: skipping " << e.what() << "\n";
        continue;
      }
    }
    d.items.push_back(static_cast<std::int64_t>(i));
    d.labels.push_back(list.labels[i]);
  }
  if (o.skip_bad && d.items.size() < list.files.size())
    std::cerr << "mixtd: warning: " << name << ": skipped " << list.files.size() - d.items.size() << " of "
              << list.files.size() << " images that do not decode\n";
  require(!d.items.empty(), name + ": no decodable images");
  d.store = std::move(store);
  return d;
}

}  // namespace mixtd::nn
