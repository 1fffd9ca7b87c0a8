// ibemu-fabricmgr: the subnet manager daemon (`run`) and its command line (`show`).
// docs/fabricmgr.md describes both.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <string>

#include "fabricmgr/subnet.h"
#include "fabricmgr/subnet_manager.h"

int main(int argc, char** argv) {
  using namespace ibemu::fabricmgr;
  CLI::App app{"ibemu-fabricmgr: a subnet manager for InfiniBand fabrics (and ibemu's)"};
  app.require_subcommand(1, 1);
  const char* fabric = std::getenv("IBEMU_FABRIC");
  std::string default_name = fabric && *fabric ? fabric : "default";

  RunOptions ro;
  ro.name = default_name;
  ro.sweep_seconds = -1;
  std::string guid_text;
  CLI::App* run = app.add_subcommand("run", "run the subnet manager until SIGINT or SIGTERM");
  run->add_option("--port-guid", guid_text,
                  "GUID of the local port to manage from (default: the one libibumad picks; "
                  "under `ibemu exec`, --port's)");
  run->add_option("--config", ro.policy_file, "policy file (YAML, docs/fabricmgr.md)")
      ->check(CLI::ExistingFile);
  run->add_option("--state-dir", ro.state_dir,
                  "directory of the GUID-to-LID table (guid2lid) kept across restarts");
  run->add_option("--sweep", ro.sweep_seconds,
                  "seconds between light sweeps, 0 for none (default: the policy's, else 10)")
      ->check(CLI::Range(0, 86400));
  run->add_option("--name", ro.name,
                  "name of the control socket (default: $IBEMU_FABRIC, else 'default')");

  std::string what, sw, name = default_name;
  bool as_json = false;
  int timeout_ms = 5000;
  CLI::App* show = app.add_subcommand("show", "ask the running daemon what it found");
  show->add_option("what", what, "nodes, ports or routes")
      ->required()
      ->check(CLI::IsMember({"nodes", "ports", "routes"}));
  show->add_option("switch", sw, "routes: only this switch (name, description or GUID)");
  show->add_option("--name", name, "the daemon's --name (default: $IBEMU_FABRIC, else 'default')");
  show->add_flag("--json", as_json, "print the daemon's JSON reply");
  show->add_option("--timeout", timeout_ms, "milliseconds to wait for the daemon")
      ->check(CLI::Range(1, 600000));

  CLI11_PARSE(app, argc, argv);
  if (*run) {
    if (!guid_text.empty() && !ParseGuid(guid_text, &ro.port_guid)) {
      std::fprintf(stderr, "ibemu-fabricmgr: error: --port-guid: '%s' is not a GUID\n",
                   guid_text.c_str());
      return 2;
    }
    return RunDaemon(ro);
  }
  if (!sw.empty() && what != "routes") {
    std::fprintf(stderr, "ibemu-fabricmgr: error: only 'show routes' takes a switch\n");
    return 2;
  }
  return Show(name, what, sw, as_json, timeout_ms);
}
