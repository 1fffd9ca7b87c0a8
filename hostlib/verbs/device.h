// The one ibv_device of the process (its emulated HCA) and the contexts opened on it, laid out
// as programs built against rdma-core 44's headers expect: ibv_context last inside
// verbs_context, verbs_context.sz and abi_compat telling the inline verbs that the extended ops
// are there, and every data-path op of ibv_context.ops callable.
#pragma once
#include <infiniband/verbs.h>

#include <cerrno>
#include <deque>
#include <mutex>
#include <new>
#include <optional>

#include "umad.pb.h"

namespace ibemu::verbs {

// A verbs object, or null with errno ENOMEM, as every rdma-core allocation fails.
template <typename T>
T* Allocate() {
  T* t = new (std::nothrow) T();
  if (!t) errno = ENOMEM;
  return t;
}

struct Device {
  ibv_device dev;  // first: programs hold the ibv_device*
  std::mutex mu;
  umad::CaAttributes ca;  // the last description, under mu
};

// Never freed: a program may keep the ibv_device* after ibv_free_device_list (the real library
// keeps devices alive while a context is open; ours lives as long as the process).
Device& TheDevice();
Device* ToDevice(ibv_device* dev);  // null when it is not ours

// A fresh description of the HCA (AdoptDescription follows it), or nothing.
std::optional<umad::CaAttributes> DescribeHca();
// Makes `ca` the device's: the names and GUIDs of TheDevice(), and the files of the sysfs tree
// (sysfs_tree.h), so a program reading sysfs after any query sees what the query saw.
void AdoptDescription(const umad::CaAttributes& ca);

struct Context {
  verbs_context vctx;  // vctx.context is what the program holds
  std::mutex events_mu;
  std::deque<ibv_async_event> events;  // read by ibv_get_async_event
};
static_assert(offsetof(verbs_context, context) + sizeof(ibv_context) == sizeof(verbs_context),
              "ibv_context must end verbs_context");

Context* ToContext(ibv_context* ctx);

// verbs_context.query_port and query_device_ex: fill the first `size` bytes.
int QueryPort(ibv_context* ctx, uint8_t port_num, ibv_port_attr* attr, size_t size);
int QueryDeviceEx(ibv_context* ctx, const ibv_query_device_ex_input* input,
                  ibv_device_attr_ex* attr, size_t size);
ibv_context* OpenContext(ibv_device* dev);  // errno set on failure
int CloseContext(ibv_context* ctx);
// Queues an asynchronous event on the context; its async_fd is readable while one waits.
void RaiseAsyncEvent(ibv_context* ctx, const ibv_async_event& e);

}  // namespace ibemu::verbs
