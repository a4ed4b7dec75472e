// JPEG/PNG decoding and torchvision's evaluation transform against Pillow 9.4
// and torchvision 0.14. The fixtures (tests/nn/data) are regenerated with
//
//   /usr/bin/python3 scripts/gen-image-fixtures
//
// which writes imagefolder/ (9 JPEGs and PNGs: RGB, grey, CMYK, progressive,
// palette with tRNS, RGBA, 16-bit grey, 16-bit interlaced RGB, a PNG named
// .JPEG) and imagefolder-expected/ (Pillow's decode and Resize + CenterCrop
// of each, as gzipped .npy, listed in manifest.txt).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "mixtd/nn/Data.h"
#include "mixtd/nn/Image.h"
#include "mixtd/nn/Npy.h"
#include "mixtd/support/Error.h"

namespace {

using namespace mixtd;
namespace fs = std::filesystem;

const fs::path kData = MIXTD_IMAGE_FIXTURES;
const fs::path kFolder = kData / "imagefolder";
const fs::path kExpected = kData / "imagefolder-expected";

// A uint8 HWC array from numpy.save, gzipped (read with nn::read_npy, which
// reads the numpy-written fixtures: a check of the NPY reader too).
struct Expected {
  int height = 0, width = 0;
  std::vector<std::uint8_t> pixels;
};

Expected read_expected(const fs::path& path) {
  const nn::NpyArray a = nn::read_npy(path);
  EXPECT_EQ(a.descr, "|u1") << path;
  Expected e;
  if (a.shape.size() != 3) {
    ADD_FAILURE() << path << ": shape " << a.shape_str();
    return e;
  }
  EXPECT_EQ(a.shape[2], 3) << path;
  e.height = static_cast<int>(a.shape[0]);
  e.width = static_cast<int>(a.shape[1]);
  e.pixels = a.data;
  return e;
}

struct FixtureImage {
  std::string rel, mode;  // "cats/rgb_300x211.jpg", Pillow's mode on opening
  int width = 0, height = 0;
  std::vector<std::pair<int, int>> transforms;  // (resize, crop)
};

std::vector<FixtureImage> manifest() {
  std::ifstream in(kExpected / "manifest.txt");
  EXPECT_TRUE(in.good()) << "missing " << kExpected / "manifest.txt"
                         << ": run scripts/gen-image-fixtures";
  std::vector<FixtureImage> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    FixtureImage f;
    s >> f.rel >> f.mode >> f.width >> f.height;
    for (int r, c; s >> r >> c;) f.transforms.emplace_back(r, c);
    out.push_back(f);
  }
  return out;
}

TEST(Image, FixturesCoverEveryKind) {
  const auto images = manifest();
  EXPECT_EQ(images.size(), 9u);
  std::set<std::string> modes;
  for (const auto& f : images) modes.insert(f.mode);
  // Pillow modes on opening: 3-colour, grey, CMYK, palette, RGBA, 16-bit grey.
  EXPECT_EQ(modes, (std::set<std::string>{"RGB", "L", "CMYK", "P", "RGBA", "I"}));
}

TEST(Image, DecodeEqualsPillowExactly) {
  for (const auto& f : manifest()) {
    const nn::RgbImage im = nn::decode_image_file(kFolder / f.rel);
    const Expected e = read_expected(kExpected / (f.rel + ".decode.npy.gz"));
    ASSERT_EQ(im.width, e.width) << f.rel;
    ASSERT_EQ(im.height, e.height) << f.rel;
    ASSERT_EQ(im.width, f.width) << f.rel;
    std::size_t differ = 0;
    for (std::size_t i = 0; i < e.pixels.size(); ++i) differ += im.pixels[i] != e.pixels[i];
    EXPECT_EQ(differ, 0u) << f.rel << " (Pillow mode " << f.mode << "): " << differ << " of " << e.pixels.size()
                          << " values differ from Pillow's";
  }
}

TEST(Image, ResizeCenterCropEqualsTorchvision) {
  std::size_t total = 0, exact = 0, within1 = 0, standard = 0;
  for (const auto& f : manifest()) {
    const nn::RgbImage im = nn::decode_image_file(kFolder / f.rel);
    for (const auto& [r, c] : f.transforms) {
      const std::string name = f.rel + ".r" + std::to_string(r) + "c" + std::to_string(c);
      const Expected e = read_expected(kExpected / (name + ".npy.gz"));
      const nn::RgbImage out = nn::resize_center_crop(im, r, c);
      ASSERT_EQ(out.width, c) << name;
      ASSERT_EQ(out.height, c) << name;
      ASSERT_EQ(e.pixels.size(), out.pixels.size()) << name;
      std::size_t ok = 0;
      for (std::size_t i = 0; i < e.pixels.size(); ++i) {
        const int d = std::abs(out.pixels[i] - e.pixels[i]);
        ok += d == 0;
        within1 += d <= 1;
      }
      EXPECT_EQ(ok, e.pixels.size()) << name << ": " << e.pixels.size() - ok << " values differ from torchvision's";
      exact += ok;
      total += e.pixels.size();
      standard += r == 256 && c == 224;
    }
  }
  EXPECT_GE(standard, 2u) << "the fixtures should include torchvision's Resize(256) + CenterCrop(224)";
  const double exact_pct = 100.0 * static_cast<double>(exact) / static_cast<double>(total);
  const double within_pct = 100.0 * static_cast<double>(within1) / static_cast<double>(total);
  std::printf("resize_center_crop vs torchvision: %zu values, %.4f%% exact, %.4f%% within one grey level\n", total,
              exact_pct, within_pct);
  EXPECT_GE(within_pct, 99.9);
}

