#include "common/topology/ibnetdiscover_parser.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <istream>
#include <map>
#include <optional>
#include <ostream>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ibemu::topology {
namespace {

// ibsim's starting GUIDs when a file has no switchguid=/caguid= line, so both tools agree.
constexpr uint64_t kIbsimSwitchGuidBase = 0x200000;
constexpr uint64_t kIbsimCaGuidBase = 0x100000;
constexpr uint64_t kRouterGuidBase = 0x300000;  // ibsim leaves its router base at 0

// The writer prints the vendor and device IDs the emulated devices answer with (topology.h);
// the parser does not keep a file's. They matter to tools: ibnetdiscover asks SwitchX and
// ConnectX ports for Mellanox's ExtendedPortInfo, so ibsim reading a file written here presents
// the same devices and gets the same queries.

enum GuidKind { kSwitchGuid = 0, kCaGuid = 1, kRouterGuid = 2 };

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}
bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}
bool IsAlpha(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0;
}

std::string Hex(uint64_t v) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%" PRIx64, v);
  return buf;
}

std::string End(const std::string& node, int port) {
  return "\"" + node + "\"[" + std::to_string(port) + "]";
}

// Reads one line left to right; every accessor leaves the position unchanged when it fails.
class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}

  void SkipSpace() {
    while (i_ < s_.size() && IsSpace(s_[i_])) ++i_;
  }
  bool AtEnd() const { return i_ >= s_.size(); }
  char Peek() const { return AtEnd() ? '\0' : s_[i_]; }
  bool LookingAt(std::string_view w) const { return s_.substr(i_).starts_with(w); }
  std::string_view Rest() const { return s_.substr(i_); }
  bool Eat(char c) {
    if (AtEnd() || s_[i_] != c) return false;
    ++i_;
    return true;
  }
  std::string_view Word() {
    size_t b = i_;
    while (i_ < s_.size() && IsAlpha(s_[i_])) ++i_;
    return s_.substr(b, i_ - b);
  }
  // Decimal digits, or hex digits after "0x" (the form strtoull(..., 0) accepts in both tools).
  std::optional<uint64_t> Number() {
    if (LookingAt("0x") || LookingAt("0X")) {
      i_ += 2;
      auto v = Digits(16);
      if (!v) i_ -= 2;
      return v;
    }
    return Digits(10);
  }
  // Hex digits with or without "0x": port GUIDs in "(0002c9030001e0a9)".
  std::optional<uint64_t> HexNumber() {
    if (LookingAt("0x") || LookingAt("0X")) return Number();
    return Digits(16);
  }
  std::optional<std::string> Quoted() {
    if (Peek() != '"') return std::nullopt;
    size_t close = s_.find('"', i_ + 1);
    if (close == std::string_view::npos) return std::nullopt;
    std::string r(s_.substr(i_ + 1, close - i_ - 1));
    i_ = close + 1;
    return r;
  }
  std::string_view Token() {
    size_t b = i_;
    while (i_ < s_.size() && !IsSpace(s_[i_]) && s_[i_] != '#') ++i_;
    return s_.substr(b, i_ - b);
  }

 private:
  std::optional<uint64_t> Digits(int base) {
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(s_.data() + i_, s_.data() + s_.size(), v, base);
    if (ec != std::errc() || end == s_.data() + i_) return std::nullopt;
    i_ = static_cast<size_t>(end - s_.data());
    return v;
  }

  std::string_view s_;
  size_t i_ = 0;
};

