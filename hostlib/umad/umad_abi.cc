// The libibumad.so.3 ABI (rdma-core 44, symbol versions IBUMAD_1.0..1.2, see libibumad.map): thin
// wrappers that give each call the return and errno conventions of the real library and leave
// the work to Host. Only these functions are exported.
#include <endian.h>
#include <errno.h>
#include <infiniband/umad.h>
#include <poll.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "hostlib/client/host_log.h"
#include "hostlib/umad/ca_info.h"
#include "hostlib/umad/host.h"

#define UMAD_EXPORT extern "C" __attribute__((visibility("default")))

using ibemu::umad::AgentRequest;
using ibemu::umad::CaAttributes;
using ibemu::umad::Host;
using ibemu::umad::kUmadHeaderBytes;

namespace {

// C callers must not see C++ exceptions; an allocation failure becomes -ENOMEM. Only
// std::exception is caught, so the forced unwind of pthread_cancel passes through.
template <typename R, typename F>
R Guard(R on_error, F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    ibemu::hostclient::Warn("libibumad", "%s", e.what());
    errno = ENOMEM;
    return on_error;
  }
}

ib_user_mad* Hdr(void* umad) {
  return static_cast<ib_user_mad*>(umad);
}

// Port errors: an explicit port that does not exist is the caller's mistake (-EINVAL or -EIO as
// the real function reports it); port 0 that cannot be resolved means no device (-ENODEV).
int PortError(int r, int requested_port, int explicit_error) {
  if (r == -EINVAL) return requested_port ? explicit_error : -ENODEV;
  return r;
}

int RegisterCommon(int fd, const AgentRequest& req) {
  uint32_t id = 0;
  int r = Host::Get().Register(fd, req, &id);
  if (r < 0) {
    HOST_TRACE("fd %d registering class 0x%x version %u failed: %s", fd, req.mgmt_class,
               req.class_version, std::strerror(-r));
    errno = -r;
    return -EPERM;
  }
  return static_cast<int>(id);
}

void CopyMask(AgentRequest& req, const long* method_mask) {
  if (method_mask) std::memcpy(req.method_mask.data(), method_mask, sizeof req.method_mask);
}

constexpr uint32_t kOpenIbOui = 0x001405;

}  // namespace

UMAD_EXPORT int umad_init(void) {
  HOST_TRACE("umad_init");
  return 0;
}

UMAD_EXPORT int umad_done(void) {
  return Guard(0, [] {
    Host::Get().Done();
    return 0;
  });
}

UMAD_EXPORT int umad_get_cas_names(char cas[][UMAD_CA_NAME_LEN], int max) {
  return Guard(0, [&] {
    CaAttributes ca;
    if (max < 1 || Host::Get().Describe(&ca) < 0) return 0;
    std::snprintf(cas[0], UMAD_CA_NAME_LEN, "%s", ibemu::umad::CaName(ca).c_str());
    return 1;
  });
}

UMAD_EXPORT int umad_get_ca_portguids(const char* ca_name, __be64* portguids, int max) {
  return Guard(-ENOMEM, [&] {
    CaAttributes ca;
    if (Host::Get().Resolve(ca_name, nullptr, &ca) < 0) return -ENODEV;
    if (!portguids) return 0;
    const int n = ibemu::umad::NumPorts(ca) + 1;
    if (n > max) return -ENOMEM;
    for (int i = 0; i < n; ++i) {
      const auto* p = ibemu::umad::FindPort(ca, i);
      portguids[i] = p ? htobe64(p->port_guid()) : htobe64(0);
    }
    return n;
  });
}

UMAD_EXPORT int umad_get_ca(const char* ca_name, umad_ca_t* ca) {
  return Guard(-ENOMEM, [&] {
    CaAttributes attrs;
    if (!ca || Host::Get().Resolve(ca_name, nullptr, &attrs) < 0) return -ENODEV;
    return ibemu::umad::FillCa(attrs, ca);
  });
}

