// Bad input is refused before anything starts: `ibemu run` exits with status 2, names the file,
// the line and the field, and creates no results directory.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>

#include "tests/integration/cli_util.h"

namespace {

struct Case {
  const char* file;      // under tests/data/scenarios
  const char* location;  // file:line: field: the error must start with this (after the prefix)
  const char* words;     // and say this
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.file;
}

class BadInput : public ::testing::TestWithParam<Case> {};

TEST_P(BadInput, IsRefusedWithFileLineAndFieldBeforeAnythingStarts) {
  const Case& c = GetParam();
  std::string dir = std::string(IBEMU_SOURCE_DIR) + "/tests/data/";
  ibemu::testing::TempDir tmp("bad-input");
  std::filesystem::path out = tmp / "out";
  ibemu::testing::CliResult r =
      ibemu::testing::Ibemu("run -q " + dir + "scenarios/" + c.file + " -o " + out.string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find(std::string("ibemu: error: ") + dir + c.location), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(c.words), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(out)) << "results were written for a refused scenario";
}

INSTANTIATE_TEST_SUITE_P(
    Scenarios, BadInput,
    ::testing::Values(
        Case{"trace_deadlock.yaml", "traces/deadlock.trace:3: ",
             "the trace deadlocks: rank 0 waits here for a message from rank 1"},
        Case{"trace_size_mismatch.yaml", "traces/size_mismatch.trace:3: ",
             "receives 2048 bytes, but message 1 is sent with 4096 at line 2"},
        Case{"trace_sources.yaml",
             "scenarios/trace_sources.yaml:5: traffic[0].sources: ", "the trace has 2 ranks"},
        Case{"end_without_trace.yaml",
             "scenarios/end_without_trace.yaml:6: run.end: ", "no traffic entry is a trace"},
        Case{"missing_node.yaml",
             "scenarios/missing_node.yaml:7: traffic[1].dst: ", "no node named 'H9'"},
        Case{"vl_beyond_configured.yaml",
             "scenarios/vl_beyond_configured.yaml:7: fabric.sl2vl[3]: ",
             "VL 3 is beyond the 2 data VLs"},
        Case{"vlarb_beyond_configured.yaml",
             "scenarios/vlarb_beyond_configured.yaml:8: fabric.vlarb.low[2]: ",
             "VL 4 is beyond the 4 data VLs"},
        Case{"data_vls_unsupported.yaml",
             "scenarios/data_vls_unsupported.yaml:6: fabric.data_vls: ", "16 data VLs"},
        Case{"topo_unknown_node.yaml",
             "topologies/unknown_node.topo:10: node: ", "unknown node \"H3\""},
        Case{"topo_port_out_of_range.yaml",
             "topologies/port_out_of_range.topo:11: port: ", "out of range 1..8"},
        Case{"topo_one_sided_cable.yaml",
             "topologies/one_sided_cable.topo:5: cable: ", "one-sided cable"},
        Case{"cc_unknown_key.yaml",
             "scenarios/cc_unknown_key.yaml:6: "
             "congestion_control.ib.cc_sw_cong_setting_treshold: ",
             "unknown key; expected one of: cc_ca_cong_setting_ccti_increase"},
        Case{"cc_threshold_range.yaml",
             "scenarios/cc_threshold_range.yaml:7: "
             "congestion_control.ib.cc_sw_cong_setting_threshold: ",
             "16 is out of range (0..15)"},
        Case{"cc_ccti_min_beyond_limit.yaml",
             "scenarios/cc_ccti_min_beyond_limit.yaml:7: "
             "congestion_control.ib.cc_ca_cong_setting_ccti_min: ",
             "SL 0 is 5, beyond CCTI_Limit 3"},
        Case{"cc_bad_cct_entry.yaml",
             "scenarios/cc_bad_cct_entry.yaml:6: congestion_control.ib.cc_cct: ",
             "'4:1' is not shift:multiplier"},
        Case{"cc_port_out_of_range.yaml",
             "scenarios/cc_port_out_of_range.yaml:6: "
             "congestion_control.switch_ports.S2:37: ",
             "port '37' is not a port of S2 (1..36)"},
        Case{"cc_unknown_mechanism.yaml",
             "scenarios/cc_unknown_mechanism.yaml:5: "
             "congestion_control.mechanism: ",
             "unknown mechanism 'ibcc'; known: ccfit, dbbm, ddbbm, ecocc, fbicm, hfdi, ib, mvcm, "
             "none, probe, santos, selftuned"},
        Case{"ddbbm_too_few_vls.yaml",
             "scenarios/ddbbm_too_few_vls.yaml:7: congestion_control.parameters: ",
             "needs 5 data VLs, one per queue; fabric.data_vls is 4 (mechanism ddbbm)"},
        Case{"bad_transport.yaml", "scenarios/bad_transport.yaml:5: traffic[0].transport: ",
             "'ud' is not a transport (rc, uc)"},
        Case{"nfly_unidirectional.yaml",
             "scenarios/nfly_unidirectional.yaml:7: topology.direction: ",
             "'unidirectional': only bidirectional k-ary n-flies are generated"},
        Case{"cc_bad_parameter.yaml",
             "scenarios/cc_bad_parameter.yaml:8: "
             "congestion_control.parameters.evaluation: ",
             "'per_voq' is not one of sum, sum_per_input, voq (mechanism ib)"}),
    [](const ::testing::TestParamInfo<Case>& i) {
      std::string n = i.param.file;
      n = n.substr(0, n.find('.'));
      for (char& c : n)
        if (!isalnum(static_cast<unsigned char>(c))) c = '_';
      return n;
    });

TEST(BadInputCli, MissingScenarioFileIsNamed) {
  ibemu::testing::CliResult r = ibemu::testing::Ibemu("run /nonexistent/scenario.yaml");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("/nonexistent/scenario.yaml"), std::string::npos) << r.out;
}

TEST(BadInputCli, UnknownKeyIsNamedWithItsLine) {
  std::filesystem::path f = std::filesystem::temp_directory_path() / "ibemu_unknown_key.yaml";
  FILE* w = fopen(f.c_str(), "w");
  fputs("name: x\ntopology:\n  generator: testbed\nfabric:\n  data_vl: 2\n", w);
  fclose(w);
  ibemu::testing::CliResult r = ibemu::testing::Ibemu("validate " + f.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find(f.string() + ":5: fabric.data_vl: unknown key"), std::string::npos) << r.out;
}

}  // namespace