// LinkWidthEnabled / LinkSpeedEnabled / LinkSpeedExtEnabled masks (PortInfo, IBA vol. 1 14.2.5.6)
// as ibsim's w=, s=, e=, width=, speed= and extspeed= take them; the fastest enabled value is the
// one a link trains to when both ends enable it.
std::optional<link::Width> WidthFromMask(uint64_t m) {
  if (m & 8) return link::Width::k12x;
  if (m & 4) return link::Width::k8x;
  if (m & 2) return link::Width::k4x;
  if (m & 16) return std::nullopt;  // 2x: not modelled
  if (m & 1) return link::Width::k1x;
  return std::nullopt;
}
std::optional<link::Speed> SpeedFromMask(uint64_t m) {
  if (m & 4) return link::Speed::kQDR;
  if (m & 2) return link::Speed::kDDR;
  if (m & 1) return link::Speed::kSDR;
  return std::nullopt;
}
std::optional<link::Speed> ExtSpeedFromMask(uint64_t m) {
  if (m & 8) return link::Speed::kNDR;
  if (m & 4) return link::Speed::kHDR;
  if (m & 2) return link::Speed::kEDR;
  if (m & 1) return link::Speed::kFDR;
  return std::nullopt;
}

// Speed names ibnetdiscover and later diags print after the width; some are not modelled, and
// those are reported rather than silently replaced by the default rate.
bool LooksLikeSpeed(std::string_view s) {
  static constexpr std::array<std::string_view, 9> kNames{"SDR", "DDR", "QDR", "FDR", "FDR10",
                                                          "EDR", "HDR", "NDR", "XDR"};
  for (std::string_view n : kNames) {
    if (n.size() != s.size()) continue;
    bool same = true;
    for (size_t i = 0; i < n.size(); ++i)
      if (std::toupper(static_cast<unsigned char>(s[i])) != n[i]) same = false;
    if (same) return true;
  }
  return false;
}

// One `[p] "remote"[q]` line, kept until every node is declared so its remote can be resolved.
struct PortLine {
  int port = 0;
  std::string remote;
  int remote_port = 1;
  link::LinkRate rate;
  int line = 0;
};

// A node header and its port lines. Sections and nodes are created together, so section i
// describes node i.
struct Section {
  int line = 0;
  std::vector<PortLine> ports;
  std::map<int, size_t> by_port;  // local port number -> index into ports
};

class Parser {
 public:
  Parser(std::string file, link::LinkRate default_rate)
      : file_(std::move(file)), default_rate_(default_rate) {
    if (file_.empty()) file_ = "<input>";  // an empty name would print as "<generated>"
    topo_.name = file_;
  }

  Topology Parse(std::istream& in) {
    std::string text;
    int line = 0;
    while (std::getline(in, text)) {
      ++line;
      if (!text.empty() && text.back() == '\r') text.pop_back();  // files saved with CRLF
      ParseLine(text, line);
    }
    if (topo_.nodes.empty())
      Fail(line > 0 ? line : 1, "node",
           "the file declares no nodes (no Switch, Ca, Hca or Rt line)");
    Link();
    topo_.Validate();
    return std::move(topo_);
  }

 private:
  [[noreturn]] void Fail(int line, std::string_view field, const std::string& msg) const {
    throw TopologyError(file_ + ":" + std::to_string(line) + ": " + std::string(field) + ": " +
                        msg);
  }

  void ExpectEnd(Cursor& c, int line, std::string_view after) const {
    c.SkipSpace();
    if (!c.AtEnd() && c.Peek() != '#')
      Fail(line, "syntax",
           "unexpected \"" + std::string(c.Rest()) + "\" after " + std::string(after));
  }

