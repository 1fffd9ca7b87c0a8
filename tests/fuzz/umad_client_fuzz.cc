// libFuzzer target: what programs attached to a fabric that is up may send it. Arbitrary bytes
// become messages (one or two frames) from three clients, over real ZeroMQ DEALER sockets into
// the fabric's ROUTER (UmadService), between steps of a running test-bed fabric; attachments,
// IsSM bits and injected MADs accumulate across inputs as they would across a long-lived fabric.
// The fabric must neither crash nor read out of bounds, keep its attachments bounded, and still
// answer a well-formed Query afterwards.
//
// Verbs requests come in the same way: sessions, MRs, QPs and posts with pids and addresses made
// of fuzz bytes, against a DMA that touches no process.
//
// Input: records of [selector][length lo][length hi][body...]: selector bits 0-1 pick the client
// (3 = client 0 again), bit 2 adds a second frame with the same body, bit 3 lets 20 us of
// virtual time pass, bit 4 sweeps departed clients.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <zmq.hpp>

#include "emulator/engine/partition.h"
#include "emulator/fabric/fabric.h"
#include "emulator/fabric/umad_service.h"
#include "emulator/hca/host_memory.h"
#include "tests/fuzz/fuzz_fabric.h"
#include "umad.pb.h"

namespace {

using namespace ibemu;

struct World : fuzzing::FuzzFabric {
  zmq::context_t ctx;
  std::unique_ptr<fabric::UmadService> umad;
  std::unique_ptr<zmq::socket_t> clients[3];
  std::unique_ptr<zmq::socket_t> checker;
  uint64_t request = 1;

  World() {
    // Verbs sessions name pids made of fuzz bytes: the HCA's DMA reads zeros and writes nowhere,
    // so no process (this one included) is touched, while every check before it still runs.
    hca::SetHostMemoryOps({[](pid_t, uint64_t, const iovec* local, int count) {
                             for (int i = 0; i < count; ++i)
                               std::memset(local[i].iov_base, 0, local[i].iov_len);
                             return true;
                           },
                           [](pid_t, uint64_t, const iovec*, int) { return true; }});
    umad = std::make_unique<fabric::UmadService>(ctx, "inproc://umad-fuzz", "", *f, s, *part);
    Start();
    for (int i = 0; i < 3; ++i) clients[i] = Connect("c" + std::to_string(i));
    checker = Connect("checker");
  }
  std::unique_ptr<zmq::socket_t> Connect(const std::string& id) {
    auto c = std::make_unique<zmq::socket_t>(ctx, zmq::socket_type::dealer);
    c->set(zmq::sockopt::routing_id, id);
    c->set(zmq::sockopt::linger, 0);
    c->connect("inproc://umad-fuzz");
    return c;
  }
  void Drain(zmq::socket_t& c) {
    zmq::message_t m;
    while (c.recv(m, zmq::recv_flags::dontwait)) {
    }
  }
  void Step(bool advance) {
    umad->Poll();
    if (advance) {
      part->RunUntil(part->now() + 20 * link::kPsPerUs);
      umad->FlushCompletions();  // as the service loop does after each step
      umad->ForgetFailed();
    }
    for (auto& c : clients) Drain(*c);
  }
  // A Query from a client that sent nothing odd must still be answered.
  bool StillAnswers() {
    umad::ToFabric q;
    q.set_request(request++);
    q.mutable_query()->set_node("H1");
    std::string b = q.SerializeAsString();
    checker->send(zmq::buffer(b), zmq::send_flags::dontwait);
    umad->Poll();
    zmq::message_t m;
    while (checker->recv(m, zmq::recv_flags::dontwait)) {
      umad::FromFabric r;
      if (r.ParseFromArray(m.data(), static_cast<int>(m.size())) && r.request() + 1 == request &&
          r.has_described() && r.described().ok())
        return true;
    }
    return false;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World w;
  size_t at = 0;
  while (at + 3 <= size) {
    uint8_t sel = data[at];
    size_t len = data[at + 1] | (static_cast<size_t>(data[at + 2]) << 8);
    at += 3;
    len = std::min(len, size - at);
    zmq::socket_t& c = *w.clients[(sel & 3) % 3];
    auto flags = (sel & 4) ? zmq::send_flags::sndmore | zmq::send_flags::dontwait
                           : zmq::send_flags::dontwait;
    c.send(zmq::buffer(data + at, len), flags);
    if (sel & 4) c.send(zmq::buffer(data + at, len), zmq::send_flags::dontwait);
    at += len;
    if (sel & 16) w.umad->ForgetDeparted();
    w.Step(sel & 8);
  }
  w.Step(true);
  // 3 clients x the per-client cap: more would mean the cap does not hold.
  if (w.umad->attached_clients() > 3 * 1024) std::abort();
  if (!w.StillAnswers()) std::abort();
  return 0;
}