TEST(Image, ResizeToSameSizeIsIdentity) {
  const nn::RgbImage im = nn::decode_image_file(kFolder / "cats/rgb_300x211.jpg");
  const nn::RgbImage same = nn::resize_bilinear(im, im.width, im.height);
  EXPECT_EQ(same.width, im.width);
  EXPECT_EQ(same.height, im.height);
  EXPECT_EQ(same.pixels, im.pixels);
}

TEST(Image, ResizeOfConstantImageIsConstant) {
  // The fixed-point weights sum to 1 (within rounding), so a flat image stays flat.
  nn::RgbImage im{37, 23, std::vector<std::uint8_t>(37 * 23 * 3, 200)};
  for (auto [w, h] : {std::pair{11, 7}, std::pair{100, 64}, std::pair{37, 60}}) {
    const nn::RgbImage out = nn::resize_bilinear(im, w, h);
    EXPECT_EQ(out.pixels, std::vector<std::uint8_t>(static_cast<std::size_t>(w) * h * 3, 200)) << w << "x" << h;
  }
}

TEST(Image, BadArgumentsThrow) {
  const nn::RgbImage im{2, 2, std::vector<std::uint8_t>(12, 0)};
  EXPECT_THROW(nn::resize_bilinear(im, 0, 3), Error);
  EXPECT_THROW(nn::resize_center_crop(im, 4, 0), Error);
  EXPECT_THROW(nn::resize_bilinear(nn::RgbImage{3, 3, {}}, 2, 2), Error);
}

// A scratch folder for broken files, removed afterwards.
class ImageBrokenFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mixtd_test_image_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::vector<std::uint8_t>& bytes) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return p;
  }
  static std::vector<std::uint8_t> read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  // Decoding `file` throws mixtd::Error naming it and saying `reason`.
  static void expect_refused(const fs::path& file, const std::string& reason) {
    try {
      nn::decode_image_file(file);
      ADD_FAILURE() << file << " decoded";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr(file.string())) << e.what();
      EXPECT_THAT(e.what(), ::testing::HasSubstr(reason)) << e.what();
    }
  }
  fs::path dir_;
};

TEST_F(ImageBrokenFiles, TruncatedJpegThrows) {
  for (const char* rel : {"cats/rgb_300x211.jpg", "dogs/progressive_512x384.jpeg"}) {
    std::vector<std::uint8_t> bytes = read(kFolder / rel);
    bytes.resize(bytes.size() / 2);
    expect_refused(write("half.jpg", bytes), "truncated JPEG");
  }
  expect_refused(write("soi.jpg", {0xFF, 0xD8, 0xFF}), "truncated JPEG");
  // All scanlines there but no end-of-image marker: Pillow refuses it too.
  std::vector<std::uint8_t> no_eoi = read(kFolder / "cats/rgb_300x211.jpg");
  no_eoi.resize(no_eoi.size() - 2);
  expect_refused(write("no_eoi.jpg", no_eoi), "truncated JPEG");
}

TEST_F(ImageBrokenFiles, PngCrcsAreCheckedAsPillowDoes) {
  // Pillow checks the CRCs of the chunks before the image data (IHDR here)...
  std::vector<std::uint8_t> bytes = read(kFolder / "cats/png_named_37x53.JPEG");
  std::vector<std::uint8_t> bad_ihdr = bytes;
  bad_ihdr[8 + 8 + 13] ^= 1;  // IHDR's CRC: signature, length + type, 13 data bytes
  expect_refused(write("bad_ihdr.png", bad_ihdr), "IHDR: CRC error");
  // ...but not the image data's: a bad IDAT CRC decodes as before.
  std::vector<std::uint8_t> bad_idat = bytes;
  bad_idat[bad_idat.size() - 12 - 1] ^= 1;  // the last byte before IEND: IDAT's CRC
  EXPECT_EQ(nn::decode_image(bad_idat.data(), bad_idat.size(), "bad_idat").pixels,
            nn::decode_image(bytes.data(), bytes.size(), "good").pixels);
}

TEST_F(ImageBrokenFiles, TruncatedPngThrows) {
  std::vector<std::uint8_t> bytes = read(kFolder / "fish/rgba_64x48.png");
  bytes.resize(bytes.size() * 2 / 3);
  expect_refused(write("cut.png", bytes), "truncated PNG");
}

TEST_F(ImageBrokenFiles, CorruptDataThrows) {
  std::mt19937 rng(7);
  std::vector<std::uint8_t> noise(4096);
  for (auto& b : noise) b = static_cast<std::uint8_t>(rng());
  expect_refused(write("noise.jpg", noise), "not a JPEG or PNG image");
  // Right signatures, garbage after them.
  std::vector<std::uint8_t> jpeg = {0xFF, 0xD8, 0xFF};
  jpeg.insert(jpeg.end(), noise.begin(), noise.end());
  expect_refused(write("garbage.jpg", jpeg), "corrupt or unsupported JPEG");
  std::vector<std::uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  png.insert(png.end(), noise.begin(), noise.end());
  expect_refused(write("garbage.png", png), "corrupt or unsupported PNG");
}

TEST_F(ImageBrokenFiles, EmptyAndTextFilesThrow) {
  expect_refused(write("empty.jpg", {}), "empty file");
  const std::string text = "n01440764 0\nn01443537 1\n";
  expect_refused(write("labels.png", {text.begin(), text.end()}), "not a JPEG or PNG image");
  expect_refused(dir_ / "missing.jpg", "cannot open");
}

TEST(Image, InMemoryErrorsNameTheImage) {
  const std::uint8_t gif[] = {'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0};
  try {
    nn::decode_image(gif, sizeof gif, "photo-42");
    ADD_FAILURE() << "a GIF decoded";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("photo-42"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("GIF"));
  }
}

}  // namespace
