// One data-set interface for every command that takes data (`--dataset`):
// a source spec names where the images are, and load_split() returns its
// train / search / test parts (Data.h DataSplit), seeded, normalised, the
// search set always carved from the training part, never from the test part.
//
//   fmnist[:DIR]                      Fashion-MNIST's IDX files (Debian's dataset-fashion-mnist)
//   npy:IMAGES.npy,LABELS.npy         float32 NCHW (already normalised) + integer labels: one pool
//   npy:TRAIN_X,TRAIN_Y,TEST_X,TEST_Y the same with a training part
//   cifar10:DIR                       the binary batches data_batch_{1..5}.bin + test_batch.bin
//   imagefolder:DIR                   DIR/train/<class>/… and DIR/val/<class>/… (or DIR/<class>/…: one pool)
//   imagefolder:DIR,LABELS.txt        a flat folder + "NAME LABEL" lines (ImageNet's validation layout): one pool
//
// A one-pool source has no training part: its images are the search set
// and the test set at once (`mixtd accuracy` works on them; train, finetune
// and search refuse, they need a training part).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mixtd/net/Network.h"
#include "mixtd/nn/Data.h"

namespace mixtd::nn {

struct DataConfig {
  std::string spec = "fmnist";
  std::string fmnist_dir = kFmnistDir;  // for a plain "fmnist"
  std::int64_t search_size = -1;        // -1: min(5000, a tenth of the training part)
  std::uint64_t seed = 0;               // the search/train split's permutation
  std::vector<float> mean, stddev;      // per channel (or one for all); empty: the source's convention
  int resize = 256, crop = 224;         // imagefolder: torchvision's Resize + CenterCrop
  bool skip_bad = false;                // imagefolder: skip undecodable images
  std::int64_t cache_mb = 1024;         // imagefolder: decode cache
};

// The help text of --dataset (the forms above, one per line).
std::string data_spec_help();

// Loads the source `c.spec` names. Throws mixtd::Error, naming the file and
// the offending value, for an unknown spec, a missing file or folder, a file
// of the wrong size, dtype or rank, labels out of range, or mismatched parts.
DataSplit load_split(const DataConfig& c);

// Throws mixtd::Error unless `d`'s images have the network's input shape and
// its labels are below the network's output count (naming the data set, the
// network and both shapes).
void require_fits(const Dataset& d, const net::Network& n);

// CIFAR-10's per-channel mean and standard deviation (the usual normalisation).
inline constexpr float kCifarMean[3] = {0.4914f, 0.4822f, 0.4465f};
inline constexpr float kCifarStd[3] = {0.2470f, 0.2435f, 0.2616f};

// One CIFAR-10 binary batch file (records of 1 label byte + 3072 pixel bytes,
// R then G then B planes of 32x32), normalised with mean/std.
Dataset load_cifar_batch(const std::string& file, const float mean[3], const float stddev[3]);

}  // namespace mixtd::nn
