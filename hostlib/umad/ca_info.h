// Where the library finds its fabric and port (environment), and how the fabric's description of
// a node (CaAttributes) becomes the umad_ca_t / umad_port_t that the real library fills from
// sysfs: same byte orders, same port numbering, so ibstat and OpenSM read the same values.
#pragma once
#include <infiniband/umad.h>

#include <chrono>
#include <string>

#include "hostlib/client/fabric_address.h"
#include "umad.pb.h"

namespace ibemu::umad {

// The CA name used until the fabric names it (CaAttributes.ca_name).
inline constexpr const char* kDefaultCaName = "mlx5_0";

// The fabric (shared with the verbs library) and the port this process stands behind.
struct Config : hostclient::FabricAddress {
  std::string node;  // IBEMU_UMAD_PORT=<node>:<port>; empty when unset
  int port = 0;
  bool port_given = false;  // "<node>" alone: the best port, as libibumad resolves port 0

  static Config FromEnv();
};

// Port 0 of umad_open_port/umad_get_port means "pick one": the configured port, or else, like
// libibumad's resolve_ca_port(), port 0 of a switch, the first Active port, the first LinkUp
// port, the first port that is not Disabled. Returns -1 when the node has no usable port.
int ResolvePort(const CaAttributes& ca, int wanted, const Config& cfg);

using hostclient::FindPort;

// The CA name the application sees.
std::string CaName(const CaAttributes& ca);

// umad_ca_t.numports: the highest port number present below UMAD_CA_MAX_PORTS, as sysfs counts
// (a switch shows only its management port 0).
int NumPorts(const CaAttributes& ca);

// Fill the structures the way libibumad's sysfs reader does: GUIDs, GID prefix and capability
// mask in network order, everything else in host order. Ports are calloc'ed (umad_release_*
// frees them). Return 0 or -ENOMEM.
int FillPort(const std::string& ca_name, const PortAttributes& p, umad_port_t* port);
int FillCa(const CaAttributes& ca, umad_ca_t* out);
void ReleasePort(umad_port_t* port);
void ReleaseCa(umad_ca_t* ca);

}  // namespace ibemu::umad
