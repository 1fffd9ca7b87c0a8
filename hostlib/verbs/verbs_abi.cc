// The exported C functions for devices, contexts and queries, with rdma-core 44's return and
// errno conventions. Queries go to the fabric each time, as the real library reads sysfs or asks
// the kernel each time.
#include <endian.h>
#include <infiniband/verbs.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

#include "hostlib/verbs/attributes.h"
#include "hostlib/verbs/device.h"
#include "hostlib/verbs/sysfs.h"
#include "hostlib/verbs/sysfs_tree.h"

// verbs.h makes these two inline wrappers; the exported functions keep the plain names.
#undef ibv_query_port
#undef ibv_reg_mr

using ibemu::verbs::Context;
using ibemu::verbs::DescribeHca;
using ibemu::verbs::ToDevice;

namespace {

// rdma-core's enum ibv_gid_type_sysfs (driver.h): IB and RoCE v1 GIDs are type 0.
constexpr int kGidTypeSysfsIbRoceV1 = 0;

const ibemu::umad::PortAttributes* PortOf(const ibemu::umad::CaAttributes& ca, int port_num) {
  return ibemu::verbs::FindPort(ca, port_num);
}

// GID entry `index` of the port; false when it is outside the table or empty.
bool GidEntry(const ibemu::umad::PortAttributes& p, int index, ibv_gid_entry* e) {
  std::memset(e, 0, sizeof *e);
  static const ibv_gid kZero{};
  if (!ibemu::verbs::PortGid(p, index, &e->gid) || std::memcmp(&e->gid, &kZero, sizeof kZero) == 0)
    return false;
  e->gid_index = static_cast<uint32_t>(index);
  e->port_num = p.port();
  e->gid_type = IBV_GID_TYPE_IB;
  return true;
}

}  // namespace

#define IBEMU_EXPORT extern "C" __attribute__((visibility("default")))

IBEMU_EXPORT ibv_device** ibv_get_device_list(int* num_devices) {
  // One HCA per process, or none; the array is NULL-terminated and freed by
  // ibv_free_device_list.
  auto ca = DescribeHca();
  int n = ca ? 1 : 0;
  auto** list = static_cast<ibv_device**>(std::calloc(n + 1, sizeof(ibv_device*)));
  if (!list) {
    errno = ENOMEM;
    return nullptr;
  }
  if (n) list[0] = &ibemu::verbs::TheDevice().dev;
  if (num_devices) *num_devices = n;
  return list;
}

IBEMU_EXPORT void ibv_free_device_list(ibv_device** list) {
  std::free(list);
}

IBEMU_EXPORT const char* ibv_get_device_name(ibv_device* device) {
  return device->name;
}

IBEMU_EXPORT int ibv_get_device_index(ibv_device* device) {
  return ToDevice(device) ? 0 : -1;
}

IBEMU_EXPORT __be64 ibv_get_device_guid(ibv_device* device) {
  auto* d = ToDevice(device);
  if (!d) return 0;
  std::lock_guard lock(d->mu);
  return htobe64(d->ca.node_guid());
}

IBEMU_EXPORT ibv_context* ibv_open_device(ibv_device* device) {
  // A program that opens the device reads its sysfs files next (rdma-core's own providers do):
  // refresh them. The open itself needs nothing from the fabric, so a failure here is no error.
  if (ToDevice(device)) DescribeHca();
  return ibemu::verbs::OpenContext(device);
}

IBEMU_EXPORT int ibv_close_device(ibv_context* context) {
  return ibemu::verbs::CloseContext(context);
}

IBEMU_EXPORT int ibv_query_device(ibv_context*, ibv_device_attr* device_attr) {
  auto ca = DescribeHca();
  if (!ca) return ENODEV;
  ibemu::verbs::FillDeviceAttr(*ca, device_attr);
  return 0;
}

// The symbol binaries built before the extended port query call (and the inline wrapper falls
// back to): the attributes up to link_layer, the part every version of the struct has.
IBEMU_EXPORT int ibv_query_port(ibv_context* context, uint8_t port_num,
                                _compat_ibv_port_attr* port_attr) {
  return ibemu::verbs::QueryPort(context, port_num, reinterpret_cast<ibv_port_attr*>(port_attr),
                                 offsetof(ibv_port_attr, flags));
}