UMAD_EXPORT int umad_release_ca(umad_ca_t* ca) {
  if (!ca) return -ENODEV;
  ibemu::umad::ReleaseCa(ca);
  return 0;
}

UMAD_EXPORT int umad_get_port(const char* ca_name, int portnum, umad_port_t* port) {
  return Guard(-ENOMEM, [&] {
    CaAttributes ca;
    int resolved = portnum;
    if (!port) return -EINVAL;
    if (int r = Host::Get().Resolve(ca_name, &resolved, &ca); r < 0)
      return PortError(r, portnum, -EIO);
    const auto* p = ibemu::umad::FindPort(ca, resolved);
    if (!p) return portnum ? -EIO : -ENODEV;
    return ibemu::umad::FillPort(ibemu::umad::CaName(ca), *p, port);
  });
}

UMAD_EXPORT int umad_release_port(umad_port_t* port) {
  if (!port) return -ENODEV;
  ibemu::umad::ReleasePort(port);
  return 0;
}

UMAD_EXPORT int umad_get_issm_path(const char* ca_name, int portnum, char path[], int max) {
  return Guard(-ENOMEM, [&] {
    int r = Host::Get().IssmPath(ca_name, portnum, path, max);
    return r < 0 ? PortError(r, portnum, -EINVAL) : 0;
  });
}

UMAD_EXPORT int umad_open_port(const char* ca_name, int portnum) {
  HOST_TRACE("ca %s port %d", ca_name ? ca_name : "(null)", portnum);
  return Guard(-ENOMEM, [&] {
    int r = Host::Get().OpenPort(ca_name, portnum);
    return r < 0 ? PortError(r, portnum, -EINVAL) : r;
  });
}

UMAD_EXPORT int umad_close_port(int portid) {
  return Guard(0, [&] { return Host::Get().ClosePort(portid); });
}

UMAD_EXPORT void* umad_get_mad(void* umad) {
  return static_cast<uint8_t*>(umad) + kUmadHeaderBytes;
}

UMAD_EXPORT size_t umad_size(void) {
  return kUmadHeaderBytes;
}

UMAD_EXPORT int umad_status(void* umad) {
  return static_cast<int>(Hdr(umad)->status);
}

UMAD_EXPORT ib_mad_addr_t* umad_get_mad_addr(void* umad) {
  return &Hdr(umad)->addr;
}

// The GRH fields come in host order except the GID (umad.h: umad_set_grh takes host order).
UMAD_EXPORT int umad_set_grh(void* umad, void* mad_addr) {
  ib_mad_addr_t& a = Hdr(umad)->addr;
  if (!mad_addr) {
    a.grh_present = 0;
    return 0;
  }
  const auto* src = static_cast<const ib_mad_addr_t*>(mad_addr);
  a.grh_present = 1;
  std::memcpy(a.gid, src->gid, sizeof a.gid);
  a.flow_label = htobe32(static_cast<uint32_t>(src->flow_label));
  a.hop_limit = src->hop_limit;
  a.traffic_class = src->traffic_class;
  return 0;
}

UMAD_EXPORT int umad_set_addr_net(void* umad, __be16 dlid, __be32 dqp, int sl, __be32 qkey) {
  ib_mad_addr_t& a = Hdr(umad)->addr;
  a.qpn = dqp;
  a.lid = dlid;
  a.qkey = qkey;
  a.sl = static_cast<uint8_t>(sl);
  return 0;
}

UMAD_EXPORT int umad_set_addr(void* umad, int dlid, int dqp, int sl, int qkey) {
  return umad_set_addr_net(umad, htobe16(static_cast<uint16_t>(dlid)),
                           htobe32(static_cast<uint32_t>(dqp)), sl,
                           htobe32(static_cast<uint32_t>(qkey)));
}

UMAD_EXPORT int umad_set_pkey(void* umad, int pkey_index) {
  Hdr(umad)->addr.pkey_index = static_cast<uint16_t>(pkey_index);
  return 0;
}

UMAD_EXPORT int umad_get_pkey(void* umad) {
  return Hdr(umad)->addr.pkey_index;
}

