// The per-layer design table that `mixtd solve` and `mixtd report` print,
// and its JSON form.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "mixtd/arch/Analytical.h"

namespace mixtd::cli {

void print_design_report(const arch::Design& d, const arch::Report& r, std::ostream& out);
nlohmann::json design_report_json(const arch::Design& d, const arch::Report& r);

}  // namespace mixtd::cli
