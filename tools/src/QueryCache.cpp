#include "QueryCache.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "mixtd/support/Error.h"
#include "mixtd/support/Rng.h"

namespace mixtd::cli {
namespace {

std::string key_of(const search::Taus& taus, std::int64_t batch) {
  std::string k = std::to_string(batch);
  for (const auto& [layer, t] : taus)
    if (t.decomposed()) k += ";" + layer + ":" + t.str();
  return k;
}

}  // namespace

CachedAccuracy::CachedAccuracy(search::AccuracySource& inner, std::filesystem::path file, const std::string& settings)
    : inner_(inner), file_(std::move(file)) {
  char d[17];
  std::snprintf(d, sizeof d, "%016llx", static_cast<unsigned long long>(hash_string(settings)));
  digest_ = d;
  // Line: digest \t key \t value (%.17g) \n
  std::ifstream in(file_);
  std::string line;
  while (std::getline(in, line)) {
    const auto a = line.find('\t'), b = line.rfind('\t');
    if (a == std::string::npos || b == a || line.compare(0, a, digest_) != 0) continue;
    char* end = nullptr;
    const std::string v = line.substr(b + 1);
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || end == nullptr || *end != '\0') continue;  // torn line
    values_[line.substr(a + 1, b - a - 1)] = x;
  }
  fd_ = ::open(file_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  require(fd_ >= 0, "--query-cache " + file_.string() + ": cannot open for appending: " + std::strerror(errno));
}

CachedAccuracy::~CachedAccuracy() {
  if (fd_ >= 0) ::close(fd_);
}

double CachedAccuracy::query(const search::Taus& taus, std::int64_t batch) {
  return lookup(taus, batch, [&] { return inner_.query(taus, batch); });
}

double CachedAccuracy::prefilter_query(const search::Taus& taus) {
  return lookup(taus, -1, [&] { return inner_.prefilter_query(taus); });
}

double CachedAccuracy::lookup(const search::Taus& taus, std::int64_t batch, const std::function<double()>& ask) {
  const std::string k = key_of(taus, batch);
  if (auto it = values_.find(k); it != values_.end()) {
    ++hits_;
    return it->second;
  }
  ++misses_;
  const double v = ask();
  values_[k] = v;
  char num[40];
  std::snprintf(num, sizeof num, "%.17g", v);
  const std::string line = digest_ + "\t" + k + "\t" + num + "\n";
  // One write: concurrent appenders do not interleave within a line. A
  // failed write only loses a cache entry, never a result.
  [[maybe_unused]] const auto n = ::write(fd_, line.data(), line.size());
  return v;
}

}  // namespace mixtd::cli