UMAD_EXPORT int umad_send(int portid, int agentid, void* umad, int length, int timeout_ms,
                          int retries) {
  return Guard(-EIO, [&] {
    // The real library writes these into the caller's header before write(2).
    ib_user_mad* hdr = Hdr(umad);
    hdr->timeout_ms = static_cast<uint32_t>(timeout_ms);
    hdr->retries = static_cast<uint32_t>(retries);
    hdr->agent_id = static_cast<uint32_t>(agentid);
    if (ibemu::hostclient::DebugLevel() > 1) umad_dump(umad);
    int r = agentid < 0
                ? -EINVAL
                : Host::Get().Send(portid, static_cast<uint32_t>(agentid),
                                   static_cast<const uint8_t*>(umad), length, timeout_ms, retries);
    if (r == 0) return 0;
    // write(2) failed: errno says why, the return value is always -EIO.
    errno = -r;
    return -EIO;
  });
}

UMAD_EXPORT int umad_recv(int portid, void* umad, int* length, int timeout_ms) {
  if (!umad || !length) {
    errno = EINVAL;
    return -EINVAL;
  }
  return Guard(-EIO, [&] {
    return Host::Get().Recv(portid, static_cast<uint8_t*>(umad), length, timeout_ms);
  });
}

UMAD_EXPORT int umad_poll(int portid, int timeout_ms) {
  return Guard(-EIO, [&] { return Host::Get().Poll(portid, timeout_ms); });
}

UMAD_EXPORT int umad_get_fd(int portid) {
  return portid;
}

UMAD_EXPORT int umad_register(int portid, int mgmt_class, int mgmt_version, uint8_t rmpp_version,
                              long method_mask[16 / sizeof(long)]) {
  return Guard(-EPERM, [&] {
    AgentRequest req;
    req.mgmt_class = static_cast<uint8_t>(mgmt_class);
    req.class_version = static_cast<uint8_t>(mgmt_version);
    req.rmpp_version = rmpp_version;
    req.oui = kOpenIbOui;
    CopyMask(req, method_mask);
    return RegisterCommon(portid, req);
  });
}

UMAD_EXPORT int umad_register_oui(int portid, int mgmt_class, uint8_t rmpp_version, uint8_t oui[3],
                                  long method_mask[16 / sizeof(long)]) {
  if (mgmt_class < 0x30 || mgmt_class > 0x4F) return -EINVAL;
  return Guard(-EPERM, [&] {
    AgentRequest req;
    req.mgmt_class = static_cast<uint8_t>(mgmt_class);
    req.class_version = 1;
    req.rmpp_version = rmpp_version;
    req.oui = uint32_t{oui[0]} << 16 | uint32_t{oui[1]} << 8 | oui[2];
    CopyMask(req, method_mask);
    return RegisterCommon(portid, req);
  });
}

// Unlike umad_register, errors come back as positive errno values.
UMAD_EXPORT int umad_register2(int port_fd, struct umad_reg_attr* attr, uint32_t* agent_id) {
  if (!attr || !agent_id) return EINVAL;
  if (attr->mgmt_class >= 0x30 && attr->mgmt_class <= 0x4F &&
      ((attr->oui & 0x00FFFFFF) == 0 || (attr->oui & 0xFF000000) != 0))
    return EINVAL;
  if (attr->flags & ~static_cast<uint32_t>(UMAD_USER_RMPP)) {
    // IB_USER_MAD_REGISTER_AGENT2 reports the flags it supports.
    attr->flags = UMAD_USER_RMPP;
    return EINVAL;
  }
  return Guard(ENOMEM, [&] {
    AgentRequest req;
    req.mgmt_class = attr->mgmt_class;
    req.class_version = attr->mgmt_class_version;
    req.rmpp_version = attr->rmpp_version;
    req.flags = attr->flags;
    req.oui = attr->oui;
    req.method_mask = {attr->method_mask[0], attr->method_mask[1]};
    int r = Host::Get().Register(port_fd, req, agent_id);
    return r < 0 ? -r : 0;
  });
}

