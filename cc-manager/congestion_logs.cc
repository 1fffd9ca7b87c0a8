// Reading the CCAs' CongestionLogs: events, and marking rates per switch output port.
#include "cc-manager/cc_manager.h"
#include "common/mad/smp_attributes.h"

namespace ibemu::ccmgr {

void CcManager::PollLogs() {
  std::vector<MadRequest> q;
  std::vector<Cca*> who;
  for (auto& [key, c] : ccas_) {
    // Only what took the manager's key: a CCA that refuses it would count every poll as a
    // violation and trap it; the sweeps try those again.
    if (c.state != CcaState::kVerified) continue;
    q.push_back(Cc(c, method::kGet, attr::kCongestionLog, 0));
    who.push_back(&c);
  }
  std::vector<MadReply> r = Run(q);
  for (size_t i = 0; i < r.size(); ++i) {
    if (!r[i].ok()) continue;
    Cca& c = *who[i];
    CongestionLogRead log = DecodeCongestionLog(r[i].mad);
    // The counter runs on while the log keeps only the newest entries: the difference is how
    // many events there were; the entries are a sample of them.
    size_t n = log.entries.size();
    uint32_t counted = c.have_log ? static_cast<uint16_t>(log.counter - c.log_counter) : n;
    // The CCA's clock is 32 bits of 1.024 us (4398 s): extended here by each poll's difference,
    // and each entry placed back from the poll's time, so times keep rising past the wrap.
    uint64_t first_ticks = n ? static_cast<uint32_t>(log.now - log.entries.back().timestamp) : 0;
    uint64_t before =
        c.have_log ? c.log_ticks : (log.now > first_ticks ? log.now - first_ticks : 0);
    c.log_ticks = c.have_log ? c.log_ticks + static_cast<uint32_t>(log.now - c.log_now) : log.now;
    double t0 = static_cast<double>(before) * kCcTickSeconds;
    double t1 = static_cast<double>(c.log_ticks) * kCcTickSeconds;
    c.have_log = true;
    c.log_counter = log.counter;
    c.log_now = log.now;
    c.events += counted;
    std::map<int, double> per_port;
    for (auto e = log.entries.rbegin(); e != log.entries.rend(); ++e) {  // oldest first
      Event ev;
      uint32_t ago = static_cast<uint32_t>(log.now - e->timestamp);
      ev.set_time_s(static_cast<double>(c.log_ticks >= ago ? c.log_ticks - ago : 0) *
                    kCcTickSeconds);
      ev.set_node(c.name);
      ev.set_sl(e->sl);
      if (c.is_switch) {
        int port = PortOf(c, e->dlid);
        ev.set_port(port);
        ev.set_kind("mark");
        ev.set_slid(e->slid);
        ev.set_dlid(e->dlid);
        per_port[port] += 1;
      } else {
        ev.set_port(c.port);
        ev.set_kind("threshold");
        ev.set_slid(e->remote_lid);
        ev.set_local_qp(e->local_qp);
        ev.set_remote_qp(e->remote_qp);
      }
      record_.Add(std::move(ev));
    }
    if (!c.is_switch) continue;
    double scale = n > 0 ? static_cast<double>(counted) / n : 0;
    for (auto& [port, k] : per_port) c.marking_ports.insert(port);
    for (int port : c.marking_ports)
      record_.AddMarking(c.name, port, t0, t1, per_port[port] * scale);
  }
}

int CcManager::PortOf(const Cca& sw, uint16_t dlid) {
  int block = dlid / 64;
  auto& blocks = lft_[sw.guid];
  auto it = blocks.find(block);
  if (it == blocks.end()) {
    fabricmgr::Smp s;
    s.lid = sw.lid;
    s.attr = attr::kLinearForwardingTable;
    s.mod = static_cast<uint32_t>(block);
    fabricmgr::SmpReply r = client_.Transact(s);
    if (!r.ok()) return -1;
    std::array<uint8_t, 64> ports{};
    std::copy(r.data.begin(), r.data.end(), ports.begin());
    it = blocks.emplace(block, ports).first;
  }
  uint8_t p = it->second[dlid % 64];
  return p == 0xFF ? -1 : p;
}

}  // namespace ibemu::ccmgr
