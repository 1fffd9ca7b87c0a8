// Topology files (ibnetdiscover / ibsim net format) and the topology generators.
#include "common/topology/topology.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/topology/generators.h"
#include "common/topology/ibnetdiscover_parser.h"

#ifndef IBEMU_SOURCE_DIR
#define IBEMU_SOURCE_DIR "."
#endif

namespace ibemu::topology {
namespace {

using link::LinkRate;
using link::Speed;
using link::Width;

const LinkRate k4xSdr(Width::k4x, Speed::kSDR);
const LinkRate k4xDdr(Width::k4x, Speed::kDDR);
const LinkRate k4xQdr(Width::k4x, Speed::kQDR);

std::string SourcePath(const std::string& rel) {
  return std::string(IBEMU_SOURCE_DIR) + "/" + rel;
}

Topology Parse(const std::string& text, LinkRate default_rate = k4xQdr) {
  std::istringstream in(text);
  return ParseIbnetdiscover(in, "test.topo", default_rate);
}

// The TopologyError text of parsing `text` as "bad.topo", or "(no error)".
std::string ParseError(const std::string& text) {
  std::istringstream in(text);
  try {
    ParseIbnetdiscover(in, "bad.topo", k4xQdr);
  } catch (const TopologyError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string FileError(const std::string& path) {
  try {
    ParseIbnetdiscoverFile(path, k4xQdr);
  } catch (const TopologyError& e) {
    return e.what();
  }
  return "(no error)";
}

bool SameRate(LinkRate a, LinkRate b) {
  return a.width() == b.width() && a.speed() == b.speed();
}

std::string Write(const Topology& t) {
  std::ostringstream out;
  WriteIbnetdiscover(t, out);
  return out.str();
}

// Same nodes (by index), same ports, and the same cable with the same rate on every port. Cable
// indices and a/b orientation are not part of the fabric and are not compared.
void ExpectSameFabric(const Topology& want, const Topology& got) {
  ASSERT_EQ(want.nodes.size(), got.nodes.size());
  EXPECT_EQ(want.cables.size(), got.cables.size());
  for (size_t i = 0; i < want.nodes.size(); ++i) {
    const Node& w = want.nodes[i];
    const Node& g = got.nodes[i];
    SCOPED_TRACE(w.name);
    EXPECT_EQ(w.type, g.type);
    EXPECT_EQ(w.name, g.name);
    EXPECT_EQ(w.description, g.description);
    EXPECT_EQ(w.guid, g.guid);
    ASSERT_EQ(w.num_ports, g.num_ports);
    for (int p = 1; p <= w.num_ports; ++p) {
      PortRef here{static_cast<int>(i), p};
      EXPECT_EQ(want.Peer(here), got.Peer(here)) << "port " << p;
      const Cable* wc = want.CableAt(here);
      const Cable* gc = got.CableAt(here);
      ASSERT_EQ(wc == nullptr, gc == nullptr) << "port " << p;
      if (wc) {
        EXPECT_TRUE(SameRate(wc->rate, gc->rate)) << "port " << p;
      }
    }
  }
}

const Node& NodeNamed(const Topology& t, const std::string& name) {
  int i = t.FindNode(name);
  EXPECT_GE(i, 0) << name;
  return t.nodes.at(i);
}

PortRef PeerOf(const Topology& t, const std::string& name, int port) {
  return t.Peer({t.FindNode(name), port});
}

// A dump in the layout ibnetdiscover prints: two 36-port switches, three dual-port HCAs with port 1
// (node03: port 2) cabled, one host on DDR. A description contains a rate-like word on purpose.
const char kIbnetdiscoverDump[] = R"(#
# Topology file: generated on Tue Mar 12 10:14:05 2013
#
# Initiated from node 0002c903000a6c3c port 0002c903000a6c3d

vendid=0x2c9
devid=0xbd36
sysimgguid=0x2c902004b0918
switchguid=0x2c902004b0918(2c902004b0918)
Switch	36 "S-0002c902004b0918"		# "MF0;edge1:IS5030/U1" base port 0 lid 1 lmc 0
[1]	"H-0002c903000a6c3c"[1](2c903000a6c3d) 		# "node01 mlx4_0" lid 3 4xQDR
[2]	"H-0002c903000a6d10"[1](2c903000a6d11) 		# "node02 mlx4_0" lid 4 4xQDR
[35]	"S-0002c902004b0a20"[36]		# "edge2 4xEDR-ready" lid 2 4xQDR

vendid=0x2c9
devid=0xbd36
sysimgguid=0x2c902004b0a20
switchguid=0x2c902004b0a20(2c902004b0a20)
Switch	36 "S-0002c902004b0a20"		# "edge2 4xEDR-ready" base port 0 lid 2 lmc 0
[7]	"H-0002c903000a6e44"[2](2c903000a6e46) 		# "node03 mlx4_0" lid 5 4xDDR
[36]	"S-0002c902004b0918"[35]		# "MF0;edge1:IS5030/U1" lid 1 4xQDR

vendid=0x2c9
devid=0x673c
sysimgguid=0x2c903000a6c3f
caguid=0x2c903000a6c3c
Ca	2 "H-0002c903000a6c3c"		# "node01 mlx4_0"
[1](2c903000a6c3d) 	"S-0002c902004b0918"[1]		# lid 3 lmc 0 "MF0;edge1:IS5030/U1" lid 1 4xQDR

vendid=0x2c9
devid=0x673c
sysimgguid=0x2c903000a6d13
caguid=0x2c903000a6d10
Ca	2 "H-0002c903000a6d10"		# "node02 mlx4_0"
[1](2c903000a6d11) 	"S-0002c902004b0918"[2]		# lid 4 lmc 0 "MF0;edge1:IS5030/U1" lid 1 4xQDR

vendid=0x2c9
devid=0x673c
sysimgguid=0x2c903000a6e47
caguid=0x2c903000a6e44
Ca	2 "H-0002c903000a6e44"		# "node03 mlx4_0"
[2](2c903000a6e46) 	"S-0002c902004b0a20"[7]		# lid 5 lmc 0 "edge2 4xEDR-ready" lid 2 4xDDR
)";

TEST(TopologyParser, ReadsIbnetdiscoverDump) {
  Topology t = Parse(kIbnetdiscoverDump, k4xSdr);
  ASSERT_EQ(t.nodes.size(), 5u);
  EXPECT_EQ(t.cables.size(), 4u);
  EXPECT_EQ(t.Switches().size(), 2u);
  EXPECT_EQ(t.Cas().size(), 3u);

  const Node& s1 = NodeNamed(t, "S-0002c902004b0918");
  EXPECT_EQ(s1.type, NodeType::kSwitch);
  EXPECT_EQ(s1.num_ports, 36);
  EXPECT_EQ(s1.guid, 0x2c902004b0918u);
  EXPECT_EQ(s1.description, "MF0;edge1:IS5030/U1");
  EXPECT_EQ(s1.where.line, 10);

  const Node& n3 = NodeNamed(t, "H-0002c903000a6e44");
  EXPECT_EQ(n3.type, NodeType::kCa);
  EXPECT_EQ(n3.num_ports, 2);
  EXPECT_EQ(n3.guid, 0x2c903000a6e44u);
  EXPECT_EQ(n3.description, "node03 mlx4_0");

  PortRef isl = PeerOf(t, "S-0002c902004b0918", 35);
  EXPECT_EQ(isl, (PortRef{t.FindNode("S-0002c902004b0a20"), 36}));
  const Cable* c = t.CableAt(isl);
  ASSERT_NE(c, nullptr);
  // The remote description says "4xEDR-ready"; the rate is the token after it.
  EXPECT_TRUE(SameRate(c->rate, k4xQdr)) << c->rate.ToString();

  PortRef n3_peer = PeerOf(t, "H-0002c903000a6e44", 2);
  EXPECT_EQ(n3_peer, (PortRef{t.FindNode("S-0002c902004b0a20"), 7}));
  EXPECT_TRUE(SameRate(t.CableAt(n3_peer)->rate, k4xDdr));
  EXPECT_FALSE(PeerOf(t, "H-0002c903000a6e44", 1).valid());
  EXPECT_EQ(t.CableAt(n3_peer)->where.file, "test.topo");
  EXPECT_EQ(t.CableAt(n3_peer)->where.line, 20);  // the first listing of that cable
}

TEST(TopologyParser, ReadsIbsimNetFile) {
  // The style of ibsim's net-examples: bare ids, Hca, a missing remote port (means 1), an
  // option, no rates, comments between port lines.
  Topology t = Parse(R"(# two switches
Switch	8 "Switch1"
[1]	"Hca1"[1]
# a comment inside the record
[2]	"Hca2"[2]	w=1
[3]	"Switch2"[3]
[4]	"Switch2"[4]

Switch 8 "Switch2"   # spine switch
[3]	"Switch1"[3]
[4]	"Switch1"[4]

Hca	2 "Hca1"
[1]	"Switch1"

Hca	2 "Hca2"
[2]	"Switch1" [2]
)",
                     k4xSdr);
  ASSERT_EQ(t.nodes.size(), 4u);
  EXPECT_EQ(t.cables.size(), 4u);
  // ibsim's GUID numbering: switches from 0x200000 one each, CAs from 0x100000 ports+1 each.
  EXPECT_EQ(NodeNamed(t, "Switch1").guid, 0x200000u);
  EXPECT_EQ(NodeNamed(t, "Switch2").guid, 0x200001u);
  EXPECT_EQ(NodeNamed(t, "Hca1").guid, 0x100000u);
  EXPECT_EQ(NodeNamed(t, "Hca2").guid, 0x100003u);
  EXPECT_EQ(NodeNamed(t, "Switch1").description, "Switch1");
  EXPECT_EQ(NodeNamed(t, "Switch2").description, "spine switch");
  EXPECT_EQ(PeerOf(t, "Hca1", 1), (PortRef{t.FindNode("Switch1"), 1}));
  EXPECT_EQ(PeerOf(t, "Switch2", 4), (PortRef{t.FindNode("Switch1"), 4}));
  EXPECT_TRUE(SameRate(t.CableAt({t.FindNode("Switch1"), 1})->rate, k4xSdr));
  EXPECT_TRUE(
      SameRate(t.CableAt({t.FindNode("Switch1"), 2})->rate, LinkRate(Width::k1x, Speed::kSDR)));
}

TEST(TopologyParser, IbsimDirectivesAndRouters) {
  Topology t = Parse(R"(width=2
speed=7
extspeed=2
switchguid=0x5000
caguid=0x9000
Switch	4 "sw"
[1]	"rt"[1]
[2]	"ca"[1]

guid=0x77
Rt	1 "rt"		# router
[1]	"sw"[1]

Ca	1 "ca"
[1]	"sw"[2]
)");
  EXPECT_EQ(NodeNamed(t, "sw").guid, 0x5000u);
  EXPECT_EQ(NodeNamed(t, "rt").guid, 0x77u);
  EXPECT_EQ(NodeNamed(t, "rt").type, NodeType::kCa);  // routers are end nodes in one subnet
  EXPECT_EQ(NodeNamed(t, "ca").guid, 0x9000u);
  for (const Cable& c : t.cables)
    EXPECT_TRUE(SameRate(c.rate, LinkRate(Width::k4x, Speed::kEDR))) << c.rate.ToString();
}

TEST(TopologyParser, DifferentRatesOnTheTwoEndsKeepTheFirst) {
  Topology t = Parse(R"(Switch	8 "A"
[1]	"B"[2]		# "B" lid 0 4xQDR

Switch	8 "B"
[2]	"A"[1]		# "A" lid 0 1xSDR
)");
  ASSERT_EQ(t.cables.size(), 1u);
  EXPECT_TRUE(SameRate(t.cables[0].rate, k4xQdr));
  EXPECT_EQ(t.cables[0].where.line, 2);
}

TEST(TopologyParser, AcceptsAllModelledRates) {
  for (const char* token :
       {"4xSDR", "4xDDR", "4xQDR", "1xFDR", "4xEDR", "4xHDR", "4xNDR", "12xDDR", "8xQDR"}) {
    SCOPED_TRACE(token);
    Topology t = Parse(std::string("Switch 2 \"A\"\n[1] \"B\"[1] # lid 0 ") + token +
                       "\n\nCa 1 \"B\"\n[1] \"A\"[1]\n");
    ASSERT_EQ(t.cables.size(), 1u);
    EXPECT_EQ(t.cables[0].rate.ToString(),
              std::string(token).insert(std::string(token).find('x') + 1, " "));
  }
}

TEST(TopologyWriter, RoundTripTestBed) {
  Topology t = TestBed(k4xDdr, k4xQdr);
  std::string text = Write(t);
  Topology back = Parse(text, k4xSdr);
  ExpectSameFabric(t, back);
  // Written again, the text is the same apart from the name in the header.
  back.name = t.name;
  EXPECT_EQ(Write(back), text);
}

TEST(TopologyWriter, RoundTripGeneratedFabrics) {
  std::vector<Topology> fabrics;
  fabrics.push_back(KaryNTree(2, 3, k4xQdr));
  fabrics.push_back(FatTree2Level(8, 4, 2, 3, LinkRate(Width::k12x, Speed::kFDR)));
  fabrics.push_back(Torus({3, 2}, 2, LinkRate(Width::k1x, Speed::kNDR), true));
  fabrics.push_back(Dragonfly(4, 2, 2, 5, LinkRate(Width::k4x, Speed::kHDR)));
  for (const Topology& t : fabrics) {
    SCOPED_TRACE(t.name);
    ExpectSameFabric(t, Parse(Write(t), k4xSdr));
  }
}

TEST(TopologyWriter, PrintsIbnetdiscoverLayout) {
  std::string text = Write(TestBed(k4xDdr, k4xQdr));
  std::string s1 = NodeNamed(TestBed(k4xDdr, k4xQdr), "S1").description;
  // The IDs the emulated SwitchX and ConnectX-5 answer with in NodeInfo.
  EXPECT_NE(text.find("vendid=0x2c9\ndevid=0xc738\nsysimgguid=0x"), std::string::npos);
  EXPECT_NE(text.find("vendid=0x2c9\ndevid=0x1017\nsysimgguid=0x"), std::string::npos);
  EXPECT_NE(text.find("\nSwitch\t36 \"S1\"\t\t# \"" + s1 + "\" base port 0 lid 0 lmc 0\n"),
            std::string::npos);
  EXPECT_NE(text.find("\n[4]\t\"S2\"[5]\t\t# \""), std::string::npos);
  EXPECT_NE(text.find("\nCa\t1 \"H5\"\t\t# \"H5 mlx4_0\"\n[1]("), std::string::npos);
  EXPECT_NE(text.find(") \t\"S2\"[2]\t\t# lid 0 lmc 0 \"" +
                      NodeNamed(TestBed(k4xDdr, k4xQdr), "S2").description + "\" lid 0 4xDDR\n"),
            std::string::npos);
}

TEST(TopologyWriter, RefusesUnwritableNames) {
  Topology t;
  t.AddNode(NodeType::kCa, "a\"b", 1);
  EXPECT_THROW(Write(t), TopologyError);
}

TEST(TopologyData, TestBedFileMatchesGenerator) {
  Topology t = ParseIbnetdiscoverFile(SourcePath("configs/topologies/testbed.topo"), k4xSdr);
  ExpectSameFabric(TestBed(k4xDdr, k4xQdr), t);
}

// Each file under tests/data/topologies has exactly one defect; the error names the file, the
// line and the field.
TEST(TopologyData, UnknownNodeFile) {
  std::string path = SourcePath("tests/data/topologies/unknown_node.topo");
  std::string e = FileError(path);
  EXPECT_TRUE(e.starts_with(path + ":10: node: unknown node \"H3\"")) << e;
}

TEST(TopologyData, PortOutOfRangeFile) {
  std::string path = SourcePath("tests/data/topologies/port_out_of_range.topo");
  std::string e = FileError(path);
  EXPECT_TRUE(e.starts_with(path + ":11: port: port 9 of \"S2\" is out of range 1..8")) << e;
}

TEST(TopologyData, OneSidedCableFile) {
  std::string path = SourcePath("tests/data/topologies/one_sided_cable.topo");
  std::string e = FileError(path);
  EXPECT_TRUE(e.starts_with(path + ":5: cable: one-sided cable \"S1\"[4] -> \"S2\"[4]")) << e;
  EXPECT_NE(e.find("\"S2\" (line 7)"), std::string::npos) << e;
}

TEST(TopologyErrors, MissingFileNamesThePath) {
  std::string e = FileError("/nonexistent/dir/fabric.topo");
  EXPECT_TRUE(e.starts_with("/nonexistent/dir/fabric.topo: file: cannot open")) << e;
}

struct ErrorCase {
  const char* what;
  const char* text;
  const char* prefix;
};

TEST(TopologyErrors, EachDefectNamesFileLineAndField) {
  const ErrorCase cases[] = {
      {"unknown node", "Switch 8 \"A\"\n[1] \"Z\"[1]\n", "bad.topo:2: node: unknown node \"Z\""},
      {"local port out of range", "Switch 8 \"A\"\n[9] \"B\"[1]\n\nCa 1 \"B\"\n[1] \"A\"[9]\n",
       "bad.topo:2: port: port 9 of \"A\" is out of range 1..8"},
      {"port 0", "Ca 1 \"B\"\n[0] \"A\"[1]\n", "bad.topo:2: port: port 0 of \"B\""},
      {"remote port out of range", "Switch 8 \"A\"\n[1] \"B\"[2]\n\nCa 1 \"B\"\n",
       "bad.topo:2: port: remote port 2 of \"B\" is out of range 1..1"},
      {"remote side of a CA out of range", "Ca 1 \"B\"\n[1] \"A\"[40]\n\nSwitch 36 \"A\"\n",
       "bad.topo:2: port: remote port 40 of \"A\" is out of range 1..36"},
      {"one-sided, other end silent", "Switch 8 \"A\"\n[1] \"B\"[1]\n\nCa 1 \"B\"\n",
       "bad.topo:2: cable: one-sided cable \"A\"[1] -> \"B\"[1]"},
      {"one-sided, other end elsewhere",
       "Switch 8 \"A\"\n[1] \"B\"[1]\n[2] \"C\"[1]\n\nCa 1 \"B\"\n[1] \"A\"[2]\n\nCa 1 \"C\"\n[1] "
       "\"A\"[2]\n",
       "bad.topo:2: cable: one-sided cable \"A\"[1] -> \"B\"[1]: line 6 says \"B\"[1] -> "
       "\"A\"[2]"},
      {"port listed twice", "Switch 8 \"A\"\n[1] \"B\"[1]\n[1] \"B\"[1]\n",
       "bad.topo:3: port: port 1 of \"A\" is listed twice (first at line 2)"},
      {"port line outside a section", "# header\n[1] \"B\"[1]\n", "bad.topo:2: syntax: port line"},
      {"port line after a blank line", "Ca 1 \"B\"\n\n[1] \"A\"[1]\n",
       "bad.topo:3: syntax: port line outside any node section"},
      {"unquoted id", "Switch 8 S1\n", "bad.topo:1: syntax: expected the quoted node id"},
      {"no port count", "Switch \"S1\"\n", "bad.topo:1: syntax: expected the number of ports"},
      {"bad port number", "Switch 8 \"A\"\n[x] \"B\"[1]\n",
       "bad.topo:2: syntax: expected \"[<port>]\""},
      {"garbage line", "Switch 8 \"A\"\n\nhello world\n", "bad.topo:3: syntax: unrecognised line"},
      {"text after the id", "Ca 1 \"B\" extra\n", "bad.topo:1: syntax: unexpected \"extra\""},
      {"unknown port option", "Ca 1 \"B\"\n[1] \"A\"[1] q=3\n",
       "bad.topo:2: syntax: unexpected \"q=3\""},
      {"ibsim include", "include \"other.net\"\n", "bad.topo:1: syntax: ibsim directive"},
      {"bad assignment", "vendid 0x2c9\n", "bad.topo:1: syntax: expected '='"},
      {"duplicate node", "Ca 1 \"B\"\n\nCa 2 \"B\"\n",
       "bad.topo:3: node: duplicate node \"B\" (first declared at line 1)"},
      {"duplicate guid", "guid=0x10\nCa 1 \"B\"\n\nguid=0x10\nCa 1 \"C\"\n",
       "bad.topo:5: guid: GUID 0x10 of \"C\" is already the GUID of \"B\""},
      {"too many ports", "Switch 300 \"A\"\n", "bad.topo:1: port: a node has 1..254 ports"},
      {"FDR10 rate", "Switch 8 \"A\"\n[1] \"B\"[1] # \"B\" lid 3 4xFDR10\n",
       "bad.topo:2: rate: link rate \"4xFDR10\" is not modelled"},
      {"2x width", "Switch 8 \"A\"\n[1] \"B\"[1] # \"B\" lid 3 2xHDR\n",
       "bad.topo:2: rate: link rate \"2xHDR\""},
      {"self loop on one port", "Switch 8 \"A\"\n[1] \"A\"[1]\n",
       "bad.topo:2: port: a cable cannot loop back"},
      {"empty file", "# nothing\n\n", "bad.topo:2: node: the file declares no nodes"},
  };
  for (const ErrorCase& c : cases) {
    std::string e = ParseError(c.text);
    EXPECT_TRUE(e.starts_with(c.prefix)) << c.what << "\n  got:  " << e << "\n  want: " << c.prefix;
  }
}

TEST(TopologyParser, SkipsGroupingAndExtPorts) {
  // ibnetdiscover -g output: chassis headers and "[ext N]" faceplate numbers.
  Topology t = Parse(R"(Chassis 1 (guid 0x2c902004b0918)

# Spine Nodes
switchguid=0x2c902004b0918(2c902004b0918)	# ISR9024 Spine 1 Chip 1
Switch	24 "S-0002c902004b0918"		# "spine" base port 0 lid 1 lmc 0
[1][ext 1]	"H-0002c903000a6c3c"[1](2c903000a6c3d) 		# "h1" lid 3 4xDDR

Non-Chassis Nodes

Hostname: h1
caguid=0x2c903000a6c3c
Ca	1 "H-0002c903000a6c3c"		# "h1"
[1](2c903000a6c3d) 	"S-0002c902004b0918"[1][ext 1]		# lid 3 lmc 0 "spine" lid 1 4xDDR
)");
  EXPECT_EQ(t.cables.size(), 1u);
  EXPECT_TRUE(SameRate(t.cables[0].rate, k4xDdr));
}

TEST(TopologyParser, AcceptsCrlfLineEnds) {
  Topology t =
      Parse("Switch 2 \"A\"\r\n[1] \"B\"[1] # lid 0 4xDDR\r\n\r\nCa 1 \"B\"\r\n[1] \"A\"[1]\r\n");
  ASSERT_EQ(t.cables.size(), 1u);
  EXPECT_TRUE(SameRate(t.cables[0].rate, k4xDdr));
}

// ---------------------------------------------------------------------------------------------
// Generators

// Every pair of distinct switches joined by at most one cable, no port cabled to its own node.
void ExpectNoParallelCables(const Topology& t) {
  std::set<std::pair<int, int>> pairs;
  for (const Cable& c : t.cables) {
    EXPECT_NE(c.a.node, c.b.node) << t.nodes[c.a.node].name;
    auto key = std::minmax(c.a.node, c.b.node);
    EXPECT_TRUE(pairs.insert(key).second)
        << "two cables between " << t.nodes[key.first].name << " and " << t.nodes[key.second].name;
  }
}

TEST(TopologyGenerators, TestBed) {
  Topology t = TestBed(k4xDdr, k4xQdr);
  EXPECT_NO_THROW(t.Validate());
  ASSERT_EQ(t.nodes.size(), 9u);
  EXPECT_EQ(t.cables.size(), 8u);
  EXPECT_EQ(t.Switches().size(), 2u);
  EXPECT_EQ(t.Cas().size(), 7u);
  int s1 = t.FindNode("S1"), s2 = t.FindNode("S2");
  ASSERT_GE(s1, 0);
  ASSERT_GE(s2, 0);
  EXPECT_EQ(t.nodes[s1].num_ports, kTestBedSwitchPorts);
  for (int h = 1; h <= 7; ++h) {
    std::string name = "H" + std::to_string(h);
    const Node& host = NodeNamed(t, name);
    EXPECT_EQ(host.type, NodeType::kCa);
    PortRef sw = PeerOf(t, name, 1);
    EXPECT_EQ(sw, (PortRef{h <= 3 ? s1 : s2, h <= 3 ? h : h - 3})) << name;
    EXPECT_TRUE(SameRate(t.CableAt(sw)->rate, k4xDdr)) << name;
  }
  EXPECT_EQ(PeerOf(t, "H5", 1), (PortRef{s2, 2}));
  EXPECT_EQ(t.Peer({s1, 4}), (PortRef{s2, 5}));
  EXPECT_TRUE(SameRate(t.CableAt({s1, 4})->rate, k4xQdr));
  std::set<uint64_t> guids;
  for (const Node& n : t.nodes) EXPECT_TRUE(guids.insert(n.guid).second) << n.name;
}

TEST(TopologyGenerators, KaryNTree4ary3tree) {
  Topology t = KaryNTree(4, 3, k4xQdr);
  EXPECT_NO_THROW(t.Validate());
  EXPECT_EQ(t.Cas().size(), 64u);
  EXPECT_EQ(t.Switches().size(), 48u);
  EXPECT_EQ(t.cables.size(), 64u + 2 * 16 * 4);
  ExpectNoParallelCables(t);
  for (int s : t.Switches()) {
    const Node& n = t.nodes[s];
    EXPECT_EQ(n.num_ports, 8);
    int used = 0;
    for (int p = 1; p <= n.num_ports; ++p) used += n.cable_at[p] >= 0;
    bool root = n.name.starts_with("L0-");
    EXPECT_EQ(used, root ? 4 : 8) << n.name;
  }
  // Leaf L2-S5 holds hosts 21..24; each middle switch reaches 4 distinct roots.
  EXPECT_EQ(PeerOf(t, "H21", 1), (PortRef{t.FindNode("L2-S5"), 1}));
  EXPECT_EQ(PeerOf(t, "H24", 1), (PortRef{t.FindNode("L2-S5"), 4}));
  std::set<int> roots;
  for (int p = 5; p <= 8; ++p) {
    PortRef up = PeerOf(t, "L1-S6", p);
    EXPECT_TRUE(t.nodes[up.node].name.starts_with("L0-"));
    roots.insert(up.node);
  }
  EXPECT_EQ(roots.size(), 4u);
}

TEST(TopologyGenerators, KaryNTreeSmallCases) {
  Topology one = KaryNTree(3, 1, k4xQdr);
  EXPECT_EQ(one.Switches().size(), 1u);
  EXPECT_EQ(one.Cas().size(), 3u);
  Topology t = KaryNTree(2, 4, k4xQdr);
  EXPECT_EQ(t.Cas().size(), 16u);
  EXPECT_EQ(t.Switches().size(), 32u);
  EXPECT_EQ(t.cables.size(), 16u * 4);
  EXPECT_THROW(KaryNTree(0, 3, k4xQdr), TopologyError);
  EXPECT_THROW(KaryNTree(200, 2, k4xQdr), TopologyError);
}

TEST(TopologyGenerators, FatTree648) {
  Topology t = FatTree648(k4xQdr);
  EXPECT_NO_THROW(t.Validate());
  EXPECT_EQ(t.Cas().size(), 648u);
  EXPECT_EQ(t.Switches().size(), 54u);
  EXPECT_EQ(t.cables.size(), 1296u);
  std::vector<int> leaves, spines;
  for (int s : t.Switches()) {
    EXPECT_EQ(t.nodes[s].num_ports, 36);
    (t.nodes[s].name.starts_with("Leaf") ? leaves : spines).push_back(s);
  }
  ASSERT_EQ(leaves.size(), 36u);
  ASSERT_EQ(spines.size(), 18u);
  // Every leaf reaches every spine exactly once, and has 18 hosts.
  std::map<std::pair<int, int>, int> links;
  for (int leaf : leaves) {
    int hosts = 0;
    for (int p = 1; p <= 36; ++p) {
      PortRef peer = t.Peer({leaf, p});
      ASSERT_TRUE(peer.valid());
      if (t.nodes[peer.node].type == NodeType::kCa)
        ++hosts;
      else
        ++links[{leaf, peer.node}];
    }
    EXPECT_EQ(hosts, 18);
  }
  EXPECT_EQ(links.size(), 36u * 18);
  for (auto& [pair, count] : links) {
    EXPECT_EQ(count, 1);
    EXPECT_TRUE(t.nodes[pair.second].name.starts_with("Spine"));
  }
}

// The 11,664-host tree of 36-port switches, and a small one whose every cable is checked: each
// leaf reaches each aggregation switch of its pod once, each aggregation switch its h cores once,
// and each core one aggregation switch of every pod, so every host pair has h*h shortest paths
// across pods.
TEST(TopologyGenerators, FatTree3Level) {
  Topology big = FatTree3Level(36, k4xQdr);
  EXPECT_EQ(big.Cas().size(), 11664u);
  EXPECT_EQ(big.Switches().size(), 1620u);
  EXPECT_EQ(big.cables.size(), 11664u * 3);
  for (int s : big.Switches()) EXPECT_EQ(big.nodes[s].num_ports, 36);

  Topology t = FatTree3Level(6, k4xQdr);  // h = 3: 54 hosts, 9 cores, 18 + 18 pod switches
  ASSERT_EQ(t.Cas().size(), 54u);
  ASSERT_EQ(t.Switches().size(), 45u);
  std::map<std::pair<std::string, std::string>, int> links;
  for (const Cable& c : t.cables) {
    std::string a = t.nodes[c.a.node].name, b = t.nodes[c.b.node].name;
    ++links[{std::min(a, b), std::max(a, b)}];
  }
  for (int pod = 0; pod < 6; ++pod)
    for (int j = 0; j < 3; ++j) {
      std::string agg = "A" + std::to_string(pod) + "." + std::to_string(j);
      for (int i = 0; i < 3; ++i)
        EXPECT_EQ((links[{agg, "L" + std::to_string(pod) + "." + std::to_string(i)}]), 1);
      for (int m = 0; m < 3; ++m)
        EXPECT_EQ((links[{agg, "C" + std::to_string(j) + "." + std::to_string(m)}]), 1);
    }
  EXPECT_EQ(links.size(), 54u + 6 * 9 + 6 * 9);
  // Core C1.2 port 5 is pod 4's aggregation switch A4.1 at its up port 3 + 1 + 2.
  PortRef peer = t.Peer({t.FindNode("C1.2"), 5});
  ASSERT_TRUE(peer.valid());
  EXPECT_EQ(t.nodes[peer.node].name, "A4.1");
  EXPECT_EQ(peer.port, 6);
  // H4 is the first host of the second leaf of pod 0.
  peer = t.Peer({t.FindNode("H4"), 1});
  EXPECT_EQ(t.nodes[peer.node].name, "L0.1");
  EXPECT_EQ(peer.port, 1);
  EXPECT_THROW(FatTree3Level(7, k4xQdr), TopologyError);
}

TEST(TopologyGenerators, FatTree2LevelChecksFit) {
  EXPECT_THROW(FatTree2Level(8, 4, 5, 4, k4xQdr), TopologyError);  // 4 + 5 > 8
  EXPECT_THROW(FatTree2Level(8, 9, 2, 2, k4xQdr), TopologyError);  // 9 leaves > 8 spine ports
  Topology t = FatTree2Level(8, 8, 4, 4, k4xQdr);
  EXPECT_EQ(t.cables.size(), 8u * 4 + 8u * 4);
}

// Switch-to-switch cables only.
size_t SwitchCables(const Topology& t) {
  size_t n = 0;
  for (const Cable& c : t.cables)
    n += t.nodes[c.a.node].type == NodeType::kSwitch && t.nodes[c.b.node].type == NodeType::kSwitch;
  return n;
}

TEST(TopologyGenerators, TorusAndMeshLinkCounts) {
  Topology torus = Torus({4, 4}, 1, k4xQdr, true);
  EXPECT_NO_THROW(torus.Validate());
  EXPECT_EQ(torus.Switches().size(), 16u);
  EXPECT_EQ(torus.Cas().size(), 16u);
  EXPECT_EQ(SwitchCables(torus), 32u);  // 2 dimensions x 4 rings x 4 cables
  EXPECT_EQ(torus.nodes[torus.FindNode("S0.0")].num_ports, 1 + 4);
  // Wrap-around: S3.1's +x port (dimension 0, port 1+2) reaches S0.1's -x port.
  EXPECT_EQ(PeerOf(torus, "S3.1", 3), (PortRef{torus.FindNode("S0.1"), 2}));
  EXPECT_EQ(PeerOf(torus, "H2.3-1", 1), (PortRef{torus.FindNode("S2.3"), 1}));
  ExpectNoParallelCables(torus);

  Topology mesh = Torus({4, 4}, 2, k4xQdr, false);
  EXPECT_EQ(SwitchCables(mesh), 24u);  // 2 x 4 x 3
  EXPECT_EQ(mesh.Cas().size(), 32u);
  EXPECT_FALSE(PeerOf(mesh, "S3.1", 4).valid());

  Topology cube = Torus({3, 3, 3}, 0, k4xQdr, true);
  EXPECT_EQ(SwitchCables(cube), 81u);
  EXPECT_EQ(cube.Cas().size(), 0u);
}

TEST(TopologyGenerators, TorusOfSizeTwoHasNoDoubleCable) {
  Topology t = Torus({2, 3}, 1, k4xQdr, true);
  EXPECT_NO_THROW(t.Validate());
  EXPECT_EQ(SwitchCables(t), 3u + 6u);  // size 2: one cable per ring; size 3: three per ring
  ExpectNoParallelCables(t);
  Topology ring2 = Torus({2}, 1, k4xQdr, true);
  EXPECT_EQ(SwitchCables(ring2), 1u);
  Topology single = Torus({1}, 2, k4xQdr, true);
  EXPECT_EQ(SwitchCables(single), 0u);
  EXPECT_EQ(single.cables.size(), 2u);
  EXPECT_THROW(Torus({}, 1, k4xQdr, true), TopologyError);
  EXPECT_THROW(Torus({4, 0}, 1, k4xQdr, true), TopologyError);
}

TEST(TopologyGenerators, DragonflyCounts) {
  // Balanced, largest for a=4, p=h=2: g = a*h + 1 = 9, one global cable per pair of groups.
  Topology t = Dragonfly(4, 2, 2, 9, k4xQdr);
  EXPECT_NO_THROW(t.Validate());
  EXPECT_EQ(t.Switches().size(), 36u);
  EXPECT_EQ(t.Cas().size(), 72u);
  EXPECT_EQ(t.cables.size(), 72u + 9 * 6 + 9 * 8 / 2);
  ExpectNoParallelCables(t);
  std::map<std::pair<char, char>, int> between;  // global cables per pair of groups
  for (int s : t.Switches()) {
    const Node& n = t.nodes[s];
    EXPECT_EQ(n.num_ports, 2 + 3 + 2);
    for (int p = 1; p <= n.num_ports; ++p) EXPECT_GE(n.cable_at[p], 0) << n.name << " " << p;
  }
  for (const Cable& c : t.cables) {
    const std::string& a = t.nodes[c.a.node].name;
    const std::string& b = t.nodes[c.b.node].name;
    if (t.nodes[c.b.node].type != NodeType::kSwitch || a[1] == b[1]) continue;
    ++between[std::minmax(a[1], b[1])];
  }
  EXPECT_EQ(between.size(), 36u);
  for (auto& [groups, count] : between) EXPECT_EQ(count, 1);

  // Spare global ports: a*h = 8 for g = 5 gives two cables per pair of groups.
  Topology d2 = Dragonfly(4, 2, 2, 5, k4xQdr);
  EXPECT_EQ(d2.cables.size(), 40u + 5 * 6 + 10 * 2);
  EXPECT_THROW(Dragonfly(4, 2, 2, 10, k4xQdr), TopologyError);  // a*h = 8 < 9
}

TEST(TopologyGenerators, Deterministic) {
  EXPECT_EQ(Write(KaryNTree(4, 2, k4xQdr)), Write(KaryNTree(4, 2, k4xQdr)));
  EXPECT_EQ(Write(Dragonfly(2, 1, 1, 3, k4xQdr)), Write(Dragonfly(2, 1, 1, 3, k4xQdr)));
  std::set<uint64_t> guids;
  for (const Node& n : FatTree648(k4xQdr).nodes) EXPECT_TRUE(guids.insert(n.guid).second);
}

}  // namespace
}  // namespace ibemu::topology
