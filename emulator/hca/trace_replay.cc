// Trace replay (docs/traces.md): a replayed application's ranks run at their HCAs. A rank
// computes, sends without waiting (the message is queued on its QP to the peer) and receives by
// waiting until the peer's next message has arrived whole at this HCA, so a slow fabric slows
// the application exactly where its messages wait.

#include "common/wire/opcode.h"
#include "emulator/hca/hca.h"

namespace ibemu::hca {

void Hca::TraceStep(uint32_t source) {
  SourceState& s = sources_[source];
  TraceState& t = s.trace;
  const std::vector<TraceOp>& ops = s.cfg.trace->ranks[s.cfg.rank];
  t.blocked = false;
  while (t.pc < ops.size()) {
    const TraceOp& op = ops[t.pc];
    if (op.kind == TraceOp::kRecv) {
      if (t.taken[op.peer] == t.arrived[op.peer]) {
        t.blocked = true;
        return;
      }
      ++t.taken[op.peer];
      ++t.pc;
    } else if (op.kind == TraceOp::kSend) {
      ++t.pc;
      QueueMessage(source, s.cfg.trace->lid[op.peer], static_cast<uint32_t>(op.value));
    } else {
      ++t.pc;
      if (op.value > 0) {
        Post(id(), now() + static_cast<SimTime>(op.value), kTraceStep, 0, source);
        return;
      }
    }
  }
  flows_->flows[s.cfg.flow].RankDone(now());
}

void Hca::TraceArrived(uint32_t flow, uint16_t slid) {
  for (uint32_t i : trace_sources_) {
    SourceState& s = sources_[i];
    if (s.cfg.flow != flow) continue;
    TraceState& t = s.trace;
    auto it = t.rank_of.find(slid);
    if (it == t.rank_of.end()) {
      // LIDs a subnet manager assigned after load differ from the program's: map them anew.
      t.rank_of.clear();
      for (uint32_t r = 0; r < s.cfg.trace->lid.size(); ++r)
        t.rank_of[ctx_->WireLid(s.cfg.trace->lid[r])] = r;
      it = t.rank_of.find(slid);
      if (it == t.rank_of.end()) return;
    }
    ++t.arrived[it->second];
    const std::vector<TraceOp>& ops = s.cfg.trace->ranks[s.cfg.rank];
    if (t.blocked && ops[t.pc].peer == it->second) TraceStep(i);
    return;
  }
}

}  // namespace ibemu::hca
