// Protection domains (the library numbers them; the HCA compares them) and memory regions
// (registered with the HCA, which gives the keys and checks every access against them).
#include <cerrno>
#include <new>

#include "hostlib/verbs/device.h"
#include "hostlib/verbs/hca.h"
#include "hostlib/verbs/resources.h"

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

#define IBEMU_EXPORT extern "C" __attribute__((visibility("default")))

namespace ibemu::verbs {

Pd* ToPd(ibv_pd* pd) {
  return reinterpret_cast<Pd*>(pd);
}

namespace {

std::atomic<uint32_t> g_next_pd{1};

// The access flags an MR may have (the others are for memory windows, ODP, DMA-buf).
constexpr int kMrAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                          IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
                          IBV_ACCESS_RELAXED_ORDERING;

ibv_mr* Register(ibv_pd* pd, void* addr, size_t length, uint64_t iova, int access) {
  // Remote write and atomic need local write (IBA 10.6.3.1; the kernel refuses the rest).
  if ((access & ~kMrAccess) || ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
                                !(access & IBV_ACCESS_LOCAL_WRITE))) {
    errno = EINVAL;
    return nullptr;
  }
  if (iova != reinterpret_cast<uintptr_t>(addr)) {
    errno = EOPNOTSUPP;  // an IOVA other than the address is not modelled
    return nullptr;
  }
  umad::VerbsRequest req;
  umad::RegMr* r = req.mutable_reg_mr();
  r->set_pd(pd->handle);
  r->set_addr(reinterpret_cast<uintptr_t>(addr));
  r->set_length(length);
  r->set_access(static_cast<uint32_t>(access));
  umad::VerbsReply rep = Hca::Get().Request(req);
  if (rep.status()) {
    errno = rep.status();
    return nullptr;
  }
  auto* m = Allocate<Mr>();
  if (!m) return nullptr;
  m->mr.context = pd->context;
  m->mr.pd = pd;
  m->mr.addr = addr;
  m->mr.length = length;
  m->mr.handle = rep.lkey();
  m->mr.lkey = rep.lkey();
  m->mr.rkey = rep.rkey();
  return &m->mr;
}

}  // namespace
}  // namespace ibemu::verbs

using namespace ibemu::verbs;

IBEMU_EXPORT ibv_pd* ibv_alloc_pd(ibv_context* context) {
  auto* p = Allocate<Pd>();
  if (!p) return nullptr;
  p->pd.context = context;
  p->pd.handle = g_next_pd++;
  return &p->pd;
}

IBEMU_EXPORT int ibv_dealloc_pd(ibv_pd* pd) {
  delete ToPd(pd);
  return 0;
}

IBEMU_EXPORT ibv_mr* ibv_reg_mr(ibv_pd* pd, void* addr, size_t length, int access) {
  return Register(pd, addr, length, reinterpret_cast<uintptr_t>(addr), access);
}

IBEMU_EXPORT ibv_mr* ibv_reg_mr_iova(ibv_pd* pd, void* addr, size_t length, uint64_t iova,
                                     int access) {
  return Register(pd, addr, length, iova, access);
}

IBEMU_EXPORT ibv_mr* ibv_reg_mr_iova2(ibv_pd* pd, void* addr, size_t length, uint64_t iova,
                                      unsigned int access) {
  return Register(pd, addr, length, iova, static_cast<int>(access));
}

IBEMU_EXPORT int ibv_dereg_mr(ibv_mr* mr) {
  ibemu::umad::VerbsRequest req;
  req.mutable_dereg_mr()->set_lkey(mr->lkey);
  ibemu::umad::VerbsReply rep = Hca::Get().Request(req);
  if (rep.status() && rep.status() != ENODEV) return rep.status();
  delete reinterpret_cast<Mr*>(mr);
  return 0;
}
