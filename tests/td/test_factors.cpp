// The factors file (td::save_factors / td::load_factors): a bit-exact round
// trip, and a clear mixtd::Error, never a crash, on a file that is
// truncated, carries a corrupted count, a wrong magic or corrupted values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "TdTestUtil.h"
#include "mixtd/support/AtomicFile.h"
#include "mixtd/support/Error.h"
#include "mixtd/td/Decompose.h"
#include "mixtd/td/Factors.h"

namespace mixtd::td {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::make_conv;

fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("mixtd_factors_test_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d / name;
}

// Three small layers: CPD with both groupings, SVD (spatial) without bias, SVD (filter).
FactorsMap sample() {
  FactorsMap m;
  m["a.cpd"] = Decomposer(make_conv({.name = "a.cpd", .c = 8, .n = 6, .seed = 3})).decompose({TdType::Cpd, 2, 2, 3});
  m["b.svd"] = Decomposer(make_conv({.name = "b.svd", .c = 4, .n = 4, .kh = 3, .kw = 1, .bias = false, .seed = 4}))
                   .decompose({TdType::SvdSpatial, 1, 2, 2});
  m["c.svd"] = Decomposer(make_conv({.name = "c.svd", .c = 6, .n = 4, .s = 2, .seed = 5}))
                   .decompose({TdType::SvdFilter, 2, 1, 2});
  return m;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::string message_of_loading(const std::string& bytes) {
  const auto p = scratch("bad.factors");
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;  // not atomic: thousands of these
  try {
    (void)load_factors(p);
  } catch (const Error& e) {
    return e.what();
  }
  return "(loaded)";
}

// Where the first layer's chunk count lies: after magic, version, layer
// count, the name, τ, n/c/chunk sizes, the bias flag and the stages.
std::size_t first_chunk_count_offset(const std::string& name, const LayerGeometry& g) {
  std::size_t at = 8 + 4 + 4 + 4 + name.size() + 1 + 3 * 8 + 4 * 8 + 1 + 4;
  for (const auto& s : g.stages) at += 4 + s.role.size() + 9 * 8 + 1 + 6 * 8;
  return at;
}

TEST(Factors, RoundTripIsBitExact) {
  const FactorsMap m = sample();
  const auto p = scratch("round.factors");
  save_factors(p, m);
  const FactorsMap back = load_factors(p);
  ASSERT_EQ(back.size(), m.size());
  for (const auto& [name, d] : m) {
    const DecomposedLayer& e = back.at(name);
    EXPECT_EQ(e.geometry, d.geometry) << name;
    EXPECT_TRUE(same_bits(e.bias, d.bias)) << name;
    ASSERT_EQ(e.chunks.size(), d.chunks.size()) << name;
    for (std::size_t i = 0; i < d.chunks.size(); ++i) {
      EXPECT_EQ(e.chunks[i].a, d.chunks[i].a);
      EXPECT_EQ(e.chunks[i].b, d.chunks[i].b);
      ASSERT_EQ(e.chunks[i].stages.size(), d.chunks[i].stages.size());
      for (std::size_t k = 0; k < d.chunks[i].stages.size(); ++k) {
        EXPECT_EQ(e.chunks[i].stages[k].shape, d.chunks[i].stages[k].shape);
        EXPECT_TRUE(same_bits(e.chunks[i].stages[k].weight, d.chunks[i].stages[k].weight)) << name << " " << i;
      }
    }
  }
  // Written again, the same bytes.
  const auto p2 = scratch("round2.factors");
  save_factors(p2, back);
  EXPECT_EQ(read_file(p2), read_file(p));
}

// The fuzzer's seeds stay files that load (a change of format rewrites them).
TEST(Factors, FuzzSeedsLoad) {
  std::int64_t seeds = 0;
  for (const auto& e : fs::directory_iterator(fs::path(MIXTD_SOURCE_DIR) / "fuzz/corpus/fuzz_factors")) {
    EXPECT_NO_THROW((void)load_factors(e.path())) << e.path();
    ++seeds;
  }
  EXPECT_GE(seeds, 4);
}

// The activation exponents a fine-tune trained at travel with the factors.
TEST(Factors, ActivationExponentsRoundTrip) {
  const ActivationExponents e = {{"input", -5}, {"a.cpd", 2}, {"a.cpd#stage0", -1}, {"a.cpd#partial", 3}};
  const auto p = scratch("exps.factors");
  save_factors(p, sample(), e);
  ActivationExponents back = {{"stale", 1}};
  EXPECT_EQ(load_factors(p, &back).size(), 3u);
  EXPECT_EQ(back, e);
  save_factors(p, Factors{sample(), {}});
  EXPECT_TRUE((load_factors(p, &back), back.empty()));
}

// A version 1 file (no exponents section) still loads, with none.
TEST(Factors, AVersionOneFileLoadsWithNoExponents) {
  ActivationExponents e = {{"stale", 1}};
  const FactorsMap m = load_factors(fs::path(MIXTD_SOURCE_DIR) / "fuzz/corpus/fuzz_factors/cpd-g1-2-g2-2.factors", &e);
  EXPECT_EQ(m.size(), 1u);
  EXPECT_TRUE(e.empty());
}

TEST(Factors, BadExponentsAreRefused) {
  EXPECT_THAT(
      [] {
        try {
          save_factors(scratch("bad-exp.factors"), sample(), {{"a.cpd", 5000}});
        } catch (const Error& err) {
          return std::string(err.what());
        }
        return std::string("(saved)");
      }(),
      AllOf(HasSubstr("tensor 'a.cpd'"), HasSubstr("exponent = 5000"), HasSubstr("legal -1100 .. 1100")));
  const auto p = scratch("dup-exp.factors");
  save_factors(p, {}, {{"x", 1}, {"y", 2}});
  std::string b = read_file(p);
  // Rename the second key "y" to "x": the same key twice (CRC fixed up by
  // rewriting is not possible here, so the duplicate is found before it).
  const auto at = b.rfind('y');
  b[at] = 'x';
  EXPECT_THAT(message_of_loading(b), AllOf(HasSubstr("exponent 1"), HasSubstr("tensor 'x' appears twice")));
  b = read_file(p);
  const std::int32_t huge = -70000;
  std::memcpy(b.data() + b.size() - 8, &huge, 4);
  EXPECT_THAT(message_of_loading(b), AllOf(HasSubstr("exponent = -70000"), HasSubstr("legal -1100 .. 1100")));
}

TEST(Factors, EmptyMapRoundTrips) {
  const auto p = scratch("empty.factors");
  save_factors(p, FactorsMap{});
  EXPECT_TRUE(load_factors(p).empty());
}

TEST(Factors, EveryTruncationIsAnError) {
  const auto p = scratch("whole.factors");
  save_factors(p, sample());
  const std::string whole = read_file(p);
  // Every cut through the headers of the first layer, then every 7th byte.
  const FactorsMap m = sample();
  const std::size_t headers = first_chunk_count_offset("a.cpd", m.at("a.cpd").geometry) + 40;
  for (std::size_t n = 0; n < whole.size(); n += n < headers ? 1 : 7) {
    const std::string msg = message_of_loading(whole.substr(0, n));
    ASSERT_NE(msg, "(loaded)") << "prefix of " << n << " bytes";
    ASSERT_THAT(msg, HasSubstr("bad.factors")) << n;
  }
  // A cut inside the last layer's weights says which layer and what.
  EXPECT_THAT(message_of_loading(whole.substr(0, whole.size() - 30)),
              AllOf(HasSubstr("layer 'c.svd'"), HasSubstr("truncated: chunk 1 stage 1 weight"), HasSubstr("remain")));
}

TEST(Factors, CorruptedCountsNameTheValueAndTheLegalOnes) {
  const auto p = scratch("counts.factors");
  const FactorsMap m = sample();
  save_factors(p, m);
  const std::string whole = read_file(p);
  auto with_u32 = [&](std::size_t at, std::uint32_t v) {
    std::string b = whole;
    std::memcpy(b.data() + at, &v, 4);
    return b;
  };
  EXPECT_THAT(message_of_loading(with_u32(12, 0xffffffffu)),
              AllOf(HasSubstr("layer count = 4294967295"), HasSubstr("legal at most")));
  const std::size_t chunks = first_chunk_count_offset("a.cpd", m.at("a.cpd").geometry);
  EXPECT_THAT(message_of_loading(with_u32(chunks, 1000000)),
              AllOf(HasSubstr("layer 'a.cpd'"), HasSubstr("chunk count = 1000000"), HasSubstr("legal 4 .. 4")));
  // The first stage count (g1 = 2, cpd: 4 stages) set to 3.
  const std::size_t stages = 8 + 4 + 4 + 4 + 5 + 1 + 3 * 8 + 4 * 8 + 1;
  EXPECT_THAT(message_of_loading(with_u32(stages, 3)), AllOf(HasSubstr("layer 'a.cpd'"), HasSubstr("stage count")));
  EXPECT_THAT(message_of_loading(with_u32(stages, 0xfffffff0u)), HasSubstr("legal at most"));
}

TEST(Factors, ANameWithAControlCharacterIsRefused) {
  const auto p = scratch("name.factors");
  save_factors(p, sample());
  std::string b = read_file(p);
  b[20 + 1] = '\n';  // "a.cpd" -> "a\ncpd"
  EXPECT_THAT(message_of_loading(b), AllOf(HasSubstr("layer 0: layer name has control character 10 at 1"),
                                           HasSubstr("legal printable characters only")));
}

TEST(Factors, WrongMagicOrVersionIsRefused) {
  const auto p = scratch("magic.factors");
  save_factors(p, sample());
  std::string b = read_file(p);
  b[0] = 'X';
  EXPECT_THAT(message_of_loading(b), HasSubstr("not a mixtd factors file"));
  EXPECT_THAT(message_of_loading("MIXTDW1\n"), HasSubstr("not a mixtd factors file"));
  b = read_file(p);
  b[8] = 7;
  EXPECT_THAT(message_of_loading(b), AllOf(HasSubstr("version 7"), HasSubstr("reads versions 1 .. 2")));
}

TEST(Factors, CorruptedValuesFailTheCrc) {
  const auto p = scratch("crc.factors");
  save_factors(p, sample());
  std::string b = read_file(p);
  b[b.size() - 10] ^= 0x01;  // a bit of the last layer's bias
  EXPECT_THAT(message_of_loading(b), HasSubstr("CRC-32 mismatch"));
}

TEST(Factors, NonFiniteValuesAndTrailingBytesAreRefused) {
  FactorsMap m = sample();
  m.at("c.svd").chunks[1].stages[0].weight[2] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(save_factors(scratch("nan.factors"), m), Error);
  const auto p = scratch("trail.factors");
  save_factors(p, sample());
  std::string b = read_file(p);
  b.insert(b.size() - 4, "xyz");
  EXPECT_THAT(message_of_loading(b), HasSubstr("3 trailing bytes"));
}

TEST(Factors, SaveRefusesAnInconsistentLayer) {
  FactorsMap m = sample();
  m.at("a.cpd").chunks.pop_back();
  try {
    save_factors(scratch("bad-save.factors"), m);
    FAIL() << "saved";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("layer 'a.cpd'"), HasSubstr("chunk count = 3"), HasSubstr("legal 4")));
  }
  m = sample();
  m.at("b.svd").chunks[0].stages[1].weight.push_back(1.0f);
  EXPECT_THROW(save_factors(scratch("bad-save.factors"), m), Error);
}

}  // namespace
}  // namespace mixtd::td