IBEMU_EXPORT int ibv_query_gid(ibv_context*, uint8_t port_num, int index, ibv_gid* gid) {
  auto ca = DescribeHca();
  if (!ca) return -1;
  const auto* p = PortOf(*ca, port_num);
  if (!p || !ibemu::verbs::PortGid(*p, index, gid)) return -1;
  return 0;
}

IBEMU_EXPORT int _ibv_query_gid_ex(ibv_context*, uint32_t port_num, uint32_t gid_index,
                                   ibv_gid_entry* entry, uint32_t flags, size_t entry_size) {
  if (flags) return EINVAL;
  if (entry_size < sizeof(ibv_gid_entry)) return EINVAL;
  auto ca = DescribeHca();
  if (!ca) return ENODEV;
  const auto* p = PortOf(*ca, static_cast<int>(port_num));
  if (!p) return EINVAL;
  ibv_gid_entry e;
  if (gid_index >= static_cast<uint32_t>(ibemu::verbs::GidTableLength(*p))) return EINVAL;
  // An empty entry is ENODATA, as the kernel answers for an unused GID slot.
  if (!GidEntry(*p, static_cast<int>(gid_index), &e)) return ENODATA;
  std::memcpy(entry, &e, sizeof e);
  return 0;
}

IBEMU_EXPORT ssize_t _ibv_query_gid_table(ibv_context*, ibv_gid_entry* entries, size_t max_entries,
                                          uint32_t flags, size_t entry_size) {
  if (flags || entry_size < sizeof(ibv_gid_entry)) {
    errno = EINVAL;
    return -EINVAL;
  }
  auto ca = DescribeHca();
  if (!ca) return -ENODEV;
  size_t n = 0;
  auto* out = reinterpret_cast<char*>(entries);
  for (const auto& p : ca->ports()) {
    for (int i = 0; i < ibemu::verbs::GidTableLength(p); ++i) {
      ibv_gid_entry e;
      if (!GidEntry(p, i, &e)) continue;
      if (n == max_entries) return -EINVAL;  // the table does not fit
      std::memcpy(out + n * entry_size, &e, sizeof e);
      ++n;
    }
  }
  return static_cast<ssize_t>(n);
}

// IBVERBS_PRIVATE_34, declared in rdma-core's driver.h; ibv_devinfo calls it for every GID.
IBEMU_EXPORT int ibv_query_gid_type(ibv_context*, uint8_t port_num, unsigned int index, int* type) {
  auto ca = DescribeHca();
  if (!ca) return -1;
  const auto* p = PortOf(*ca, port_num);
  ibv_gid gid;
  if (!p || !ibemu::verbs::PortGid(*p, static_cast<int>(index), &gid)) {
    errno = EINVAL;
    return -1;
  }
  *type = kGidTypeSysfsIbRoceV1;
  return 0;
}

IBEMU_EXPORT int ibv_query_pkey(ibv_context*, uint8_t port_num, int index, __be16* pkey) {
  auto ca = DescribeHca();
  if (!ca) return -1;
  const auto* p = PortOf(*ca, port_num);
  if (!p || index < 0 || index >= p->pkeys_size()) return -1;
  *pkey = htobe16(static_cast<uint16_t>(p->pkeys(index)));
  return 0;
}

IBEMU_EXPORT int ibv_get_pkey_index(ibv_context*, uint8_t port_num, __be16 pkey) {
  auto ca = DescribeHca();
  if (!ca) return -1;
  const auto* p = PortOf(*ca, port_num);
  if (p) {
    for (int i = 0; i < p->pkeys_size(); ++i)
      if (htobe16(static_cast<uint16_t>(p->pkeys(i))) == pkey) return i;
  }
  errno = ENOENT;
  return -1;
}

// On a host with RDMA hardware, /sys/class/infiniband exists before any verbs call, and Open
// MPI's openib BTL checks for it (opal_common_verbs_check_basics) before it asks for the device
// list: so the first call in a process describes the HCA, which writes the tree (one query of
// the fabric, even if the process has described it before).
IBEMU_EXPORT const char* ibv_get_sysfs_path() {
  static std::once_flag described;
  if (!ibemu::verbs::SysfsTree::Get().root().empty())
    std::call_once(described, [] { DescribeHca(); });
  return ibemu::verbs::SysfsRoot().c_str();
}