  void ParseLine(std::string_view text, int line) {
    Cursor c(text);
    c.SkipSpace();
    if (c.AtEnd()) {  // ibsim: a blank line ends the node's record
      current_ = -1;
      return;
    }
    if (c.Peek() == '#') return;  // comments do not end a record, in either tool
    if (c.Peek() == '[') {
      if (current_ < 0)
        Fail(line, "syntax",
             "port line outside any node section (port lines must follow their Switch/Ca line "
             "with no blank or other line between)");
      ParsePortLine(c, line);
      return;
    }
    if (c.Peek() == '@') Fail(line, "syntax", "ibsim port aliases ('@') are not supported");
    current_ = -1;
    std::string_view word = c.Word();
    if (word == "Switch" || word == "Ca" || word == "Hca" || word == "Rt") {
      if (!IsSpace(c.Peek()))
        Fail(line, "syntax", "expected a space after \"" + std::string(word) + "\"");
      ParseNodeHeader(word, c, line);
    } else if (word == "switchguid") {
      ParseGuidBase(c, line, kSwitchGuid, word);
    } else if (word == "caguid" || word == "hcaguids") {
      ParseGuidBase(c, line, kCaGuid, word);
    } else if (word == "rtguid") {
      ParseGuidBase(c, line, kRouterGuid, word);
    } else if (word == "guid") {
      one_shot_guid_ = Value(c, line, word);
      ExpectEnd(c, line, "the GUID");
    } else if (word == "vendid") {
      if (Value(c, line, word) > 0xffffff) Fail(line, "syntax", "vendid is a 24-bit OUI");
      ExpectEnd(c, line, "the vendor id");
    } else if (word == "devid") {
      if (Value(c, line, word) > 0xffff) Fail(line, "syntax", "devid is 16 bits");
      ExpectEnd(c, line, "the device id");
    } else if (word == "sysimgguid") {
      Value(c, line, word);
      ExpectEnd(c, line, "the system image GUID");
    } else if (word == "width") {
      auto w = WidthFromMask(Value(c, line, word));
      if (!w) Fail(line, "rate", "width= must be a LinkWidthEnabled mask with 1x, 4x, 8x or 12x");
      net_width_ = w;
      ExpectEnd(c, line, "the width mask");
    } else if (word == "speed") {
      auto s = SpeedFromMask(Value(c, line, word));
      if (!s) Fail(line, "rate", "speed= must be a LinkSpeedEnabled mask (1 SDR, 2 DDR, 4 QDR)");
      net_speed_ = s;
      ExpectEnd(c, line, "the speed mask");
    } else if (word == "extspeed") {
      net_ext_speed_ = ExtSpeedFromMask(Value(c, line, word));  // 0 turns extended speeds off
      ExpectEnd(c, line, "the extended speed mask");
    } else if (word == "Chassis" || word == "Hostname" ||
               (word == "Non" && c.Rest() == "-Chassis Nodes")) {
      // ibnetdiscover -g grouping headers: layout only.
    } else if (word == "include" || word == "module" || word == "do" || word == "pdebug") {
      Fail(line, "syntax", "ibsim directive \"" + std::string(word) + "\" is not supported");
    } else {
      Fail(line, "syntax", "unrecognised line \"" + std::string(text) + "\"");
    }
  }

  // `word=value`; the cursor is just after the word.
  uint64_t Value(Cursor& c, int line, std::string_view word, bool* relative = nullptr) const {
    c.SkipSpace();
    bool plus = relative && c.Eat('+');
    if (!plus && !c.Eat('='))
      Fail(line, "syntax", "expected '=' after \"" + std::string(word) + "\"");
    if (relative) *relative = plus;
    c.SkipSpace();
    auto v = c.Number();
    if (!v) Fail(line, "syntax", "expected a number after \"" + std::string(word) + "=\"");
    return *v;
  }

  void ParseGuidBase(Cursor& c, int line, GuidKind kind, std::string_view word) {
    bool relative = false;
    uint64_t v = Value(c, line, word, &relative);
    // ibsim: "=" sets the base, "+" offsets from the last base.
    if (!relative) abs_guid_[kind] = v;
    next_guid_[kind] = relative ? abs_guid_[kind] + v : v;
    c.SkipSpace();
    if (c.Eat('(')) {  // switchguid=0x...(port 0 GUID), as ibnetdiscover prints it
      if (!c.HexNumber() || !c.Eat(')'))
        Fail(line, "syntax", "expected \"(<port GUID>)\" after the switch GUID");
    }
    ExpectEnd(c, line, "the GUID");
  }

