#include "mixtd/net/YamlKeys.h"

#include <yaml-cpp/yaml.h>

#include <map>

#include "mixtd/support/Error.h"

namespace mixtd {

namespace {

std::string line_of(const YAML::Node& n) {
  const int line = n.Mark().line;
  return line >= 0 ? std::to_string(line + 1) : std::string("?");
}

// Aliases make a document a graph that can be exponentially larger than its
// text ("billion laughs"); a real design or network is far below both caps.
constexpr int kMaxDepth = 64;
constexpr long kMaxNodes = 10'000'000;

void walk(const YAML::Node& n, const std::string& source, int depth, long& nodes) {
  if (depth > kMaxDepth)
    throw Error(source + ":" + line_of(n) + ": nested more than " + std::to_string(kMaxDepth) + " levels deep");
  if (++nodes > kMaxNodes)
    throw Error(source + ": more than " + std::to_string(kMaxNodes) + " YAML nodes (aliases expanding?)");
  if (n.IsMap()) {
    std::map<std::string, YAML::Node> seen;
    for (const auto& kv : n) {
      // Every key of a mixtd file is a word; a list or mapping as a key
      // (`[a]: 1`, `? {a: 1}`) would make the readers' key.as<string>() throw.
      if (kv.first.IsSequence() || kv.first.IsMap())
        throw Error(source + ":" + line_of(kv.first) + ": a key must be a plain word, not a list or mapping");
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
      if (kv.first.IsScalar()) {
        const auto [it, fresh] = seen.emplace(key, kv.first);
        if (!fresh)
          throw Error(source + ":" + line_of(kv.first) + ": '" + key + "' given twice (first at line " +
                      line_of(it->second) + ")");
      }
      walk(kv.second, source, depth + 1, nodes);
    }
  } else if (n.IsSequence()) {
    for (const auto& e : n) walk(e, source, depth + 1, nodes);
  }
}

}  // namespace

void refuse_duplicate_keys(const YAML::Node& root, const std::string& source) {
  long nodes = 0;
  walk(root, source, 0, nodes);
}

}  // namespace mixtd
