// The fabric's description of an HCA (umad.proto CaAttributes) as the verbs structures a
// ConnectX-5 driver fills: ibv_device_attr(_ex), ibv_port_attr, the GID table. Pure functions,
// so the mapping is tested without a fabric.
#pragma once
#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>

#include "hostlib/client/fabric_address.h"
#include "umad.pb.h"

namespace ibemu::verbs {

// The shared receive queue limits the device reports (ibv_device_attr) and ibv_create_srq and
// ibv_modify_srq enforce: a ConnectX-5's.
constexpr uint32_t kMaxSrqWr = 32767;
constexpr uint32_t kMaxSrqSge = 31;

void FillDeviceAttr(const umad::CaAttributes& ca, ibv_device_attr* attr);
// Fills the first `size` bytes of an ibv_device_attr_ex (callers built against older headers
// pass less); the rest of a larger one is zeroed.
void FillDeviceAttrEx(const umad::CaAttributes& ca, ibv_device_attr_ex* attr, size_t size);
// The same for ibv_port_attr.
void FillPortAttr(const umad::PortAttributes& p, ibv_port_attr* attr, size_t size);

// GID `index` of the port: index 0 is the subnet prefix and the port GUID (IBA 4.1.1); the
// table is GUIDCap entries long and the rest are zero, as an SM that assigns no alias GUIDs
// leaves them. False when `index` is outside the table.
bool PortGid(const umad::PortAttributes& p, int index, ibv_gid* gid);
int GidTableLength(const umad::PortAttributes& p);

using hostclient::FindPort;

}  // namespace ibemu::verbs
