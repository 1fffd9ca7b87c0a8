// Parameters a scenario gives a policy (H8): named values with the line they came from, read by
// the policy's factory with typed getters that refuse what the policy cannot use. A refusal names
// the key and its line, so the loader can report the file too before anything starts.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

namespace ibemu::policy {

class ParamError : public std::invalid_argument {
 public:
  ParamError(std::string key, int line, const std::string& what)
      : std::invalid_argument(what), key_(std::move(key)), line_(line) {}
  const std::string& key() const { return key_; }
  int line() const { return line_; }  // 1-based; 0 when the value has no source line

 private:
  std::string key_;
  int line_;
};

class Params {
 public:
  struct Value {
    std::string text;
    int line = 0;
  };

  void Set(const std::string& key, std::string text, int line = 0) {
    values_[key] = Value{std::move(text), line};
  }
  bool Has(const std::string& key) const { return values_.count(key) != 0; }
  bool empty() const { return values_.empty(); }
  const std::map<std::string, Value>& values() const { return values_; }

  // Refuses a key the policy does not know (a typo must not pass silently).
  void CheckKeys(const std::set<std::string>& known) const {
    for (const auto& [k, v] : values_)
      if (!known.count(k)) {
        std::string list;
        for (const std::string& n : known) list += (list.empty() ? "" : ", ") + n;
        throw ParamError(k, v.line, "unknown parameter '" + k + "' (known: " + list + ")");
      }
  }

  int64_t Int(const std::string& key, int64_t def, int64_t min, int64_t max) const {
    return Number<int64_t>(
        key, def, min, max, "an integer",
        [](const std::string& t, size_t* used) { return std::stoll(t, used, 0); });
  }

  double Double(const std::string& key, double def, double min, double max) const {
    return Number<double>(key, def, min, max, "a number",
                          [](const std::string& t, size_t* used) { return std::stod(t, used); });
  }

  bool Bool(const std::string& key, bool def) const {
    auto it = values_.find(key);
    if (it == values_.end()) return def;
    const std::string& t = it->second.text;
    if (t == "true" || t == "TRUE" || t == "1") return true;
    if (t == "false" || t == "FALSE" || t == "0") return false;
    Fail(it, "'" + t + "' is not true or false");
  }

  // One of `allowed`.
  std::string Choice(const std::string& key, const std::string& def,
                     const std::set<std::string>& allowed) const {
    auto it = values_.find(key);
    if (it == values_.end()) return def;
    if (allowed.count(it->second.text)) return it->second.text;
    std::string list;
    for (const std::string& n : allowed) list += (list.empty() ? "" : ", ") + n;
    Fail(it, "'" + it->second.text + "' is not one of " + list);
  }

 private:
  template <typename T, typename Parse>
  T Number(const std::string& key, T def, T min, T max, const char* what, Parse parse) const {
    auto it = values_.find(key);
    if (it == values_.end()) return def;
    const std::string& t = it->second.text;
    T x{};
    try {
      size_t used = 0;
      x = parse(t, &used);
      if (used != t.size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      Fail(it, "'" + t + "' is not " + what);
    }
    if (!(x >= min && x <= max))
      Fail(it, t + " is out of range (" + std::to_string(min) + ".." + std::to_string(max) + ")");
    return x;
  }

  [[noreturn]] void Fail(std::map<std::string, Value>::const_iterator it,
                         const std::string& what) const {
    throw ParamError(it->first, it->second.line, it->first + ": " + what);
  }

  std::map<std::string, Value> values_;
};

}  // namespace ibemu::policy
