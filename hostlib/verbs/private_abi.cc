// IBVERBS_PRIVATE_34: the interface between libibverbs and its providers (libmlx5, libefa, ...).
// Programs never call it, but perftest and librdmacm load providers, whose symbol references
// must resolve against this library or the program does not start. No provider ever drives the
// emulated HCA: verbs_register_driver_34, which each provider calls when it is loaded, keeps
// nothing, and the commands they would send the kernel fail with EOPNOTSUPP. The declarations
// are rdma-core's driver.h, which Debian does not install; callers pass arguments that these
// definitions ignore, which the x86-64 calling convention allows.
#include <cerrno>

#define IBEMU_EXPORT extern "C" __attribute__((visibility("default")))

// Providers read it to decide whether destroying objects of a disassociated device may succeed.
IBEMU_EXPORT bool verbs_allow_disassociate_destroy = false;

IBEMU_EXPORT void verbs_register_driver_34() {}
IBEMU_EXPORT void verbs_set_ops() {}
IBEMU_EXPORT void verbs_init_cq() {}
IBEMU_EXPORT void verbs_uninit_context() {}
IBEMU_EXPORT void __verbs_log() {}

IBEMU_EXPORT void* verbs_open_device() {
  errno = EOPNOTSUPP;
  return nullptr;
}

IBEMU_EXPORT void* _verbs_init_and_alloc_context() {
  errno = EOPNOTSUPP;
  return nullptr;
}

IBEMU_EXPORT unsigned __ioctl_final_num_attrs() {
  return 0;
}
IBEMU_EXPORT int execute_ioctl() {
  return EOPNOTSUPP;
}

IBEMU_EXPORT int ibv_read_ibdev_sysfs_file() {
  errno = EOPNOTSUPP;
  return -1;
}

// The kernel structure converters (ibv_copy_*_kern) are in kern_marshall.cc.

// The uverbs commands.
#define IBEMU_NO_COMMAND(name) \
  IBEMU_EXPORT int name() {    \
    return EOPNOTSUPP;         \
  }

IBEMU_NO_COMMAND(ibv_cmd_advise_mr)
IBEMU_NO_COMMAND(ibv_cmd_alloc_dm)
IBEMU_NO_COMMAND(ibv_cmd_alloc_mw)
IBEMU_NO_COMMAND(ibv_cmd_alloc_pd)
IBEMU_NO_COMMAND(ibv_cmd_attach_mcast)
IBEMU_NO_COMMAND(ibv_cmd_close_xrcd)
IBEMU_NO_COMMAND(ibv_cmd_create_ah)
IBEMU_NO_COMMAND(ibv_cmd_create_counters)
IBEMU_NO_COMMAND(ibv_cmd_create_cq)
IBEMU_NO_COMMAND(ibv_cmd_create_cq_ex)
IBEMU_NO_COMMAND(ibv_cmd_create_flow)
IBEMU_NO_COMMAND(ibv_cmd_create_flow_action_esp)
IBEMU_NO_COMMAND(ibv_cmd_create_qp)
IBEMU_NO_COMMAND(ibv_cmd_create_qp_ex)
IBEMU_NO_COMMAND(ibv_cmd_create_qp_ex2)
IBEMU_NO_COMMAND(ibv_cmd_create_rwq_ind_table)
IBEMU_NO_COMMAND(ibv_cmd_create_srq)
IBEMU_NO_COMMAND(ibv_cmd_create_srq_ex)
IBEMU_NO_COMMAND(ibv_cmd_create_wq)
IBEMU_NO_COMMAND(ibv_cmd_dealloc_mw)
IBEMU_NO_COMMAND(ibv_cmd_dealloc_pd)
IBEMU_NO_COMMAND(ibv_cmd_dereg_mr)
IBEMU_NO_COMMAND(ibv_cmd_destroy_ah)
IBEMU_NO_COMMAND(ibv_cmd_destroy_counters)
IBEMU_NO_COMMAND(ibv_cmd_destroy_cq)
IBEMU_NO_COMMAND(ibv_cmd_destroy_flow)
IBEMU_NO_COMMAND(ibv_cmd_destroy_flow_action)
IBEMU_NO_COMMAND(ibv_cmd_destroy_qp)
IBEMU_NO_COMMAND(ibv_cmd_destroy_rwq_ind_table)
IBEMU_NO_COMMAND(ibv_cmd_destroy_srq)
IBEMU_NO_COMMAND(ibv_cmd_destroy_wq)
IBEMU_NO_COMMAND(ibv_cmd_detach_mcast)
IBEMU_NO_COMMAND(ibv_cmd_free_dm)
IBEMU_NO_COMMAND(ibv_cmd_get_context)
IBEMU_NO_COMMAND(ibv_cmd_modify_cq)
IBEMU_NO_COMMAND(ibv_cmd_modify_flow_action_esp)
IBEMU_NO_COMMAND(ibv_cmd_modify_qp)
IBEMU_NO_COMMAND(ibv_cmd_modify_qp_ex)
IBEMU_NO_COMMAND(ibv_cmd_modify_srq)
IBEMU_NO_COMMAND(ibv_cmd_modify_wq)
IBEMU_NO_COMMAND(ibv_cmd_open_qp)
IBEMU_NO_COMMAND(ibv_cmd_open_xrcd)
IBEMU_NO_COMMAND(ibv_cmd_poll_cq)
IBEMU_NO_COMMAND(ibv_cmd_post_recv)
IBEMU_NO_COMMAND(ibv_cmd_post_send)
IBEMU_NO_COMMAND(ibv_cmd_post_srq_recv)
IBEMU_NO_COMMAND(ibv_cmd_query_context)
IBEMU_NO_COMMAND(ibv_cmd_query_device_any)
IBEMU_NO_COMMAND(ibv_cmd_query_mr)
IBEMU_NO_COMMAND(ibv_cmd_query_port)
IBEMU_NO_COMMAND(ibv_cmd_query_qp)
IBEMU_NO_COMMAND(ibv_cmd_query_srq)
IBEMU_NO_COMMAND(ibv_cmd_read_counters)
IBEMU_NO_COMMAND(ibv_cmd_reg_dm_mr)
IBEMU_NO_COMMAND(ibv_cmd_reg_dmabuf_mr)
IBEMU_NO_COMMAND(ibv_cmd_reg_mr)
IBEMU_NO_COMMAND(ibv_cmd_req_notify_cq)
IBEMU_NO_COMMAND(ibv_cmd_rereg_mr)
IBEMU_NO_COMMAND(ibv_cmd_resize_cq)
