#include "hostlib/verbs/device.h"

#include <endian.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include "hostlib/verbs/attributes.h"
#include "hostlib/verbs/hca.h"
#include "hostlib/verbs/resources.h"
#include "hostlib/verbs/sysfs.h"
#include "hostlib/verbs/sysfs_tree.h"

namespace ibemu::verbs {
namespace {

void Copy(char* dst, size_t size, const std::string& src) {
  std::snprintf(dst, size, "%s", src.c_str());
}

// The data path of an HCA that has no queue pairs yet: every op is there (the inline verbs call
// them without checking) and refuses, as a provider without the feature does.
ibv_mw* AllocMwUnsupported(ibv_pd*, ibv_mw_type) {
  errno = EOPNOTSUPP;
  return nullptr;
}
int BindMwUnsupported(ibv_qp*, ibv_mw*, ibv_mw_bind*) {
  return EOPNOTSUPP;
}
int DeallocMwUnsupported(ibv_mw*) {
  return EOPNOTSUPP;
}

}  // namespace

int QueryPort(ibv_context*, uint8_t port_num, ibv_port_attr* attr, size_t size) {
  auto ca = DescribeHca();
  if (!ca) return ENODEV;
  const umad::PortAttributes* p = FindPort(*ca, port_num);
  if (!p) return EINVAL;
  FillPortAttr(*p, attr, size);
  return 0;
}

int QueryDeviceEx(ibv_context*, const ibv_query_device_ex_input* input, ibv_device_attr_ex* attr,
                  size_t size) {
  if (input && input->comp_mask) return EINVAL;
  if (size < sizeof(ibv_device_attr)) return EINVAL;
  auto ca = DescribeHca();
  if (!ca) return ENODEV;
  FillDeviceAttrEx(*ca, attr, size);
  return 0;
}

Device& TheDevice() {
  static Device* d = [] {
    auto* dev = new Device();
    std::memset(&dev->dev, 0, sizeof dev->dev);
    dev->dev.node_type = IBV_NODE_CA;
    dev->dev.transport_type = IBV_TRANSPORT_IB;
    return dev;
  }();
  return *d;
}

Device* ToDevice(ibv_device* dev) {
  return dev == &TheDevice().dev ? &TheDevice() : nullptr;
}

std::optional<umad::CaAttributes> DescribeHca() {
  auto ca = Hca::Get().Describe();
  if (ca) AdoptDescription(*ca);
  return ca;
}

void AdoptDescription(const umad::CaAttributes& ca) {
  {
    Device& d = TheDevice();
    std::lock_guard lock(d.mu);
    d.ca = ca;
    Copy(d.dev.name, sizeof d.dev.name, ca.ca_name());
    Copy(d.dev.dev_name, sizeof d.dev.dev_name, kUverbsName);
    Copy(d.dev.dev_path, sizeof d.dev.dev_path, UverbsPath(kUverbsName));
    Copy(d.dev.ibdev_path, sizeof d.dev.ibdev_path, IbdevPath(ca.ca_name()));
  }
  // Outside d.mu: the tree has its own lock, and its writes should not hold up readers of d.ca.
  SysfsTree::Get().Write(ca);
}

Context* ToContext(ibv_context* ctx) {
  return reinterpret_cast<Context*>(reinterpret_cast<char*>(ctx) - offsetof(Context, vctx.context));
}

ibv_context* OpenContext(ibv_device* dev) {
  if (!ToDevice(dev)) {
    errno = ENODEV;
    return nullptr;
  }
  auto* c = Allocate<Context>();
  if (!c) return nullptr;
  std::memset(&c->vctx, 0, sizeof c->vctx);
  verbs_context& v = c->vctx;
  v.sz = sizeof v;
  v.query_port = QueryPort;
  v.query_device_ex = QueryDeviceEx;
  v.create_qp_ex = CreateQpEx;
  v.create_cq_ex = CreateCqEx;
  v.query_rt_values = QueryRtValues;
  ibv_context& ctx = v.context;
  ctx.device = dev;
  ctx.abi_compat = __VERBS_ABI_IS_EXTENDED;
  ctx.cmd_fd = -1;  // there is no uverbs file; nothing reads it
  // Semaphore mode: each read takes one event, as each read of the uverbs async file does.
  ctx.async_fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
  ctx.num_comp_vectors = 1;
  pthread_mutex_init(&ctx.mutex, nullptr);
  ctx.ops.poll_cq = PollCq;
  ctx.ops.req_notify_cq = ReqNotifyCq;
  ctx.ops.post_srq_recv = SrqPostRecv;
  ctx.ops.post_send = QpPostSend;
  ctx.ops.post_recv = QpPostRecv;
  ctx.ops.alloc_mw = AllocMwUnsupported;
  ctx.ops.bind_mw = BindMwUnsupported;
  ctx.ops.dealloc_mw = DeallocMwUnsupported;
  if (ctx.async_fd < 0) {
    int e = errno;
    delete c;
    errno = e;
    return nullptr;
  }
  return &ctx;
}

void RaiseAsyncEvent(ibv_context* ctx, const ibv_async_event& e) {
  Context* c = ToContext(ctx);
  {
    std::lock_guard lock(c->events_mu);
    c->events.push_back(e);
  }
  uint64_t one = 1;
  if (write(ctx->async_fd, &one, sizeof one) != sizeof one) {
    // Only a counter overflow fails: 2^64 events unread.
  }
}

int CloseContext(ibv_context* ctx) {
  Context* c = ToContext(ctx);
  close(ctx->async_fd);
  pthread_mutex_destroy(&ctx->mutex);
  delete c;
  return 0;
}

}  // namespace ibemu::verbs
