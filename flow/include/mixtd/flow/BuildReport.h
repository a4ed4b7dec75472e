// The flow's report (issue 23): report::FlowReport filled from the
// artefacts the steps wrote — every figure read from the JSON or CSV of
// the command that computed it (simulate.json, cosim.json, analysis.json,
// the accuracy JSONs, the search's CSVs), τ and the MAC/parameter ratios
// from the final design, the package's files and SLR plan.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "mixtd/flow/FlowConfig.h"
#include "mixtd/flow/Runner.h"
#include "mixtd/report/FlowReport.h"

namespace mixtd::flow {

report::FlowReport build_report(const FlowConfig& c, const std::filesystem::path& dir,
                                const std::vector<StepOutcome>& steps, const std::string& date);

// Writes DIR/report.json and DIR/report.html (atomically).
void write_report(const report::FlowReport& r, const std::filesystem::path& dir);

}  // namespace mixtd::flow
