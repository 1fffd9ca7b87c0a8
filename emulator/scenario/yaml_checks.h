// Errors that name the scenario file, the line and the field, for every part of the loader.
#pragma once
#include <yaml-cpp/yaml.h>

#include <set>
#include <string>

#include "emulator/scenario/scenario.h"

namespace ibemu::scenario {

class YamlChecks {
 public:
  explicit YamlChecks(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void Fail(const YAML::Node& n, const std::string& field,
                         const std::string& msg) const {
    int line = n.IsDefined() ? n.Mark().line + 1 : 0;
    throw ScenarioError(file_ + ":" + std::to_string(line) + ": " + field + ": " + msg);
  }

  // A mapping whose keys are all in `allowed`; an unknown key is refused with the list.
  void CheckKeys(const YAML::Node& n, const std::string& path,
                 const std::set<std::string>& allowed) const {
    if (!n.IsMap()) Fail(n, path, "expected a mapping");
    for (auto it = n.begin(); it != n.end(); ++it) {
      std::string k = it->first.as<std::string>();
      if (allowed.count(k)) continue;
      std::string known;
      for (auto& a : allowed) known += (known.empty() ? "" : ", ") + a;
      Fail(it->first, path.empty() ? k : path + "." + k, "unknown key; expected one of: " + known);
    }
  }

  std::string Scalar(const YAML::Node& n) const {
    return n.IsScalar() ? n.Scalar() : "<not a scalar>";
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

}  // namespace ibemu::scenario