  void ParseNodeHeader(std::string_view word, Cursor& c, int line) {
    NodeType type = word == "Switch" ? NodeType::kSwitch : NodeType::kCa;
    GuidKind kind = word == "Switch" ? kSwitchGuid : word == "Rt" ? kRouterGuid : kCaGuid;
    c.SkipSpace();
    auto ports = c.Number();
    if (!ports)
      Fail(line, "syntax", "expected the number of ports after \"" + std::string(word) + "\"");
    if (*ports < 1 || *ports > kMaxPorts)
      Fail(line, "port",
           "a node has 1.." + std::to_string(kMaxPorts) + " ports, not " + std::to_string(*ports));
    c.SkipSpace();
    auto id = c.Quoted();
    if (!id) Fail(line, "syntax", "expected the quoted node id after the number of ports");
    if (id->empty()) Fail(line, "syntax", "the node id is empty");
    c.SkipSpace();
    std::string description;
    if (!c.AtEnd()) {
      if (c.Peek() != '#')
        Fail(line, "syntax", "unexpected \"" + std::string(c.Rest()) + "\" after the node id");
      description = DescriptionInComment(c.Rest().substr(1), line);
    }
    if (auto it = by_name_.find(*id); it != by_name_.end())
      Fail(line, "node",
           "duplicate node \"" + *id + "\" (first declared at line " +
               std::to_string(topo_.nodes[it->second].where.line) + ")");

    uint64_t guid = one_shot_guid_.value_or(next_guid_[kind]);
    if (auto it = by_guid_.find(guid); it != by_guid_.end())
      Fail(line, "guid",
           "GUID 0x" + Hex(guid) + " of \"" + *id + "\" is already the GUID of \"" +
               topo_.nodes[it->second].name + "\" (line " +
               std::to_string(topo_.nodes[it->second].where.line) + ")");
    if (one_shot_guid_)
      one_shot_guid_.reset();
    else  // ibsim: a switch has one GUID for all ports, a CA one per port plus the node's
      next_guid_[kind] += type == NodeType::kSwitch ? 1 : *ports + 1;

    int idx = topo_.AddNode(type, *id, static_cast<int>(*ports), {file_, line});
    Node& node = topo_.nodes[idx];
    node.guid = guid;
    if (!description.empty()) node.description = description;
    by_name_[*id] = idx;
    by_guid_[guid] = idx;
    sections_.push_back(Section{line, {}, {}});
    current_ = idx;
  }

  // The NodeDescription in a header comment: quoted (ibnetdiscover), or as ibsim reads a bare
  // comment, everything up to the lid/lmc/port 0 notes that follow it.
  std::string DescriptionInComment(std::string_view comment, int line) const {
    Cursor c(comment);
    c.SkipSpace();
    if (c.Peek() == '"') {
      auto d = c.Quoted();
      if (!d) Fail(line, "syntax", "unterminated quoted node description");
      return *d;
    }
    std::string s = " " + std::string(c.Rest());
    size_t end = s.size();
    for (std::string_view stop : {" enhanced port ", " base port ", " lid ", " lmc "})
      end = std::min(end, s.find(stop));
    s = s.substr(0, end);
    size_t b = s.find_first_not_of(" \t");
    size_t e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  }

  // ibnetdiscover -g writes "[ext N]" after a port number: the faceplate number of a chassis port.
  void SkipExtPort(Cursor& c, int line) const {
    if (!c.LookingAt("[ext")) return;
    c.Eat('[');
    c.Word();
    c.SkipSpace();
    if (!c.Number() || !c.Eat(']')) Fail(line, "syntax", "expected \"[ext <number>]\"");
  }

  void SkipPortGuid(Cursor& c, int line) const {
    if (!c.Eat('(')) return;
    if (!c.HexNumber() || !c.Eat(')')) Fail(line, "syntax", "expected \"(<port GUID>)\"");
  }

