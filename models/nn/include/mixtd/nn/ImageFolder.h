// ImageNet-style image folders: class subfolders of JPEG/PNG files (as
// torchvision's ImageFolder reads them), or a flat folder with a label file
// (ImageNet's validation layout). Images are decoded when a batch asks for
// them, preprocessed with torchvision's evaluation transform (Image.h) and
// kept in a decode cache, so a search that queries the same images again
// never decodes one twice.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "mixtd/nn/Data.h"

namespace mixtd::nn {

// ImageNet's mean and standard deviation, torchvision's Normalize defaults.
inline constexpr std::array<float, 3> kImagenetMean = {0.485f, 0.456f, 0.406f};
inline constexpr std::array<float, 3> kImagenetStd = {0.229f, 0.224f, 0.225f};

struct ImageList {
  std::vector<std::filesystem::path> files;
  std::vector<std::int64_t> labels;
  std::vector<std::string> classes;  // class folder names (index = label); empty for a label file
};

// DIR/<class>/**.{jpg,jpeg,png} (any case), classes and files sorted by name
// as torchvision does. Throws mixtd::Error for a missing folder, a folder
// with no class folders, or an empty class folder (named).
ImageList scan_class_folders(const std::filesystem::path& dir);

// A flat folder of images and a label file: one "NAME LABEL" per line
// (LABEL a class index from 0, as Caffe's ImageNet val.txt); '#' comments.
// Throws mixtd::Error naming the file:line of a malformed line, a missing
// image or a negative label.
ImageList read_label_file(const std::filesystem::path& dir, const std::filesystem::path& labels);

struct ImageFolderOptions {
  int resize = 256;  // shorter side before the crop
  int crop = 224;
  std::array<float, 3> mean = kImagenetMean, stddev = kImagenetStd;
  bool skip_bad = false;         // skip undecodable images (decodes them all up front), else refuse
  std::int64_t cache_mb = 1024;  // decode cache (preprocessed crops; 147 KB each at 224)
};

// A streamed 3 x crop x crop data set of `list`'s images. With skip_bad,
// every image is decoded now and the undecodable ones are dropped (counted
// on stderr with the first names); otherwise the first batch that meets
// one throws mixtd::Error naming it.
Dataset image_folder_dataset(const ImageList& list, const ImageFolderOptions& o, const std::string& name);

}  // namespace mixtd::nn