UMAD_EXPORT int umad_unregister(int portid, int agentid) {
  return Guard(-1, [&] {
    int r = agentid < 0 ? -EINVAL : Host::Get().Unregister(portid, static_cast<uint32_t>(agentid));
    if (r == 0) return 0;
    errno = -r;  // an ioctl(2) failure
    return -1;
  });
}

UMAD_EXPORT int umad_debug(int level) {
  if (level >= 0) ibemu::hostclient::DebugLevel() = level;
  return ibemu::hostclient::DebugLevel();
}

UMAD_EXPORT void umad_addr_dump(ib_mad_addr_t* addr) {
  char gid[33];
  for (int i = 0; i < 16; ++i) std::snprintf(gid + 2 * i, 3, "%02x", addr->gid[i]);
  ibemu::hostclient::Warn(
      __func__,
      "qpn %u qkey 0x%x lid %u sl %d\n"
      "grh_present %d gid_index %d hop_limit %d traffic_class %d flow_label 0x%x "
      "pkey_index 0x%x\nGid 0x%s",
      be32toh(addr->qpn), be32toh(addr->qkey), be16toh(addr->lid), addr->sl, addr->grh_present,
      addr->gid_index, addr->hop_limit, addr->traffic_class, be32toh(addr->flow_label),
      addr->pkey_index, gid);
}

UMAD_EXPORT void umad_dump(void* umad) {
  const ib_user_mad* hdr = Hdr(umad);
  ibemu::hostclient::Warn(__func__, "agent id %u status %x timeout %u", hdr->agent_id, hdr->status,
                          hdr->timeout_ms);
  umad_addr_dump(&Hdr(umad)->addr);
}

// ---------------------------------------------------------------------------------------------
// CA device lists (IBUMAD_1.1, 1.2). Each node is one allocation with the name behind it, so
// umad_free_ca_device_list frees a node with one free().

UMAD_EXPORT struct umad_device_node* umad_get_ca_device_list(void) {
  CaAttributes ca;
  int r = Guard(-ENOMEM, [&] { return Host::Get().Describe(&ca); });
  if (r < 0) {
    errno = r == -ENOMEM ? ENOMEM : 0;  // no device is not an error
    return nullptr;
  }
  const std::string name = ibemu::umad::CaName(ca);
  auto* node =
      static_cast<umad_device_node*>(std::calloc(1, sizeof(umad_device_node) + name.size() + 1));
  if (!node) {
    errno = ENOMEM;
    return nullptr;
  }
  char* text = reinterpret_cast<char*>(node + 1);
  std::memcpy(text, name.c_str(), name.size() + 1);
  node->ca_name = text;
  errno = 0;
  return node;
}

UMAD_EXPORT void umad_free_ca_device_list(struct umad_device_node* head) {
  while (head) {
    umad_device_node* next = head->next;
    std::free(head);
    head = next;
  }
}

// Sorts by CA name. `size` 0 means "count them"; a list of another length than `size` is EINVAL.
UMAD_EXPORT int umad_sort_ca_device_list(struct umad_device_node** head, size_t size) {
  std::vector<umad_device_node*> nodes;
  try {
    for (umad_device_node* n = *head; n; n = n->next) {
      if (size && nodes.size() == size) return EINVAL;
      nodes.push_back(n);
    }
  } catch (const std::bad_alloc&) {
    return ENOMEM;
  }
  if (size && nodes.size() != size) return EINVAL;
  if (nodes.size() < 2) return 0;
  std::stable_sort(nodes.begin(), nodes.end(),
                   [](const umad_device_node* a, const umad_device_node* b) {
                     return std::strcmp(a->ca_name, b->ca_name) < 0;
                   });
  for (size_t i = 0; i + 1 < nodes.size(); ++i) nodes[i]->next = nodes[i + 1];
  nodes.back()->next = nullptr;
  *head = nodes.front();
  return 0;
}