  void ParsePortLine(Cursor& c, int line) {
    PortLine pl;
    pl.line = line;
    c.Eat('[');
    auto p = c.Number();
    if (!p || !c.Eat(']')) Fail(line, "syntax", "expected \"[<port>]\" at the start of the line");
    SkipExtPort(c, line);
    c.SkipSpace();
    SkipPortGuid(c, line);
    c.SkipSpace();
    auto remote = c.Quoted();
    if (!remote) Fail(line, "syntax", "expected the quoted id of the remote node");
    pl.remote = *remote;
    c.SkipSpace();
    if (c.Peek() == '[' && !c.LookingAt("[ext")) {
      c.Eat('[');
      auto q = c.Number();
      if (!q || !c.Eat(']')) Fail(line, "syntax", "expected \"[<remote port>]\"");
      pl.remote_port = *q > kMaxPorts ? static_cast<int>(kMaxPorts) + 1 : static_cast<int>(*q);
    }
    SkipExtPort(c, line);
    c.SkipSpace();
    SkipPortGuid(c, line);

    std::optional<link::Width> w;
    std::optional<link::Speed> s, e;
    for (c.SkipSpace(); !c.AtEnd() && c.Peek() != '#'; c.SkipSpace()) {
      std::string_view tok = c.Token();
      Cursor t(tok);
      std::string_view key = t.Word();
      std::optional<uint64_t> value;
      if (t.Eat('=')) value = t.Number();
      if ((key != "w" && key != "s" && key != "e") || !value || !t.AtEnd())
        Fail(line, "syntax",
             "unexpected \"" + std::string(tok) + "\" (expected w=, s=, e= or a # comment)");
      const uint64_t mask = *value;
      if (key == "w") {
        w = WidthFromMask(mask);
        if (!w) Fail(line, "rate", "w= must be a LinkWidthEnabled mask with 1x, 4x, 8x or 12x");
      } else if (key == "s") {
        s = mask == 0 ? link::Speed::kQDR : SpeedFromMask(mask);  // ibsim: 0 means QDR
        if (!s) Fail(line, "rate", "s= must be a LinkSpeedEnabled mask (1 SDR, 2 DDR, 4 QDR)");
      } else {
        e = ExtSpeedFromMask(mask);
      }
    }
    std::optional<link::LinkRate> measured;
    if (c.Eat('#')) measured = RateInComment(c.Rest(), line);
    if (measured) {
      pl.rate = *measured;
    } else {
      link::Speed speed = e   ? *e
                          : s ? *s
                              : net_ext_speed_.value_or(net_speed_.value_or(default_rate_.speed()));
      pl.rate = link::LinkRate(w.value_or(net_width_.value_or(default_rate_.width())), speed);
    }

    const Node& node = topo_.nodes[current_];
    Section& sec = sections_[current_];
    if (*p < 1 || *p > static_cast<uint64_t>(node.num_ports))
      Fail(line, "port",
           "port " + std::to_string(*p) + " of \"" + node.name + "\" is out of range 1.." +
               std::to_string(node.num_ports) + " (declared at line " + std::to_string(sec.line) +
               ")");
    pl.port = static_cast<int>(*p);
    if (auto it = sec.by_port.find(pl.port); it != sec.by_port.end())
      Fail(line, "port",
           "port " + std::to_string(pl.port) + " of \"" + node.name +
               "\" is listed twice (first at line " + std::to_string(sec.ports[it->second].line) +
               ")");
    sec.by_port[pl.port] = sec.ports.size();
    sec.ports.push_back(std::move(pl));
  }

