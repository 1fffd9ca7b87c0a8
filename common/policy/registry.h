// Every pluggable policy (VL arbitration, crossbar arbitration, input queuing, routing, traffic)
// is registered under a dotted name with a one-line description, so `ibemu policies` can list what
// exists and configurations choose by name; the core never grows an if-chain over mechanisms.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ibemu::policy {

template <typename Base, typename... Args>
class Registry {
 public:
  using Factory = std::function<std::unique_ptr<Base>(Args...)>;
  struct Entry {
    std::string name;
    std::string description;
    Factory make;
  };

  static Registry& Get() {
    static Registry r;
    return r;
  }
  void Add(std::string name, std::string description, Factory f) {
    entries_[name] = Entry{name, std::move(description), std::move(f)};
  }
  bool Has(const std::string& name) const { return entries_.count(name) != 0; }
  std::unique_ptr<Base> Make(const std::string& name, Args... args) const {
    auto it = entries_.find(name);
    if (it == entries_.end()) throw std::invalid_argument("unknown policy '" + name + "'");
    return it->second.make(args...);
  }
  std::vector<const Entry*> List() const {
    std::vector<const Entry*> v;
    for (auto& [k, e] : entries_) v.push_back(&e);
    return v;
  }
  std::string Names() const {
    std::string s;
    for (auto& [k, e] : entries_) s += (s.empty() ? "" : ", ") + k;
    return s;
  }

 private:
  std::map<std::string, Entry> entries_;
};

}  // namespace ibemu::policy
