// search::RandomForest::load on a predictor model file (`mixtd predictor
// train` writes them; it takes a path), then what `mixtd predictor eval`
// does with a loaded model: predictions and the spread over trees.
//
// The file ends with an FNV-1a checksum of its binary part, which mutated
// bytes almost never match: every input is loaded as it is (the header and
// the checksum check) and again with its checksum recomputed, so that the
// mutations reach the trees' parser and predict().
#include <cstring>
#include <vector>

#include "FuzzInput.h"
#include "mixtd/search/RandomForest.h"
#include "mixtd/support/Error.h"

namespace {

void load_and_predict(const std::uint8_t* data, std::size_t size) {
  const auto path = mixtd::fuzz::write_input(data, size, "fuzz.bin");
  try {
    const auto rf = mixtd::search::RandomForest::load(path);
    // Rows on both sides of typical thresholds: every node kind is walked.
    for (const double x : {0.0, 1.0, -1e9, 1e9}) {
      const std::vector<double> row(rf.features(), x);
      (void)rf.predict(row.data());
      (void)rf.spread(row.data());
    }
  } catch (const mixtd::Error&) {
  }
}

// The checksum RandomForest::save writes: FNV-1a over everything after the
// header's "end" line, stored in the last 8 bytes.
std::uint64_t fnv1a(const std::uint8_t* p, std::size_t n) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  load_and_predict(data, size);
  const std::string text = mixtd::fuzz::as_text(data, size);
  const auto end = text.find("\nend\n");
  if (end == std::string::npos || size < end + 5 + 8) return 0;
  std::vector<std::uint8_t> fixed(data, data + size);
  const std::size_t body = end + 5;
  const std::uint64_t h = fnv1a(fixed.data() + body, size - 8 - body);
  std::memcpy(fixed.data() + size - 8, &h, 8);
  load_and_predict(fixed.data(), fixed.size());
  return 0;
}

// libsystemc (pulled in by mixtd::predictor through the simulator) wants an
// sc_main; libFuzzer's main runs instead and never calls it.
extern "C" int sc_main(int, char**) { return 0; }
