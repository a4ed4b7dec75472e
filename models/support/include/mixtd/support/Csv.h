// The CSV dialect of mixtd's tables (labels.csv, candidates.csv, ...):
// comma-separated, no quoting; writers replace commas inside a field.
#pragma once

#include <string>
#include <vector>

namespace mixtd {

// The fields of one line ("a,,b" is three fields, the middle one empty).
std::vector<std::string> split_csv_line(const std::string& line);

}  // namespace mixtd
