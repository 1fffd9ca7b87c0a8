// ibemu-ccmgr: the congestion-control manager daemon (`run`) and its command line (apply, show,
// set, log, status). docs/ccmgr.md describes both.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cc-manager/cli.h"
#include "cc-manager/daemon.h"
#include "fabricmgr/subnet.h"

namespace {

using namespace ibemu::ccmgr;

int Fail(const std::string& e) {
  std::fprintf(stderr, "ibemu-ccmgr: error: %s\n", e.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "ibemu-ccmgr: an InfiniBand congestion-control manager (for ibemu's fabrics and "
      "real ones)"};
  app.require_subcommand(1, 1);
  const char* fabric = std::getenv("IBEMU_FABRIC");
  std::string name = fabric && *fabric ? fabric : "default";
  int timeout_ms = 10000;
  bool as_json = false;
  auto common = [&](CLI::App* c) {
    c->add_option("--name", name, "the daemon's name (default: $IBEMU_FABRIC, else 'default')");
  };

  DaemonOptions d;
  std::string guid_text;
  CLI::App* run = app.add_subcommand("run", "run the manager until SIGINT or SIGTERM");
  run->add_option("--port-guid", guid_text,
                  "GUID of the local port to manage from (default: libibumad's; under `ibemu "
                  "exec`, --port's)");
  run->add_option("--policy", d.policy_file,
                  "the policy: YAML (.yaml/.yml) or an opensm.conf (docs/ccmgr.md)")
      ->check(CLI::ExistingFile);
  run->add_option("--export", d.export_dir,
                  "directory for events.csv, marking.csv, summary.json, marking.png");
  run->add_option("--sweep", d.sweep_seconds,
                  "seconds between discoveries (new CCAs are programmed); 0: only at start")
      ->check(CLI::Range(0.0, 86400.0));
  run->add_option("--poll", d.poll_ms, "milliseconds between CongestionLog reads; 0: none")
      ->check(CLI::Range(0, 3600000));
  run->add_option("--mad-timeout", d.timeout_ms, "milliseconds per MAD try")
      ->check(CLI::Range(1, 60000));
  run->add_option("--retries", d.retries, "tries after the first")->check(CLI::Range(0, 20));
  common(run);

  std::string policy_path;
  CLI::App* apply = app.add_subcommand("apply", "replace the policy and program every CCA");
  apply->add_option("policy", policy_path, "YAML policy or opensm.conf")
      ->required()
      ->check(CLI::ExistingFile);
  common(apply);

  std::string node;
  int port = 0;
  CLI::App* show = app.add_subcommand("show", "list the CCAs, or read one node's settings back");
  show->add_option("node", node, "node name (first word of its NodeDescription) or GUID");
  show->add_option("--port", port, "a CA port, or a switch port")->check(CLI::Range(0, 254));
  show->add_flag("--json", as_json, "print the reply as JSON");
  common(show);

  std::vector<std::string> set_args;
  std::string set_node;
  int set_port = 0;
  CLI::App* set = app.add_subcommand(
      "set", "change one option live: KEY VALUE, or KEY SL VALUE for per-SL options");
  set->add_option("args", set_args,
                  "an OpenSM cc_* option (or, with --port, control_type, "
                  "threshold, packet_size, marking_rate) and its value")
      ->required()
      ->expected(2, 3);
  set->add_option("--node", set_node, "only this node (default: every CCA)");
  set->add_option("--port", set_port, "a switch port's SwitchPortCongestionSetting element")
      ->check(CLI::Range(1, 254));
  common(set);

  bool follow = false;
  CLI::App* log = app.add_subcommand("log", "the congestion events the manager read");
  log->add_flag("--follow,-f", follow, "keep printing new events until interrupted");
  log->add_flag("--json", as_json, "one JSON object per event");
  common(log);

  CLI::App* status = app.add_subcommand("status", "what the manager has done");
  status->add_flag("--json", as_json, "print the reply as JSON");
  common(status);
  for (CLI::App* c : {apply, show, set, log, status})
    c->add_option("--timeout", timeout_ms, "milliseconds to wait for the daemon")
        ->check(CLI::Range(1, 600000));

  CLI11_PARSE(app, argc, argv);
  if (*run) {
    if (!guid_text.empty() && !ibemu::fabricmgr::ParseGuid(guid_text, &d.port_guid))
      return Fail("--port-guid: '" + guid_text + "' is not a GUID");
    d.name = name;
    return RunDaemon(d);
  }

  Request q;
  if (*apply) {
    q.mutable_apply()->set_path(std::filesystem::absolute(policy_path).string());
  } else if (*show) {
    q.mutable_show()->set_node(node);
    q.mutable_show()->set_port(port);
  } else if (*set) {
    SetOption* s = q.mutable_set();
    s->set_node(set_node);
    s->set_port(set_port);
    s->set_key(set_args[0]);
    s->set_sl(-1);
    if (set_args.size() == 3) {
      const std::string& sl = set_args[1];
      if (sl.empty() || sl.size() > 2 || sl.find_first_not_of("0123456789") != std::string::npos ||
          std::stoi(sl) > 15)
        return Fail("set: '" + sl + "' is not an SL (0..15)");
      s->set_sl(std::stoi(sl));
    }
    s->set_value(set_args.back());
  } else if (*status) {
    q.mutable_status();
  }
  if (*log) {
    uint64_t after = 0;
    while (true) {
      Request lq;
      lq.mutable_log()->set_after(after);
      Reply r;
      std::string error;
      if (!Ask(name, lq, timeout_ms, &r, &error)) return Fail(error);
      for (const Event& e : r.events())
        std::fputs(as_json ? (ToJson(e) + "\n").c_str() : FormatEvent(e).c_str(), stdout);
      std::fflush(stdout);
      // Whatever was logged before, then only what is new.
      after = r.events_size() ? r.events(r.events_size() - 1).seq() : std::max(after, r.last_seq());
      // Without -f: everything the daemon keeps, in as many replies as it takes.
      if (!follow && r.events_size() == 0) return 0;
      if (r.events_size() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
  Reply r;
  std::string error;
  if (!Ask(name, q, timeout_ms, &r, &error)) return Fail(error);
  if (as_json) {
    std::printf("%s\n", (*status ? ToJson(r.status()) : ToJson(r)).c_str());
    return r.ok() ? 0 : 1;
  }
  if (*status) {
    std::fputs(FormatStatus(r.status()).c_str(), stdout);
  } else if (*show && !node.empty()) {
    for (const NodeState& n : r.nodes()) std::fputs(FormatNode(n).c_str(), stdout);
  } else {
    if (!r.message().empty()) std::printf("%s\n", r.message().c_str());
    if (r.nodes_size()) std::fputs(FormatNodes(r).c_str(), stdout);
  }
  if (!r.ok()) return Fail(r.error().empty() ? "the daemon refused" : r.error());
  return 0;
}
