// A frame's address as umad.proto's Address and back, for the ends that still meet protobuf: a
// program that sends Send messages, and a library's listener that takes Receive messages.
#pragma once
#include <algorithm>
#include <cstring>

#include "common/transport/mad_frame.h"
#include "umad.pb.h"

namespace ibemu::transport {

inline void ToProto(const MadFrameAddress& f, umad::Address* a) {
  a->set_qpn(f.qpn);
  a->set_qkey(f.qkey);
  a->set_lid(f.lid);
  a->set_sl(f.sl);
  a->set_path_bits(f.path_bits);
  a->set_pkey_index(f.pkey_index);
  a->set_grh_present(f.grh_present != 0);
  if (f.grh_present) {
    a->set_gid(f.gid, sizeof f.gid);
    a->set_hop_limit(f.hop_limit);
    a->set_traffic_class(f.traffic_class);
    a->set_flow_label(f.flow_label);
  } else {  // a reused message keeps nothing of an earlier address's GRH
    a->clear_gid();
    a->clear_hop_limit();
    a->clear_traffic_class();
    a->clear_flow_label();
  }
}

inline MadFrameAddress FromProto(const umad::Address& a) {
  MadFrameAddress f;
  f.qpn = a.qpn();
  f.qkey = a.qkey();
  f.lid = static_cast<uint16_t>(a.lid());
  f.sl = static_cast<uint8_t>(a.sl());
  f.path_bits = static_cast<uint8_t>(a.path_bits());
  f.pkey_index = static_cast<uint16_t>(a.pkey_index());
  f.grh_present = a.grh_present() ? 1 : 0;
  if (a.grh_present()) {
    std::memcpy(f.gid, a.gid().data(), std::min(a.gid().size(), sizeof f.gid));
    f.hop_limit = static_cast<uint8_t>(a.hop_limit());
    f.traffic_class = static_cast<uint8_t>(a.traffic_class());
    f.flow_label = a.flow_label();
  }
  return f;
}

}  // namespace ibemu::transport
