#include "fabricmgr/mad_port.h"

#include <endian.h>
#include <fcntl.h>
#include <infiniband/umad.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>

namespace ibemu::fabricmgr {
namespace {

using Clock = std::chrono::steady_clock;

// Bit m of the mask lets the agent receive unsolicited requests of method m (ib_umad).
void AllowMethod(long* mask, int m) {
  constexpr int kBits = 8 * sizeof(long);
  mask[m / kBits] |= 1L << (m % kBits);
}

struct UmadBuffer {
  std::vector<uint8_t> bytes = std::vector<uint8_t>(umad_size() + mad::kMadBytes, 0);
  void* umad() { return bytes.data(); }
  uint8_t* mad() { return static_cast<uint8_t*>(umad_get_mad(bytes.data())); }
  ib_user_mad_t* header() { return reinterpret_cast<ib_user_mad_t*>(bytes.data()); }
};

}  // namespace

std::vector<MadAgent> SmAgents() {
  // An SM answers Get and Set (SMInfo) and receives traps on both SMP classes, as OpenSM's
  // bindings do; everything else an SMA answers arrives only as responses to our requests.
  std::vector<uint8_t> m = {mad::method::kGet, mad::method::kSet, mad::method::kTrap};
  return {{mad::mgmt_class::kSubnDirected, 1, m}, {mad::mgmt_class::kSubnLid, 1, m}};
}

MadPort::MadPort(uint64_t port_guid, const std::vector<MadAgent>& agents) {
  if (umad_init() < 0) throw MadPortError("umad_init failed");
  const char* ca = nullptr;
  int portnum = 0;
  char names[UMAD_MAX_DEVICES][UMAD_CA_NAME_LEN];
  if (port_guid != 0) {
    int n = umad_get_cas_names(names, UMAD_MAX_DEVICES);
    for (int i = 0; i < n && !ca; ++i) {
      __be64 guids[UMAD_CA_MAX_PORTS + 1] = {};
      int m = umad_get_ca_portguids(names[i], guids, UMAD_CA_MAX_PORTS + 1);
      for (int p = 1; p < m; ++p)
        if (be64toh(guids[p]) == port_guid) {
          ca = names[i];
          portnum = p;
          break;
        }
    }
    if (!ca) {
      char hex[32];
      std::snprintf(hex, sizeof hex, "0x%016llx", static_cast<unsigned long long>(port_guid));
      throw MadPortError(std::string("no local port has GUID ") + hex);
    }
  }
  umad_port_t info;
  if (int r = umad_get_port(ca, portnum, &info); r < 0)
    throw MadPortError("umad_get_port: " + std::string(std::strerror(-r)) +
                       " (run under `ibemu exec --port <node>:<port>`)");
  ca_name_ = info.ca_name;
  port_num_ = info.portnum;
  port_guid_ = be64toh(info.port_guid);
  umad_release_port(&info);
  port_id_ = umad_open_port(ca_name_.c_str(), port_num_);
  if (port_id_ < 0)
    throw MadPortError("umad_open_port(" + ca_name_ + ", " + std::to_string(port_num_) +
                       "): " + std::strerror(-port_id_));
  for (const MadAgent& a : agents) {
    long mask[16 / sizeof(long)] = {};
    for (uint8_t m : a.methods) AllowMethod(mask, m);
    int id = umad_register(port_id_, a.mgmt_class, a.class_version, 0, mask);
    if (id < 0) {
      char cls[8];
      std::snprintf(cls, sizeof cls, "0x%02x", a.mgmt_class);
      throw MadPortError(std::string("umad_register of class ") + cls +
                         " failed (another manager on this port?)");
    }
    agents_[a.mgmt_class] = id;
  }
}

MadPort::~MadPort() {
  if (issm_fd_ >= 0) close(issm_fd_);
  for (auto [cls, id] : agents_) umad_unregister(port_id_, id);
  if (port_id_ >= 0) umad_close_port(port_id_);
  umad_done();
}

void MadPort::AssertIsSm() {
  char path[256];
  if (int r = umad_get_issm_path(ca_name_.c_str(), port_num_, path, sizeof path); r < 0)
    throw MadPortError("umad_get_issm_path: " + std::string(std::strerror(-r)));
  issm_fd_ = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (issm_fd_ < 0)
    throw MadPortError("cannot open " + std::string(path) + ": " + std::strerror(errno));
}

int MadPort::fd() const {
  return umad_get_fd(port_id_);
}

void MadPort::Send(const mad::MadBuffer& m, uint16_t dlid, int timeout_ms, int retries) {
  UmadBuffer b;
  std::memcpy(b.mad(), m.data(), m.size());
  bool smp = m[1] == mad::mgmt_class::kSubnDirected || m[1] == mad::mgmt_class::kSubnLid;
  umad_set_addr(b.umad(), dlid, smp ? 0 : 1, 0, smp ? 0 : mad::kQp1QKey);
  auto agent_it = agents_.find(m[1]);
  if (agent_it == agents_.end()) throw MadPortError("no agent registered for this MAD's class");
  int agent = agent_it->second;
  if (int r = umad_send(port_id_, agent, b.umad(), mad::kMadBytes, timeout_ms, retries); r < 0)
    throw MadPortError("umad_send: " + std::string(std::strerror(-r)));
}

bool MadPort::Receive(ReceivedMad* out, int timeout_ms) {
  UmadBuffer b;
  int len = mad::kMadBytes;
  int r = umad_recv(port_id_, b.umad(), &len, timeout_ms);
  if (r < 0) return false;
  std::memcpy(out->mad.data(), b.mad(), std::min<size_t>(mad::kMadBytes, std::max(len, 0)));
  const ib_mad_addr_t& a = b.header()->addr;
  out->slid = be16toh(a.lid);
  out->qpn = be32toh(a.qpn);
  out->sl = a.sl;
  out->status = static_cast<int>(b.header()->status);
  return true;
}

mad::MadBuffer BuildSmp(const Smp& s, uint64_t tid) {
  mad::MadBuffer m{};
  uint8_t* b = m.data();
  bool dr = s.lid == 0;
  mad::Set(b, mad::hdr::kBaseVersion, 1);
  mad::Set(b, mad::hdr::kMgmtClass,
           dr ? mad::mgmt_class::kSubnDirected : mad::mgmt_class::kSubnLid);
  mad::Set(b, mad::hdr::kClassVersion, 1);
  mad::Set(b, mad::hdr::kMethod, s.method);
  mad::Set(b, mad::hdr::kTid, tid);
  mad::Set(b, mad::hdr::kAttrId, s.attr);
  mad::Set(b, mad::hdr::kAttrMod, s.mod);
  if (dr) {
    mad::Set(b, mad::hdr::kDrHopCnt, s.path.size());
    mad::Set(b, mad::hdr::kDrSlid, mad::kPermissiveLid);
    mad::Set(b, mad::hdr::kDrDlid, mad::kPermissiveLid);
    auto path = mad::Bytes(b, mad::hdr::kDrInitialPath);
    for (size_t i = 0; i < s.path.size() && i + 1 < path.size(); ++i) path[i + 1] = s.path[i];
  }
  std::memcpy(b + mad::kSmpDataOffset, s.data.data(), s.data.size());
  return m;
}

std::vector<MadReply> MadClient::Transact(std::vector<MadRequest> requests) {
  std::vector<MadReply> replies(requests.size());
  std::map<uint32_t, size_t> pending;  // low 32 TID bits -> request index
  size_t next = 0;
  // The library reports every request it gives up on; this is only a guard against a lost one.
  const auto patience = std::chrono::milliseconds(timeout_ms * (retries + 1) + 2000);
  auto deadline = Clock::now() + patience;
  while (next < requests.size() || !pending.empty()) {
    while (next < requests.size() && static_cast<int>(pending.size()) < window) {
      uint32_t tid = next_tid_++;
      MadRequest& q = requests[next];
      mad::Set(q.mad.data(), mad::hdr::kTid, tid);
      port_.Send(q.mad, q.dlid, timeout_ms, retries);
      ++sent_;
      pending[tid] = next++;
      deadline = Clock::now() + patience;
    }
    ReceivedMad r;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    if (!port_.Receive(&r, static_cast<int>(std::min<int64_t>(left.count(), 100)))) continue;
    mad::MadView v{r.mad.data()};
    auto it = pending.find(static_cast<uint32_t>(v.tid()));
    bool reply = (v.is_response() || r.status != 0) && v.method() != mad::method::kTrapRepress &&
                 it != pending.end() && requests[it->second].mad[1] == v.mgmt_class();
    if (!reply) {
      if (r.status == 0 && !v.is_response()) unsolicited_(r);
      continue;
    }
    MadReply& out = replies[it->second];
    pending.erase(it);
    if (r.status != 0) continue;  // timed out: answered stays false
    out.answered = true;
    out.status =
        v.is_dr() ? static_cast<uint16_t>(mad::Get(r.mad.data(), mad::hdr::kDrStatus)) : v.status();
    out.mad = r.mad;
  }
  return replies;
}

std::vector<SmpReply> SmpClient::Transact(const std::vector<Smp>& smps) {
  std::vector<MadRequest> requests;
  requests.reserve(smps.size());
  for (const Smp& s : smps)
    requests.push_back({BuildSmp(s, 0), s.lid == 0 ? mad::kPermissiveLid : s.lid});
  std::vector<MadReply> r = MadClient::Transact(std::move(requests));
  std::vector<SmpReply> out(r.size());
  for (size_t i = 0; i < r.size(); ++i) {
    out[i].answered = r[i].answered;
    out[i].status = r[i].status;
    std::memcpy(out[i].data.data(), r[i].mad.data() + mad::kSmpDataOffset, out[i].data.size());
  }
  return out;
}

void MadClient::Poll(int timeout_ms) {
  ReceivedMad r;
  int wait = timeout_ms;
  while (port_.Receive(&r, wait)) {
    mad::MadView v{r.mad.data()};
    if (r.status == 0 && !v.is_response()) unsolicited_(r);
    wait = 0;
  }
}

}  // namespace ibemu::fabricmgr