  // The active rate ibnetdiscover prints last on a port line ("... lid 3 4xQDR"). Quoted node
  // descriptions are skipped: a description may itself contain a rate-like word.
  std::optional<link::LinkRate> RateInComment(std::string_view comment, int line) const {
    std::string bare(comment);
    bool quoted = false;
    for (char& ch : bare) {
      if (ch == '"') quoted = !quoted;
      if (quoted || ch == '"') ch = ' ';
    }
    std::optional<link::LinkRate> found;
    Cursor c(bare);
    for (c.SkipSpace(); !c.AtEnd(); c.SkipSpace()) {
      std::string_view tok = c.Token();
      if (tok.empty()) {  // a '#' inside the comment
        c.Eat('#');
        continue;
      }
      size_t x = 0;
      while (x < tok.size() && IsDigit(tok[x])) ++x;
      if (x == 0 || x + 1 >= tok.size() || (tok[x] != 'x' && tok[x] != 'X')) continue;
      std::string_view lanes = tok.substr(0, x), speed = tok.substr(x + 1);
      if (!LooksLikeSpeed(speed)) continue;
      auto w = link::ParseWidth(lanes);
      auto s = link::ParseSpeed(speed);
      if (!w || !s)
        Fail(line, "rate",
             "link rate \"" + std::string(tok) +
                 "\" is not modelled (widths 1x, 4x, 8x, 12x; speeds SDR DDR QDR FDR EDR HDR NDR)");
      found = link::LinkRate(*w, *s);
    }
    return found;
  }

  // Pairs the two listings of every cable. Runs after the whole file is read because a port line
  // may name a node declared further down.
  void Link() {
    for (size_t ai = 0; ai < sections_.size(); ++ai) {
      const Section& sec = sections_[ai];
      int a = static_cast<int>(ai);
      for (const PortLine& pl : sec.ports) {
        const Node& an = topo_.nodes[a];
        auto it = by_name_.find(pl.remote);
        if (it == by_name_.end())
          Fail(pl.line, "node",
               "unknown node \"" + pl.remote + "\": port " + std::to_string(pl.port) + " of \"" +
                   an.name + "\" names it, but no Switch, Ca, Hca or Rt line declares it");
        int b = it->second;
        const Node& bn = topo_.nodes[b];
        if (pl.remote_port < 1 || pl.remote_port > bn.num_ports)
          Fail(pl.line, "port",
               "remote port " + std::to_string(pl.remote_port) + " of \"" + bn.name +
                   "\" is out of range 1.." + std::to_string(bn.num_ports) + " (declared at line " +
                   std::to_string(bn.where.line) + ")");
        // Already cabled from the other end's listing, which checked that this one agrees.
        if (an.cable_at[pl.port] >= 0) continue;
        const Section& bsec = sections_[b];
        std::string cable = End(an.name, pl.port) + " -> " + End(bn.name, pl.remote_port);
        auto back = bsec.by_port.find(pl.remote_port);
        if (back == bsec.by_port.end())
          Fail(pl.line, "cable",
               "one-sided cable " + cable + ": the section of \"" + bn.name + "\" (line " +
                   std::to_string(bsec.line) + ") has no line for port " +
                   std::to_string(pl.remote_port) + " back to " + End(an.name, pl.port));
        const PortLine& bl = bsec.ports[back->second];
        if (bl.remote != an.name || bl.remote_port != pl.port)
          Fail(pl.line, "cable",
               "one-sided cable " + cable + ": line " + std::to_string(bl.line) + " says " +
                   End(bn.name, bl.port) + " -> " + End(bl.remote, bl.remote_port));
        // Both listings may give a rate; the first one in the file wins (documented in the .h).
        topo_.Connect({a, pl.port}, {b, pl.remote_port}, pl.rate, 2.0, {file_, pl.line});
      }
    }
  }

  std::string file_;
  link::LinkRate default_rate_;
  std::optional<link::Width> net_width_;
  std::optional<link::Speed> net_speed_, net_ext_speed_;
  std::array<uint64_t, 3> abs_guid_{kIbsimSwitchGuidBase, kIbsimCaGuidBase, kRouterGuidBase};
  std::array<uint64_t, 3> next_guid_ = abs_guid_;
  std::optional<uint64_t> one_shot_guid_;
  Topology topo_;
  std::vector<Section> sections_;
  int current_ = -1;  // node whose section the next port line belongs to
  std::unordered_map<std::string, int> by_name_;
  std::unordered_map<uint64_t, int> by_guid_;
};