// As rdma-core reads a sysfs file: the trailing newline dropped, the rest NUL-terminated, and -1
// when it does not fit. The device's own files come from a fresh description of the HCA (which
// also rewrites them in the sysfs tree, so the file and this answer are the same bytes); any
// other path, in the tree or not, is read from the file system.
IBEMU_EXPORT int ibv_read_sysfs_file(const char* dir, const char* file, char* buf, size_t size) {
  std::string contents;
  auto* d = &ibemu::verbs::TheDevice();
  std::optional<ibemu::umad::CaAttributes> ca;
  {
    std::lock_guard lock(d->mu);
    if (!d->ca.ca_name().empty()) ca = d->ca;
  }
  std::optional<std::string> ours;
  if (ibemu::verbs::SysfsTree::Get().Contains(dir) ||
      (ca && ibemu::verbs::SysfsFile(*ca, dir, file))) {
    // Values that change (LIDs, states) are read fresh; with the fabric gone, the last ones.
    if (auto fresh = DescribeHca()) ca = std::move(fresh);
    if (ca) ours = ibemu::verbs::SysfsFile(*ca, dir, file);
  }
  if (ours) {
    contents = std::move(*ours);
  } else {
    std::string path = std::string(dir) + "/" + file;
    FILE* f = std::fopen(path.c_str(), "re");
    if (!f) return -1;
    contents.resize(size);
    contents.resize(std::fread(contents.data(), 1, size, f));
    std::fclose(f);
  }
  size_t len = std::min(contents.size(), size);
  std::memcpy(buf, contents.data(), len);
  if (len > 0) {
    if (buf[len - 1] == '\n')
      buf[--len] = '\0';
    else if (len < size)
      buf[len] = '\0';
    else
      return -1;
  }
  return static_cast<int>(len);
}

// Blocks on async_fd until an event waits (a non-blocking async_fd says EAGAIN), as the real
// library reads the uverbs async file.
IBEMU_EXPORT int ibv_get_async_event(ibv_context* context, ibv_async_event* event) {
  uint64_t n;
  if (read(context->async_fd, &n, sizeof n) != sizeof n) return -1;
  ibemu::verbs::Context* c = ibemu::verbs::ToContext(context);
  std::lock_guard lock(c->events_mu);
  if (c->events.empty()) {
    errno = EAGAIN;
    return -1;
  }
  *event = c->events.front();
  c->events.pop_front();
  return 0;
}

// Counts the event as handled on its object, which destroy may wait for.
IBEMU_EXPORT void ibv_ack_async_event(ibv_async_event* event) {
  pthread_mutex_t* mu = nullptr;
  pthread_cond_t* cond = nullptr;
  uint32_t* done = nullptr;
  switch (event->event_type) {
    case IBV_EVENT_SRQ_ERR:
    case IBV_EVENT_SRQ_LIMIT_REACHED:
      mu = &event->element.srq->mutex;
      cond = &event->element.srq->cond;
      done = &event->element.srq->events_completed;
      break;
    case IBV_EVENT_CQ_ERR:
      mu = &event->element.cq->mutex;
      cond = &event->element.cq->cond;
      done = &event->element.cq->async_events_completed;
      break;
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_COMM_EST:
    case IBV_EVENT_SQ_DRAINED:
    case IBV_EVENT_PATH_MIG:
    case IBV_EVENT_PATH_MIG_ERR:
    case IBV_EVENT_QP_LAST_WQE_REACHED:
      mu = &event->element.qp->mutex;
      cond = &event->element.qp->cond;
      done = &event->element.qp->events_completed;
      break;
    default:
      return;  // port and device events belong to no object
  }
  pthread_mutex_lock(mu);
  ++*done;
  pthread_cond_signal(cond);
  pthread_mutex_unlock(mu);
}

// Memory registered with the emulated HCA is never pinned by a kernel, so fork needs nothing.
IBEMU_EXPORT int ibv_fork_init() {
  return 0;
}
IBEMU_EXPORT ibv_fork_status ibv_is_fork_initialized() {
  return IBV_FORK_UNNEEDED;
}
