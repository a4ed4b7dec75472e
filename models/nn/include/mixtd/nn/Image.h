// JPEG/PNG decoding and torchvision's standard evaluation transform, bit-exact
// to what a PyTorch user's ImageNet pipeline sees:
//   Image.open(f).convert("RGB") -> Resize(256) -> CenterCrop(224)
// with Pillow 9.4 (libjpeg-turbo, libpng) and torchvision 0.14. The fixtures
// of tests/nn/test_image.cpp come from that pipeline
// (scripts/gen-image-fixtures). No LibTorch here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace mixtd::nn {

struct RgbImage {
  int width = 0, height = 0;
  std::vector<std::uint8_t> pixels;  // HWC, RGB, row-major: width * height * 3 bytes
};

// Decodes a JPEG or PNG (told apart by content, not by name) to 8-bit RGB
// exactly as Pillow's Image.open(f).convert("RGB") does: greyscale is
// replicated; a CMYK JPEG is read Adobe-inverted and converted with Pillow's
// cmyk2rgb; a palette is expanded (tRNS ignored, indices past the palette get
// Pillow's grey ramp); alpha is dropped; 16-bit samples keep their high byte,
// except 16-bit greyscale (Pillow's mode "I"), which is clipped at 255.
// Throws mixtd::Error naming `name` and the reason (not an image, truncated
// or corrupt, unsupported).
RgbImage decode_image(const std::uint8_t* data, std::size_t size, const std::string& name);
RgbImage decode_image_file(const std::filesystem::path& file);

// Pillow's Image.resize((width, height), Image.BILINEAR): the antialiased
// separable resampler of libImaging/Resample.c with its fixed-point 8-bpc
// coefficients, horizontal pass then vertical pass. Same size: a copy.
RgbImage resize_bilinear(const RgbImage& in, int width, int height);

// torchvision 0.14's Resize(resize) (shorter side -> resize, the longer
// int(resize * long / short)) then CenterCrop(crop) (zero padding if the
// resized image is smaller than crop). Returns crop x crop. Only the pixels
// that survive the crop are resampled; they equal the full resize's.
RgbImage resize_center_crop(const RgbImage& in, int resize, int crop);

}  // namespace mixtd::nn