bool Printable(const std::string& s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '"') return false;
  return true;
}

}  // namespace

Topology ParseIbnetdiscover(std::istream& in, const std::string& filename,
                            link::LinkRate default_rate) {
  return Parser(filename, default_rate).Parse(in);
}

Topology ParseIbnetdiscoverFile(const std::string& path, link::LinkRate default_rate) {
  std::ifstream in(path);
  if (!in) throw TopologyError(path + ": file: cannot open topology file: " + std::strerror(errno));
  return ParseIbnetdiscover(in, path, default_rate);
}

void WriteIbnetdiscover(const Topology& topo, std::ostream& out) {
  for (const Node& n : topo.nodes) {
    std::string where = n.where.ToString();
    if (n.name.empty() || !Printable(n.name) || n.name.find_first_of("#@") != std::string::npos)
      throw TopologyError(where + ": node: node name \"" + n.name +
                          "\" cannot be written: it must be non-empty, printable, without '\"' "
                          "and without '#' or '@' (reserved by ibsim)");
    if (!Printable(n.description))
      throw TopologyError(where + ": node: description of \"" + n.name +
                          "\" cannot be written: it has a '\"' or a control character");
  }
  auto rate = [](const Cable& c) {
    return link::ToString(c.rate.width()) + link::Info(c.rate.speed()).name;
  };
  auto port_guid = [](const Node& n, int port) {
    return n.type == NodeType::kSwitch ? n.guid : n.guid + static_cast<uint64_t>(port);
  };

  std::string s = "#\n# Topology file: written by ibemu";
  if (!topo.name.empty() && Printable(topo.name)) s += " from \"" + topo.name + "\"";
  s += "\n#\n# LIDs are 0: they are assigned by the subnet manager, not by the topology.\n"
       "# Cable lengths are not part of this format.\n";
  for (size_t i = 0; i < topo.nodes.size(); ++i) {
    const Node& n = topo.nodes[i];
    bool sw = n.type == NodeType::kSwitch;
    s += "\nvendid=0x" + Hex(kVendorId) + "\ndevid=0x" + Hex(sw ? kSwitchDeviceId : kCaDeviceId) +
         "\n";
    if (n.guid) s += "sysimgguid=0x" + Hex(n.guid) + "\n";
    if (sw) {
      s += "switchguid=0x" + Hex(n.guid) + "(" + Hex(n.guid) + ")\n";
      s += "Switch\t" + std::to_string(n.num_ports) + " \"" + n.name + "\"\t\t# \"" +
           n.description + "\" base port 0 lid 0 lmc 0\n";
    } else {
      s += "caguid=0x" + Hex(n.guid) + "\n";
      s += "Ca\t" + std::to_string(n.num_ports) + " \"" + n.name + "\"\t\t# \"" + n.description +
           "\"\n";
    }
    for (int p = 1; p <= n.num_ports; ++p) {
      const Cable* c = topo.CableAt({static_cast<int>(i), p});
      if (!c) continue;
      PortRef peer = topo.Peer({static_cast<int>(i), p});
      const Node& r = topo.nodes[peer.node];
      bool r_ca = r.type != NodeType::kSwitch;
      std::string remote = "\"" + r.name + "\"[" + std::to_string(peer.port) + "]";
      if (sw) {
        s += "[" + std::to_string(p) + "]\t" + remote;
        if (r_ca) s += "(" + Hex(port_guid(r, peer.port)) + ") ";
        s += "\t\t# \"" + r.description + "\" lid 0 " + rate(*c) + "\n";
      } else {
        s += "[" + std::to_string(p) + "](" + Hex(port_guid(n, p)) + ") \t" + remote;
        if (r_ca) s += " (" + Hex(port_guid(r, peer.port)) + ") ";
        s += "\t\t# lid 0 lmc 0 \"" + r.description + "\" lid 0 " + rate(*c) + "\n";
      }
    }
  }
  out << s;
}

}  // namespace ibemu::topology
