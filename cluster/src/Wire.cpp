#include "mixtd/cluster/Wire.h"

#include <cstdint>
#include <cstring>

#include "mixtd/support/Error.h"

namespace mixtd::cluster {

namespace {

// Fixed-width fields in the host's byte order: every rank runs the same
// executable, and MPI moves the bytes unchanged (MPI_BYTE).
template <typename T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

void put_string(std::string& out, const std::string& s) {
  put<std::uint64_t>(out, s.size());
  out += s;
}

class Reader {
 public:
  Reader(const std::string& bytes, const char* what) : bytes_(bytes), what_(what) {}
  template <typename T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, bytes_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string get_string() {
    const auto n = get<std::uint64_t>();
    need(n);
    std::string s = bytes_.substr(at_, n);
    at_ += n;
    return s;
  }
  void done() const {
    if (at_ != bytes_.size())
      throw Error(std::string("mpi: a ") + what_ + " message has " + std::to_string(bytes_.size() - at_) +
                  " trailing bytes (ranks running different mixtd builds?)");
  }

 private:
  void need(std::uint64_t n) const {
    if (n > bytes_.size() - at_)
      throw Error(std::string("mpi: a ") + what_ + " message of " + std::to_string(bytes_.size()) +
                  " bytes is cut short (ranks running different mixtd builds?)");
  }
  const std::string& bytes_;
  const char* what_;
  std::size_t at_ = 0;
};

}  // namespace

std::string pack(const JobMessage& job) {
  std::string out;
  put<double>(out, job.timeout_s);
  put_string(out, job.kind);
  put_string(out, job.payload);
  return out;
}

JobMessage unpack_job(const std::string& bytes) {
  Reader r(bytes, "job");
  JobMessage j;
  j.timeout_s = r.get<double>();
  j.kind = r.get_string();
  j.payload = r.get_string();
  r.done();
  return j;
}

std::string pack(const sim::JobResult& result) {
  std::string out;
  put<std::int32_t>(out, static_cast<std::int32_t>(result.status));
  put<std::int32_t>(out, result.exit_code);
  put<std::int32_t>(out, result.signal);
  put<double>(out, result.seconds);
  put_string(out, result.output);
  put_string(out, result.error);
  return out;
}

sim::JobResult unpack_result(const std::string& bytes) {
  Reader r(bytes, "result");
  sim::JobResult j;
  const auto status = r.get<std::int32_t>();
  if (status < 0 || status > static_cast<std::int32_t>(sim::JobResult::Status::TimedOut))
    throw Error("mpi: a result message has status " + std::to_string(status) + " (legal 0..3)");
  j.status = static_cast<sim::JobResult::Status>(status);
  j.exit_code = r.get<std::int32_t>();
  j.signal = r.get<std::int32_t>();
  j.seconds = r.get<double>();
  j.output = r.get_string();
  j.error = r.get_string();
  r.done();
  return j;
}

}  // namespace mixtd::cluster
