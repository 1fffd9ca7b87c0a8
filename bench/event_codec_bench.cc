// Cost of the compact framing used for events on links between emulator processes: how fast a
// packet event is encoded and decoded, and how many bytes it takes.
#include <benchmark/benchmark.h>

#include "emulator/engine/event_codec.h"
#include "emulator/hca/packet_builder.h"

namespace {

using namespace ibemu;

engine::Event PacketEvent(engine::Packet* p) {
  hca::RcSegment seg;
  seg.slid = 3;
  seg.dlid = 7;
  seg.payload = 2048;
  seg.psn = 42;
  hca::BuildRcSend(p, seg);
  engine::Event e;
  e.time = 123456789;
  e.lp = 5;
  e.src = 4;
  e.seq = 99;
  e.kind = engine::kPacketArrive;
  e.port = 2;
  e.b = 123456789 + 520000;
  e.pkt = p;
  return e;
}

void BM_EncodeBatch(benchmark::State& st) {
  engine::Packet p;
  engine::Event e = PacketEvent(&p);
  engine::BatchWriter w;
  size_t n = static_cast<size_t>(st.range(0));
  size_t bytes = 0;
  for (auto _ : st) {
    w.Reset(1);
    for (size_t i = 0; i < n; ++i) w.Add(e);
    bytes = w.Finish(1000, 0, 0).size();
    benchmark::DoNotOptimize(bytes);
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * n));
  st.counters["bytes_per_frame"] = static_cast<double>(bytes - 16) / static_cast<double>(n);
}
BENCHMARK(BM_EncodeBatch)->Arg(1)->Arg(16)->Arg(256);

void BM_DecodeBatch(benchmark::State& st) {
  engine::Packet p;
  engine::Event e = PacketEvent(&p);
  engine::BatchWriter w;
  size_t n = static_cast<size_t>(st.range(0));
  w.Reset(1);
  for (size_t i = 0; i < n; ++i) w.Add(e);
  std::string buf = w.Finish(1000, 0, 0);
  engine::PacketPool pool;
  std::vector<engine::Event> out;
  for (auto _ : st) {
    out.clear();
    engine::Batch head;
    bool ok = engine::DecodeBatch(buf.data(), buf.size(), &pool, &head, &out);
    benchmark::DoNotOptimize(ok);
    for (auto& x : out) pool.Put(x.pkt);
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * n));
}
BENCHMARK(BM_DecodeBatch)->Arg(1)->Arg(16)->Arg(256);

}  // namespace

BENCHMARK_MAIN();
