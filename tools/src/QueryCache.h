// A query cache shared by searches on the same network and data: every
// accuracy query appended as one line to a file, read back by later runs
// (optuna's storage does this job for its studies). Searches that differ only
// in --seed, --strategy, --types or --target-fps ask many of the same
// questions — the pre-filter's ~1,300 on resnet18-fmnist is the same for all
// of them — and a value read back equals the value a query would give (a query
// is deterministic for the same settings), so the search's outputs do not
// change; only its time does. Lines carry a digest of the settings a value
// depends on; lines of other settings are ignored. Several processes may
// append to one file at once: each line is one write(2) with O_APPEND, and a
// torn or foreign line is skipped when reading.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <unordered_map>

#include "mixtd/search/Search.h"

namespace mixtd::cli {

class CachedAccuracy : public search::AccuracySource {
 public:
  // `settings` is everything a query's value depends on (network, weights
  // digest, accuracy kind, batch size, calibration, data set).
  CachedAccuracy(search::AccuracySource& inner, std::filesystem::path file, const std::string& settings);
  ~CachedAccuracy() override;
  double query(const search::Taus& taus, std::int64_t batch) override;
  // Kept under batch -1 (the settings digest covers --prefilter-images).
  double prefilter_query(const search::Taus& taus) override;
  std::int64_t batches() const override { return inner_.batches(); }
  td::Factors factors(const search::Taus& taus) override { return inner_.factors(taus); }
  std::int64_t hits() const { return hits_; }
  std::int64_t misses() const { return misses_; }

 private:
  double lookup(const search::Taus& taus, std::int64_t batch, const std::function<double()>& ask);
  search::AccuracySource& inner_;
  std::filesystem::path file_;
  std::string digest_;
  std::unordered_map<std::string, double> values_;
  int fd_ = -1;
  std::int64_t hits_ = 0, misses_ = 0;
};

}  // namespace mixtd::cli
