#include "cc-manager/cli.h"

#include <google/protobuf/util/json_util.h>

#include <cstdio>
#include <filesystem>
#include <zmq.hpp>

#include "cc-manager/daemon.h"

namespace ibemu::ccmgr {

bool Ask(const std::string& name, const Request& q, int timeout_ms, Reply* r, std::string* error) {
  std::string endpoint = ControlEndpoint(name, error);
  if (endpoint.empty()) return false;
  if (!std::filesystem::exists(endpoint.substr(6))) {
    *error = "no ibemu-ccmgr named '" + name + "' is running (no " + endpoint.substr(6) + ")";
    return false;
  }
  zmq::context_t ctx;
  zmq::socket_t req(ctx, zmq::socket_type::req);
  req.set(zmq::sockopt::linger, 0);
  req.set(zmq::sockopt::rcvtimeo, timeout_ms);
  req.set(zmq::sockopt::sndtimeo, timeout_ms);
  req.connect(endpoint);
  std::string text = q.SerializeAsString();
  zmq::message_t reply;
  if (!req.send(zmq::buffer(text), zmq::send_flags::none) ||
      !req.recv(reply, zmq::recv_flags::none)) {
    *error = "the ibemu-ccmgr named '" + name + "' did not answer on " + endpoint + " within " +
             std::to_string(timeout_ms) + " ms";
    return false;
  }
  if (!r->ParseFromArray(reply.data(), static_cast<int>(reply.size()))) {
    *error = "the reply on " + endpoint + " is not an ibemu.ccmgr.Reply";
    return false;
  }
  return true;
}

std::string FormatNodes(const Reply& r) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-10s %-6s %-18s %5s %4s  %-10s %10s %9s %10s  %s\n", "node",
                "type", "guid", "lid", "port", "state", "programmed", "events", "violations",
                "detail");
  out += line;
  for (const NodeState& n : r.nodes()) {
    std::snprintf(line, sizeof line, "%-10s %-6s 0x%016llx %5u %4d  %-10s %10llu %9llu %10u  %s\n",
                  n.name().c_str(), n.is_switch() ? "switch" : "CA",
                  static_cast<unsigned long long>(n.guid()), n.lid(), n.port(), n.state().c_str(),
                  static_cast<unsigned long long>(n.programmed()),
                  static_cast<unsigned long long>(n.events()), n.cc_key_violations(),
                  n.detail().c_str());
    out += line;
  }
  return out;
}

std::string FormatNode(const NodeState& n) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%s%s (LID %u, GUID 0x%016llx): %s%s%s\n", n.name().c_str(),
                n.is_switch() ? "" : (" port " + std::to_string(n.port())).c_str(), n.lid(),
                static_cast<unsigned long long>(n.guid()), n.state().c_str(),
                n.detail().empty() ? "" : ": ", n.detail().c_str());
  out += line;
  if (!n.read_back()) return out;
  std::snprintf(line, sizeof line,
                "  CongestionKeyInfo: CC_Key 0x%016llx protect %d lease %u s violations %u; "
                "traps to LID %u\n",
                static_cast<unsigned long long>(n.cc_key()), n.cc_key_protect() ? 1 : 0,
                n.cc_key_lease_period(), n.cc_key_violations(), n.trap_lid());
  out += line;
  if (n.is_switch()) {
    std::snprintf(line, sizeof line,
                  "  SwitchCongestionSetting: Control_Map 0x%x Threshold %u Packet_Size %u "
                  "Marking_Rate %u CS_Threshold %u CS_ReturnDelay %u:%u\n",
                  n.control_map(), n.threshold(), n.packet_size(), n.marking_rate(),
                  n.cs_threshold(), n.cs_return_delay() >> 14, n.cs_return_delay() & 0x3FFF);
    out += line;
    out += "    Victim_Mask " + n.victim_mask() + " Credit_Mask " + n.credit_mask() + "\n";
    for (const PortSetting& p : n.ports()) {
      if (!p.valid()) continue;
      std::snprintf(line, sizeof line,
                    "  port %d: Control_Type %u Threshold %u Packet_Size %u Marking_Rate %u\n",
                    p.port(), p.control_type(), p.threshold(), p.packet_size(), p.marking_rate());
      out += line;
    }
    return out;
  }
  std::snprintf(line, sizeof line, "  CACongestionSetting: Port_Control 0x%x Control_Map 0x%x\n",
                n.port_control(), n.ca_control_map());
  out += line;
  for (const SlEntry& e : n.sl()) {
    std::snprintf(line, sizeof line,
                  "    SL %2d: CCTI_Timer %u CCTI_Increase %u Trigger_Threshold %u CCTI_Min %u\n",
                  e.sl(), e.ccti_timer(), e.ccti_increase(), e.trigger_threshold(), e.ccti_min());
    out += line;
  }
  std::snprintf(line, sizeof line, "  CongestionControlTable: CCTI_Limit %u\n   ", n.ccti_limit());
  out += line;
  for (int i = 0; i < n.cct_size(); ++i) {
    std::snprintf(line, sizeof line, " %u:%u", n.cct(i) >> 14, n.cct(i) & 0x3FFF);
    out += line;
    if (i % 12 == 11 && i + 1 < n.cct_size()) out += "\n   ";
  }
  out += "\n";
  return out;
}

std::string FormatEvent(const Event& e) {
  char line[200];
  if (e.kind() == "mark")
    std::snprintf(line, sizeof line,
                  "%8llu %12.6f s  %-8s port %-3d marked  SLID %u DLID %u SL %u\n",
                  static_cast<unsigned long long>(e.seq()), e.time_s(), e.node().c_str(), e.port(),
                  e.slid(), e.dlid(), e.sl());
  else
    std::snprintf(line, sizeof line,
                  "%8llu %12.6f s  %-8s port %-3d CCTI at Trigger_Threshold  QP 0x%x remote "
                  "LID %u QP 0x%x SL %u\n",
                  static_cast<unsigned long long>(e.seq()), e.time_s(), e.node().c_str(), e.port(),
                  e.local_qp(), e.slid(), e.remote_qp(), e.sl());
  return line;
}

std::string FormatStatus(const Status& s) {
  char line[512];
  std::snprintf(line, sizeof line,
                "policy %s, from %s\n%u CCAs: %u verified, %u failed\n%llu sweeps, %llu MADs sent\n"
                "%llu congestion events counted, %llu read from the logs\n"
                "%llu CC_Key violations, %llu Bad CC_Key traps\nexport %s\n",
                s.policy().c_str(), s.port().c_str(), s.ccas(), s.verified(), s.failed(),
                static_cast<unsigned long long>(s.sweeps()),
                static_cast<unsigned long long>(s.mads_sent()),
                static_cast<unsigned long long>(s.events_counted()),
                static_cast<unsigned long long>(s.events()),
                static_cast<unsigned long long>(s.key_violations()),
                static_cast<unsigned long long>(s.traps()),
                s.export_dir().empty() ? "(none)" : s.export_dir().c_str());
  return line;
}

std::string ToJson(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::util::JsonPrintOptions o;
  o.add_whitespace = true;
  o.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(m, &out, o);
  return out;
}

}  // namespace ibemu::ccmgr
