#include "hostlib/verbs/attributes.h"

#include <endian.h>

#include <algorithm>
#include <cstring>

namespace ibemu::verbs {
namespace {

// The emulated HCA's limits: those of a ConnectX-5 (mlx5) where a program may size itself by
// them, smaller where ours are (docs/verbs.md). Capability flags claim only what the emulated
// HCA does.
constexpr uint64_t kMaxMrSize = ~uint64_t{0};
constexpr uint64_t kPageSizeCap = ~uint64_t{0xFFF};  // 4 KiB and up
constexpr int kMaxQp = 262144;
constexpr int kMaxQpWr = 32768;
constexpr int kMaxSge = 30;
constexpr int kMaxCq = 16777216;
constexpr int kMaxCqe = 4194303;
constexpr int kMaxMr = 16777216;
constexpr int kMaxPd = 16777216;
constexpr int kMaxQpRdAtom = 16;
constexpr int kMaxResRdAtom = kMaxQp * kMaxQpRdAtom;
constexpr int kMaxSrq = 8388608;
constexpr int kMaxAh = 0x7FFFFFFF;
constexpr int kMaxMcastGrp = 2097152;
constexpr int kMaxMcastQpAttach = 240;
constexpr uint8_t kLocalCaAckDelay = 16;  // 4.096 us * 2^16, as the HCA reports
constexpr uint32_t kMaxMsgSize = 1u << 30;
constexpr unsigned kDeviceCapFlags = IBV_DEVICE_BAD_PKEY_CNTR | IBV_DEVICE_BAD_QKEY_CNTR |
                                     IBV_DEVICE_CHANGE_PHY_PORT | IBV_DEVICE_SYS_IMAGE_GUID |
                                     IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_SRQ_RESIZE |
                                     IBV_DEVICE_N_NOTIFY_CQ;

// PortInfo:LinkSpeedActive and LinkSpeedExtActive as enum ibv's active_speed: 1 SDR, 2 DDR,
// 4 QDR, 16 FDR, 32 EDR, 64 HDR (the extended speeds win when set, as the kernel reports).
uint8_t ActiveSpeed(const umad::PortAttributes& p) {
  uint32_t ext = p.link_speed_ext_active();
  if (ext & 1) return 16;
  if (ext & 2) return 32;
  if (ext & 4) return 64;
  return static_cast<uint8_t>(p.link_speed_active());
}

}  // namespace

void FillDeviceAttr(const umad::CaAttributes& ca, ibv_device_attr* a) {
  std::memset(a, 0, sizeof *a);
  std::strncpy(a->fw_ver, ca.fw_ver().c_str(), sizeof a->fw_ver - 1);
  a->node_guid = htobe64(ca.node_guid());
  a->sys_image_guid = htobe64(ca.system_guid());
  a->max_mr_size = kMaxMrSize;
  a->page_size_cap = kPageSizeCap;
  a->vendor_id = ca.vendor_id();
  a->vendor_part_id = ca.device_id();
  a->hw_ver = ca.revision();
  a->max_qp = kMaxQp;
  a->max_qp_wr = kMaxQpWr;
  a->device_cap_flags = kDeviceCapFlags;
  a->max_sge = kMaxSge;
  a->max_sge_rd = kMaxSge;
  a->max_cq = kMaxCq;
  a->max_cqe = kMaxCqe;
  a->max_mr = kMaxMr;
  a->max_pd = kMaxPd;
  a->max_qp_rd_atom = kMaxQpRdAtom;
  a->max_res_rd_atom = kMaxResRdAtom;
  a->max_qp_init_rd_atom = kMaxQpRdAtom;
  a->atomic_cap = IBV_ATOMIC_HCA;
  a->max_mcast_grp = kMaxMcastGrp;
  a->max_mcast_qp_attach = kMaxMcastQpAttach;
  a->max_total_mcast_qp_attach = kMaxMcastGrp * kMaxMcastQpAttach;
  a->max_ah = kMaxAh;
  a->max_srq = kMaxSrq;
  a->max_srq_wr = static_cast<int>(kMaxSrqWr);
  a->max_srq_sge = static_cast<int>(kMaxSrqSge);
  int pkeys = 0;
  for (const auto& p : ca.ports()) pkeys = std::max(pkeys, p.pkeys_size());
  a->max_pkeys = static_cast<uint16_t>(pkeys);
  a->local_ca_ack_delay = kLocalCaAckDelay;
  a->phys_port_cnt = static_cast<uint8_t>(ca.num_ports());
}

void FillDeviceAttrEx(const umad::CaAttributes& ca, ibv_device_attr_ex* attr, size_t size) {
  ibv_device_attr_ex a;
  std::memset(&a, 0, sizeof a);
  FillDeviceAttr(ca, &a.orig_attr);
  a.device_cap_flags_ex = kDeviceCapFlags;
  // Completion timestamps are the HCA's clock: virtual time in ns, a 1 GHz clock.
  a.completion_timestamp_mask = ~uint64_t{0};
  a.hca_core_clock = 1000000;  // kHz
  a.phys_port_cnt_ex = ca.num_ports();
  size = std::min(size, sizeof a);
  std::memcpy(attr, &a, size);
}

void FillPortAttr(const umad::PortAttributes& p, ibv_port_attr* attr, size_t size) {
  ibv_port_attr a;
  std::memset(&a, 0, sizeof a);
  a.state = static_cast<ibv_port_state>(p.state());
  a.max_mtu = static_cast<ibv_mtu>(p.mtu_cap());
  a.active_mtu = static_cast<ibv_mtu>(p.neighbor_mtu());
  a.gid_tbl_len = GidTableLength(p);
  a.port_cap_flags = p.capmask();
  a.max_msg_sz = kMaxMsgSize;
  a.bad_pkey_cntr = p.p_key_violations();
  a.qkey_viol_cntr = p.q_key_violations();
  a.pkey_tbl_len = static_cast<uint16_t>(p.pkeys_size());
  a.lid = static_cast<uint16_t>(p.lid());
  a.sm_lid = static_cast<uint16_t>(p.sm_lid());
  a.lmc = static_cast<uint8_t>(p.lmc());
  a.max_vl_num = static_cast<uint8_t>(p.vl_cap());
  a.sm_sl = static_cast<uint8_t>(p.sm_sl());
  a.subnet_timeout = static_cast<uint8_t>(p.subnet_timeout());
  a.active_width = static_cast<uint8_t>(p.link_width_active());
  a.active_speed = ActiveSpeed(p);
  a.phys_state = static_cast<uint8_t>(p.phys_state());
  a.link_layer = IBV_LINK_LAYER_INFINIBAND;
  a.port_cap_flags2 = static_cast<uint16_t>(p.capmask2());
  size = std::min(size, sizeof a);
  std::memcpy(attr, &a, size);
}

int GidTableLength(const umad::PortAttributes& p) {
  return std::max(1u, p.guid_cap());
}

bool PortGid(const umad::PortAttributes& p, int index, ibv_gid* gid) {
  if (index < 0 || index >= GidTableLength(p)) return false;
  std::memset(gid, 0, sizeof *gid);
  if (index == 0) {
    gid->global.subnet_prefix = htobe64(p.gid_prefix());
    gid->global.interface_id = htobe64(p.port_guid());
  }
  return true;
}

}  // namespace ibemu::verbs
