// The verbs the emulated HCA does not support (multicast attach, re-registration, imports, ECE,
// dma-buf regions): each fails the way rdma-core 44 reports a verb the device does not support,
// a NULL with errno EOPNOTSUPP or the EOPNOTSUPP return, so a program says "not supported"
// instead of crashing (hostlib/verbs/README.md, "Not built yet").
#include <infiniband/verbs.h>

#include <cerrno>

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

#define IBEMU_EXPORT extern "C" __attribute__((visibility("default")))

#pragma GCC diagnostic ignored "-Wunused-parameter"

IBEMU_EXPORT int ibv_attach_mcast(struct ibv_qp* qp, const union ibv_gid* gid, uint16_t lid) {
  return EOPNOTSUPP;
}

IBEMU_EXPORT int ibv_detach_mcast(struct ibv_qp* qp, const union ibv_gid* gid, uint16_t lid) {
  return EOPNOTSUPP;
}

IBEMU_EXPORT int ibv_rereg_mr(struct ibv_mr* mr, int flags, struct ibv_pd* pd, void* addr,
                              size_t length, int access) {
  return EOPNOTSUPP;
}

IBEMU_EXPORT int ibv_resolve_eth_l2_from_gid(struct ibv_context* context, struct ibv_ah_attr* attr,
                                             uint8_t eth_mac[ETHERNET_LL_SIZE], uint16_t* vid) {
  return EOPNOTSUPP;
}

IBEMU_EXPORT struct ibv_context* ibv_import_device(int cmd_fd) {
  errno = EOPNOTSUPP;
  return nullptr;
}

IBEMU_EXPORT struct ibv_mr* ibv_import_mr(struct ibv_pd* pd, uint32_t mr_handle) {
  errno = EOPNOTSUPP;
  return nullptr;
}

IBEMU_EXPORT struct ibv_pd* ibv_import_pd(struct ibv_context* context, uint32_t pd_handle) {
  errno = EOPNOTSUPP;
  return nullptr;
}

IBEMU_EXPORT int ibv_query_ece(struct ibv_qp* qp, struct ibv_ece* ece) {
  return EOPNOTSUPP;
}

IBEMU_EXPORT int ibv_set_ece(struct ibv_qp* qp, struct ibv_ece* ece) {
  return EOPNOTSUPP;
}

IBEMU_EXPORT void ibv_unimport_mr(struct ibv_mr* mr) {
  // nothing was created, so there is nothing to release
}

IBEMU_EXPORT void ibv_unimport_pd(struct ibv_pd* pd) {
  // nothing was created, so there is nothing to release
}

IBEMU_EXPORT struct ibv_mr* ibv_reg_dmabuf_mr(struct ibv_pd* pd, uint64_t offset, size_t length,
                                              uint64_t iova, int fd, int access) {
  errno = EOPNOTSUPP;
  return nullptr;
}

IBEMU_EXPORT struct ibv_dm* ibv_import_dm(struct ibv_context* context, uint32_t dm_handle) {
  errno = EOPNOTSUPP;
  return nullptr;
}

IBEMU_EXPORT void ibv_unimport_dm(struct ibv_dm* dm) {
  // nothing was created, so there is nothing to release
}

IBEMU_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp* qp, enum ibv_wr_opcode op,
                                            uint32_t flags) {
  return 0;  // no operation is guaranteed to land in order yet
}

// Nothing is pinned for the emulated HCA (it reads program memory through the library, not
// by DMA), so there is no range to protect from fork: success, as with fork support unneeded.
IBEMU_EXPORT int ibv_dontfork_range(void* base, size_t size) {
  return 0;
}
IBEMU_EXPORT int ibv_dofork_range(void* base, size_t size) {
  return 0;
}
