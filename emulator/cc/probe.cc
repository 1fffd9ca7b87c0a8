// The `probe` mechanism: uses every hook without touching a packet's header, so that tests can
// hold the hook layer to the engine's promises (a partitioned run is the same run) in real
// fabrics. It adds one queue per input VL for odd DLIDs and serves an input's queues in turn (H5,
// H6), sends a control message upstream for every packet queued (H5), and runs a side band (H7):
// every period each device reports what it counted, and the side band broadcasts the sum.
#include <memory>

#include "emulator/cc/mechanism.h"

namespace ibemu::cc {
namespace {

struct ProbeOptions {
  SimTime period = 0, latency = 0;
};

class ProbeSwitch : public SwitchCc {
 public:
  explicit ProbeSwitch(const ProbeOptions& o) : o_(o) {}
  // The extra queue is the last one.
  int NumQueues(int base) const override {
    extra_ = base;
    return base + 1;
  }
  int Queue(SwitchView& s, int in, int in_vl, int out, int out_vl, const Packet& p,
            int chosen) override {
    return (const_cast<Packet&>(p).lrh().dlid() & 1) ? extra_ : chosen;
  }
  void OnEnqueue(SwitchView& s, int in, int in_vl, int out, int out_vl, Packet& p) override {
    if (!started_) Start(s);
    if (in != 0) s.SendControl(in, 1, p.blocks());
  }
  void OnDequeue(SwitchView& s, int in, int in_vl, int out, int out_vl, const Packet& p) override {
    ++dequeued_;
  }
  // H2's credit return: every fourth packet read holds its input credits back one packet time.
  SimTime CreditReturnDelay(SwitchView& s, int in, int in_vl, int out, int out_vl,
                            const Packet& p) override {
    return dequeued_ % 4 == 0 ? s.SerializationTime(in, p.wire_bytes()) : 0;
  }
  void OnControl(SwitchView& s, int port, uint32_t a, uint64_t b) override { control_ += b; }
  void OnTimer(SwitchView& s, uint32_t a, uint64_t b) override {
    uint64_t queued = 0;
    for (int out = 1; out <= s.NumPorts(); ++out)
      for (int vl = 0; vl < s.DataVls(); ++vl) queued += s.QueuedBlocks(out, vl);
    s.Report(0, queued + control_ + signal_);
    s.PostTimer(s.Now() + o_.period, 0, 0);
  }
  void OnSignal(SwitchView& s, uint32_t a, uint64_t b) override { signal_ = b % 1000; }
  bool ArbitratesQueues() const override { return true; }
  int PickQueue(const SwitchView& s, int in, int out, int vl, const int* queues,
                int n) const override {
    return static_cast<int>(dequeued_ % static_cast<uint64_t>(n));
  }

 private:
  void Start(SwitchView& s) {
    started_ = true;
    s.PostTimer(s.Now() + o_.period, 0, 0);
  }

  ProbeOptions o_;
  bool started_ = false;
  mutable int extra_ = 0;
  uint64_t dequeued_ = 0, control_ = 0, signal_ = 0;
};

class ProbeHca : public HcaCc {
 public:
  explicit ProbeHca(const ProbeOptions& o) : o_(o) {}
  void OnSent(HcaView& h, uint32_t qp, const Packet& p) override {
    sent_ += p.payload_len;
    if (!started_) {
      started_ = true;
      h.PostTimer(h.Now() + o_.period, 0, 0);
    }
  }
  void OnTimer(HcaView& h, uint32_t a, uint64_t b) override {
    h.Report(1, sent_ + control_ + signal_);
    h.PostTimer(h.Now() + o_.period, 0, 0);
  }
  void OnControl(HcaView& h, int port, uint32_t a, uint64_t b) override { control_ += b; }
  void OnSignal(HcaView& h, uint32_t a, uint64_t b) override { signal_ = b % 1000; }

 private:
  ProbeOptions o_;
  bool started_ = false;
  uint64_t sent_ = 0, control_ = 0, signal_ = 0;
};

class ProbeSideBand : public SideBandCc {
 public:
  explicit ProbeSideBand(const ProbeOptions& o) : o_(o) {}
  void Start(SideBandView& v) override { v.PostTimer(o_.period, 0, 0); }
  void OnReport(SideBandView& v, engine::LpId from, uint32_t a, uint64_t b) override {
    sum_ += b * (from + 1);
  }
  void OnTimer(SideBandView& v, uint32_t a, uint64_t b) override {
    v.Broadcast(0, sum_);
    v.PostTimer(v.Now() + o_.period, 0, 0);
  }

 private:
  ProbeOptions o_;
  uint64_t sum_ = 0;
};

class Probe : public Mechanism {
 public:
  explicit Probe(const ProbeOptions& o) : o_(o) {}
  std::unique_ptr<SwitchCc> ForSwitch(uint64_t) const override {
    return std::make_unique<ProbeSwitch>(o_);
  }
  std::unique_ptr<HcaCc> ForHca(uint64_t) const override { return std::make_unique<ProbeHca>(o_); }
  std::unique_ptr<SideBandCc> ForSideBand() const override {
    return std::make_unique<ProbeSideBand>(o_);
  }
  SimTime SideBandLatency() const override { return o_.latency; }

 private:
  ProbeOptions o_;
};

}  // namespace

void RegisterProbe() {
  MechanismRegistry::Get().Add(
      "probe",
      "for tests of the hook layer: every hook in use (extra queue, queue arbitration, control "
      "messages, timers, side band) and no header touched",
      [](const policy::Params& p) {
        p.CheckKeys({"period_ns", "side_band_latency_ns"});
        ProbeOptions o;
        o.period = static_cast<SimTime>(p.Double("period_ns", 1000, 1, 1e9) * 1000);
        o.latency = static_cast<SimTime>(p.Double("side_band_latency_ns", 500, 1, 1e9) * 1000);
        return std::make_unique<Probe>(o);
      });
}

}  // namespace ibemu::cc
