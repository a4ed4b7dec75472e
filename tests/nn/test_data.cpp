// mixtd::nn data sources (DataSource.h): NPY, CIFAR-10 and image folders
// written by the test, their splits, and one clear error per kind of bad
// input. The pixels of decoded images are checked against Pillow in
// test_image.cpp; here, what the sources do with them.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include "mixtd/net/Zoo.h"
#include "mixtd/nn/DataSource.h"
#include "mixtd/nn/ImageFolder.h"
#include "mixtd/nn/Npy.h"
#include "mixtd/support/Error.h"

namespace {

using namespace mixtd;
namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const auto d = fs::temp_directory_path() / ("mixtd_data_test_" + std::to_string(::getpid())) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// n images of c x h x w with value (i*1000 + k) / 1e4 and labels i mod classes.
void write_npy_pair(const fs::path& x, const fs::path& y, std::int64_t n, std::int64_t c, std::int64_t h,
                    std::int64_t w, std::int64_t classes = 10) {
  std::vector<float> img(static_cast<std::size_t>(n * c * h * w));
  for (std::size_t k = 0; k < img.size(); ++k)
    img[k] = static_cast<float>(static_cast<double>(k / (c * h * w) * 1000 + k % (c * h * w)) / 1e4);
  std::vector<std::int64_t> lab(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) lab[static_cast<std::size_t>(i)] = i % classes;
  nn::write_npy(x, "<f4", {n, c, h, w}, img.data(), img.size() * sizeof(float));
  nn::write_npy(y, "<i8", {n}, lab.data(), lab.size() * sizeof(std::int64_t));
}

nn::DataSplit load(const std::string& spec) {
  nn::DataConfig c;
  c.spec = spec;
  return nn::load_split(c);
}

TEST(Npy, RoundTripsAndReadsWhatNumpyWrites) {
  const auto d = fresh_dir("npy");
  write_npy_pair(d / "x.npy", d / "y.npy", 5, 2, 3, 4);
  const nn::NpyArray x = nn::read_npy(d / "x.npy");
  EXPECT_EQ(x.descr, "<f4");
  EXPECT_EQ(x.shape, (std::vector<std::int64_t>{5, 2, 3, 4}));
  EXPECT_EQ(x.shape_str(), "(5, 2, 3, 4)");
  const auto v = nn::npy_float32(x, "x");
  EXPECT_FLOAT_EQ(v[24 + 7], 1007.0f / 1e4f);
  // numpy's data starts at a multiple of 64 bytes (a header it would write).
  std::ifstream in(d / "x.npy", std::ios::binary);
  std::string head(10, '\0');
  in.read(head.data(), 10);
  const std::size_t header_len = static_cast<unsigned char>(head[8]) | (static_cast<unsigned char>(head[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  // A numpy-written int32 label file (bytes as numpy 1.24 writes them).
  std::string dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
  dict.resize(117, ' ');
  std::string bytes = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict + "\n";  // 0x76 = 118
  for (std::int32_t k : {7, -1, 3}) bytes.append(reinterpret_cast<const char*>(&k), 4);
  std::ofstream(d / "l.npy", std::ios::binary) << bytes;
  EXPECT_EQ(nn::npy_labels(nn::read_npy(d / "l.npy"), "l"), (std::vector<std::int64_t>{7, -1, 3}));
}

TEST(Npy, BadFilesSayWhatIsWrong) {
  const auto d = fresh_dir("npybad");
  std::ofstream(d / "text.npy") << "not numpy";
  EXPECT_NE(error_of([&] { nn::read_npy(d / "text.npy"); }).find("text.npy: not a NumPy .npy file"), std::string::npos);
  const double f64[4] = {1, 2, 3, 4};
  nn::write_npy(d / "f64.npy", "<f8", {1, 1, 2, 2}, f64, sizeof f64);
  const std::string e = error_of([&] { nn::npy_float32(nn::read_npy(d / "f64.npy"), "f64.npy"); });
  EXPECT_NE(e.find("f64.npy: dtype <f8 where float32 (<f4) is needed"), std::string::npos) << e;
  EXPECT_NE(e.find("astype(numpy.float32)"), std::string::npos) << e;
  // Truncated data.
  write_npy_pair(d / "x.npy", d / "y.npy", 4, 1, 2, 2);
  std::string full;
  {
    std::ifstream in(d / "x.npy", std::ios::binary);
    full.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::ofstream(d / "cut.npy", std::ios::binary) << full.substr(0, full.size() - 5);
  EXPECT_NE(error_of([&] { nn::read_npy(d / "cut.npy"); }).find("truncated"), std::string::npos);
}

TEST(DataSource, NpyPairIsOnePoolUsedAsItIs) {
  const auto d = fresh_dir("pool");
  write_npy_pair(d / "x.npy", d / "y.npy", 12, 3, 4, 5);
  const auto s = load("npy:" + (d / "x.npy").string() + "," + (d / "y.npy").string());
  EXPECT_FALSE(s.has_train);
  EXPECT_EQ(s.train.size(), 0);
  EXPECT_EQ(s.test.size(), 12);
  EXPECT_EQ(s.search.size(), 12);
  EXPECT_EQ(s.test.c, 3);
  EXPECT_EQ(s.test.h, 4);
  EXPECT_EQ(s.test.w, 5);
  EXPECT_EQ(s.test.labels[11], 1);
  EXPECT_FLOAT_EQ(s.test.batch(7, 1).data[3], 7003.0f / 1e4f);  // no normalisation applied
  EXPECT_NE(s.description.find("one pool"), std::string::npos);
}

TEST(DataSource, FourNpyFilesCarveTheSearchSetFromTheTrainingPartOnly) {
  const auto d = fresh_dir("four");
  write_npy_pair(d / "tx.npy", d / "ty.npy", 200, 1, 2, 2);
  write_npy_pair(d / "vx.npy", d / "vy.npy", 30, 1, 2, 2);
  nn::DataConfig c;
  c.spec = "npy:" + (d / "tx.npy").string() + "," + (d / "ty.npy").string() + "," + (d / "vx.npy").string() + "," +
           (d / "vy.npy").string();
  const auto s = nn::load_split(c);
  EXPECT_TRUE(s.has_train);
  EXPECT_EQ(s.search.size(), 20);  // default: a tenth of 200 (below 5000)
  EXPECT_EQ(s.validation.size(), 20);
  EXPECT_EQ(s.train.size(), 160);
  EXPECT_EQ(s.test.size(), 30);
  // Search, validation and train partition the training part; the first pixel names the image.
  std::set<float> seen;
  for (const auto* part : {&s.search, &s.validation, &s.train})
    for (std::int64_t i = 0; i < part->size(); ++i) seen.insert(part->batch(i, 1).data[0]);
  EXPECT_EQ(seen.size(), 200u);
  EXPECT_EQ(*seen.rbegin(), 199000.0f / 1e4f);
  // Seeded: the same seed the same split, another seed another.
  const auto again = nn::load_split(c);
  EXPECT_EQ(again.search.batch(0, 20).data, s.search.batch(0, 20).data);
  c.seed = 1;
  EXPECT_NE(nn::load_split(c).search.batch(0, 20).data, s.search.batch(0, 20).data);
  c.search_size = 100;  // validation takes as many again: nothing left to train on
  EXPECT_NE(error_of([&] { nn::load_split(c); }).find("--search-size 100: legal 0..99"), std::string::npos);
}

TEST(DataSource, NpyOfTheWrongShapeOrLabelsIsRefused) {
  const auto d = fresh_dir("npyshape");
  const float x3[8] = {};
  nn::write_npy(d / "r3.npy", "<f4", {2, 2, 2}, x3, sizeof x3);
  const std::int64_t y2[2] = {0, 1}, yneg[2] = {0, -3};
  nn::write_npy(d / "y2.npy", "<i8", {2}, y2, sizeof y2);
  nn::write_npy(d / "yneg.npy", "<i8", {2}, yneg, sizeof yneg);
  const std::string r3 = error_of([&] { load("npy:" + (d / "r3.npy").string() + "," + (d / "y2.npy").string()); });
  EXPECT_NE(r3.find("r3.npy: shape (2, 2, 2): images must be NCHW (rank 4)"), std::string::npos) << r3;
  const float x4[8] = {};
  nn::write_npy(d / "x4.npy", "<f4", {2, 1, 2, 2}, x4, sizeof x4);
  const std::string neg = error_of([&] { load("npy:" + (d / "x4.npy").string() + "," + (d / "yneg.npy").string()); });
  EXPECT_NE(neg.find("yneg.npy: label -3 of item 1 out of range"), std::string::npos) << neg;
  const std::int64_t y3[3] = {0, 1, 2};
  nn::write_npy(d / "y3.npy", "<i8", {3}, y3, sizeof y3);
  const std::string count = error_of([&] { load("npy:" + (d / "x4.npy").string() + "," + (d / "y3.npy").string()); });
  EXPECT_NE(count.find("2 images but"), std::string::npos) << count;
  EXPECT_NE(error_of([&] { load("npy:" + (d / "x4.npy").string()); }).find("legal npy:IMAGES.npy,LABELS.npy"),
            std::string::npos);
  EXPECT_NE(
      error_of([&] { load("npy:" + (d / "none.npy").string() + "," + (d / "y3.npy").string()); }).find("none.npy"),
      std::string::npos);
}

TEST(DataSource, TheNetworkMustFitTheData) {
  const auto d = fresh_dir("fit");
  write_npy_pair(d / "x.npy", d / "y.npy", 4, 1, 28, 28, 12);  // labels up to 3 (n = 4)
  auto s = load("npy:" + (d / "x.npy").string() + "," + (d / "y.npy").string());
  const net::Network fm = net::build_zoo("resnet18-fmnist:width=0.25");
  EXPECT_NO_THROW(nn::require_fits(s.test, fm));
  s.test.labels[2] = 10;
  const std::string lab = error_of([&] { nn::require_fits(s.test, fm); });
  EXPECT_NE(lab.find("label 10 of image 2 is out of range for network 'resnet18-fmnist' with 10 outputs (legal 0..9)"),
            std::string::npos)
      << lab;
  write_npy_pair(d / "x3.npy", d / "y3.npy", 2, 3, 28, 28);
  const std::string shape = error_of(
      [&] { nn::require_fits(load("npy:" + (d / "x3.npy").string() + "," + (d / "y3.npy").string()).test, fm); });
  EXPECT_NE(shape.find("images of 3x28x28 do not fit network 'resnet18-fmnist' input 1x28x28"), std::string::npos)
      << shape;
}

// A CIFAR-10 batch of n records: label i mod 10, pixel k of record i = (i + k) mod 256.
void write_cifar(const fs::path& p, int n, int first = 0) {
  std::string b;
  for (int i = first; i < first + n; ++i) {
    b += static_cast<char>(i % 10);
    for (int k = 0; k < 3072; ++k) b += static_cast<char>((i + k) % 256);
  }
  std::ofstream(p, std::ios::binary) << b;
}

TEST(DataSource, CifarBinaryBatches) {
  const auto d = fresh_dir("cifar") / "cifar-10-batches-bin";
  fs::create_directories(d);
  for (int i = 1; i <= 5; ++i) write_cifar(d / ("data_batch_" + std::to_string(i) + ".bin"), 20, 20 * (i - 1));
  write_cifar(d / "test_batch.bin", 7, 1000);
  const auto s = load("cifar10:" + d.parent_path().string());  // the folder above is accepted too
  EXPECT_TRUE(s.has_train);
  EXPECT_EQ(s.search.size(), 10);
  EXPECT_EQ(s.validation.size(), 10);
  EXPECT_EQ(s.train.size(), 80);
  EXPECT_EQ(s.test.size(), 7);
  EXPECT_EQ(s.test.c, 3);
  EXPECT_EQ(s.test.h, 32);
  EXPECT_EQ(s.test.labels[3], 3);  // record 1003
  const auto x = s.test.batch(3, 1);
  // Record 1003, blue plane (k = 2048 + 5): byte (1003 + 2053) mod 256, normalised with channel 2's mean/std.
  const float byte = static_cast<float>((1003 + 2053) % 256);
  EXPECT_FLOAT_EQ(x.data[2048 + 5], (byte / 255.0f - nn::kCifarMean[2]) / nn::kCifarStd[2]);
  // The wrong size.
  std::ofstream(d / "test_batch.bin", std::ios::binary) << std::string(3073 * 2 + 5, '\0');
  const std::string e = error_of([&] { load("cifar10:" + d.string()); });
  EXPECT_NE(e.find("test_batch.bin: 6151 bytes is not a whole number of 3073-byte CIFAR-10 records"), std::string::npos)
      << e;
  EXPECT_NE(error_of([&] { load("cifar10:" + (d / "nowhere").string()); }).find("no such folder"), std::string::npos);
}

TEST(DataSource, UnknownSpecNamesTheLegalForms) {
  const std::string e = error_of([] { load("mnist"); });
  EXPECT_NE(e.find("--dataset 'mnist': legal fmnist[:DIR] | npy:"), std::string::npos) << e;
}

const fs::path kFolder = fs::path(MIXTD_SOURCE_DIR) / "tests/nn/data/imagefolder";

// A copy of the committed image folder (test_image.cpp's fixtures) to change.
fs::path copy_folder(const std::string& name) {
  const auto d = fresh_dir(name);
  fs::copy(kFolder, d, fs::copy_options::recursive);
  return d;
}

TEST(ImageFolder, ClassFoldersSortedAndTorchvisionsFileOrder) {
  const nn::ImageList l = nn::scan_class_folders(kFolder);
  ASSERT_GE(l.classes.size(), 2u);
  EXPECT_TRUE(std::is_sorted(l.classes.begin(), l.classes.end()));
  EXPECT_TRUE(std::is_sorted(l.labels.begin(), l.labels.end()));
  for (std::size_t i = 0; i < l.files.size(); ++i)
    EXPECT_EQ(l.files[i].parent_path().filename().string(), l.classes[static_cast<std::size_t>(l.labels[i])]);
  const auto s = load("imagefolder:" + kFolder.string());
  EXPECT_FALSE(s.has_train);
  EXPECT_EQ(s.test.size(), static_cast<std::int64_t>(l.files.size()));
  EXPECT_EQ(s.test.c, 3);
  EXPECT_EQ(s.test.h, 224);
  EXPECT_EQ(s.test.classes, static_cast<std::int64_t>(l.classes.size()));
}

TEST(ImageFolder, TrainAndValPartsAndTheDecodeCache) {
  const auto root = fresh_dir("trainval");
  fs::copy(kFolder, root / "train", fs::copy_options::recursive);
  fs::copy(kFolder, root / "val", fs::copy_options::recursive);
  nn::DataConfig c;
  c.spec = "imagefolder:" + root.string();
  c.resize = 40;
  c.crop = 32;
  c.search_size = 2;
  const auto s = nn::load_split(c);
  EXPECT_TRUE(s.has_train);
  EXPECT_EQ(s.search.size(), 2);
  EXPECT_EQ(s.search.size() + s.validation.size() + s.train.size(), s.test.size());
  const auto first = s.test.batch(0, s.test.size());
  // Decoded once: with the files gone the same batch comes from the cache.
  fs::remove_all(root / "val");
  EXPECT_EQ(s.test.batch(0, s.test.size()).data, first.data);
  // Without a cache every batch decodes again, and a missing file is named.
  c.cache_mb = 0;
  fs::copy(kFolder, root / "val", fs::copy_options::recursive);
  const auto t = nn::load_split(c);
  EXPECT_EQ(t.test.batch(0, t.test.size()).data, first.data);
  const auto gone = nn::scan_class_folders(root / "val").files[0];
  fs::remove(gone);
  EXPECT_NE(error_of([&] { t.test.batch(0, 1); }).find(gone.filename().string()), std::string::npos);
}

TEST(ImageFolder, BadFoldersAndImages) {
  EXPECT_NE(error_of([] { load("imagefolder:/nonexistent/imagenet"); }).find("/nonexistent/imagenet: no such folder"),
            std::string::npos);
  const auto d = copy_folder("bad");
  fs::create_directories(d / "zz_empty");
  const std::string empty = error_of([&] { load("imagefolder:" + d.string()); });
  EXPECT_NE(empty.find("zz_empty: empty class folder"), std::string::npos) << empty;
  fs::remove(d / "zz_empty");
  // An undecodable image: named when a batch meets it, skipped with --skip-bad-images.
  const auto l = nn::scan_class_folders(d);
  std::ofstream(d / l.classes[0] / "broken.jpg") << "not a jpeg at all";
  nn::DataConfig c;
  c.spec = "imagefolder:" + d.string();
  c.resize = 40;
  c.crop = 32;
  const auto s = nn::load_split(c);
  EXPECT_EQ(s.test.size(), static_cast<std::int64_t>(l.files.size()) + 1);
  EXPECT_NE(error_of([&] { s.test.batch(0, s.test.size()); }).find("broken.jpg"), std::string::npos);
  c.skip_bad = true;
  const auto skipped = nn::load_split(c);
  EXPECT_EQ(skipped.test.size(), static_cast<std::int64_t>(l.files.size()));
  EXPECT_NO_THROW(skipped.test.batch(0, skipped.test.size()));
}

TEST(ImageFolder, FlatFolderWithALabelFile) {
  const auto d = fresh_dir("flat");
  const auto l = nn::scan_class_folders(kFolder);
  std::ofstream labels(d / "val.txt");
  labels << "# ImageNet validation layout\n";
  for (std::size_t i = 0; i < l.files.size(); ++i) {
    const std::string name = "img_" + std::to_string(i) + l.files[i].extension().string();
    fs::copy_file(l.files[i], d / name);
    labels << name << " " << (l.labels[i] * 7) << "\n";
  }
  labels.close();
  const auto s = load("imagefolder:" + d.string() + "," + (d / "val.txt").string());
  EXPECT_FALSE(s.has_train);
  ASSERT_EQ(s.test.size(), static_cast<std::int64_t>(l.files.size()));
  EXPECT_EQ(s.test.labels.back(), l.labels.back() * 7);
  std::ofstream(d / "bad.txt") << "img_0.jpg 1\nimg_1.png cat\n";
  const std::string e = error_of([&] { load("imagefolder:" + d.string() + "," + (d / "bad.txt").string()); });
  EXPECT_NE(e.find("bad.txt:2: label 'cat' is not an integer"), std::string::npos) << e;
  std::ofstream(d / "missing.txt") << "nothere.jpg 1\n";
  EXPECT_NE(error_of([&] {
              load("imagefolder:" + d.string() + "," + (d / "missing.txt").string());
            }).find("missing.txt:1: no image"),
            std::string::npos);
}

}  // namespace
