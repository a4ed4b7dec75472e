// Duplicate keys in the YAML files mixtd reads (network, design, device).
//
// yaml-cpp keeps both entries of a key given twice: iterating the mapping
// sees both, n[key] only one, so "the last one wins" or "the first one wins"
// depends on how the reader looks. Every reader refuses them instead.
#pragma once

#include <string>

namespace YAML {
class Node;
}

namespace mixtd {

// Throws mixtd::Error "SOURCE:LINE: 'key' given twice (first at line N)"
// for the first key given twice in any mapping of the document under `root`
// (nested mappings and lists included).
// Also refuses a key that is a list or a mapping ("SOURCE:LINE: a key must
// be a plain word"): no mixtd file has one.
void refuse_duplicate_keys(const YAML::Node& root, const std::string& source);

}  // namespace mixtd
