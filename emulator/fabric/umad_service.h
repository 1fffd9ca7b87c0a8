// The fabric end of the host libraries' channel (common/transport/umad.proto): programs attach to
// HCA ports of a fabric that is up, send MADs that enter the fabric at that port, and receive
// what the port's agents do not answer (responses, traps, SA queries); verbs programs open a
// session on an HCA, register memory, create and drive QPs, and receive their completions. The
// libraries on the other side play the host kernel (agents, timeouts, CQs); this side is the HCA
// and the wire.
#pragma once
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
#include <zmq.hpp>

#include "common/transport/mad_frame_proto.h"
#include "emulator/engine/partition.h"
#include "emulator/fabric/fabric.h"
#include "emulator/fabric/local_channel.h"
#include "emulator/hca/verbs_qp.h"

namespace ibemu::umad {
class VerbsRequest;
class FromFabric;
}  // namespace ibemu::umad

namespace ibemu::fabric {

class UmadService : public mgmt::MadClient, public hca::VerbsClient {
 public:
  // Clients connect at the ZeroMQ `endpoint` and, when `direct_path` is not empty, at a Unix
  // SOCK_SEQPACKET socket there (LocalChannel): hostlib/umad uses the latter when it exists.
  UmadService(zmq::context_t& ctx, const std::string& endpoint, const std::string& direct_path,
              Fabric& f, const scenario::Scenario& s, engine::Partition& part);
  ~UmadService() override;

  zmq::socket_t& socket() { return sock_; }
  // The direct channel's descriptors, for the service loop to wait on beside the socket.
  void AddPollItems(std::vector<zmq::pollitem_t>* items);
  // Takes every waiting message; MADs enter the fabric at the partition's current time.
  // `zmq_ready`: whether the ZeroMQ socket has messages; `ready`: AddPollItems's items after a
  // poll (only those with events are read), or null to read every client.
  void Poll(bool zmq_ready = true, const zmq::pollitem_t* ready = nullptr);
  // Whether the ZeroMQ socket was used (sent or received on) since the last call: its ZMQ_FD
  // may then have lost its edge (ServicePoller::Touched).
  bool TakeZmqUsed() { return std::exchange(zmq_used_, false); }
  // One client message, as Poll hands it over (also the fuzz target's entry): bytes that are
  // not a ToFabric, or name what the client does not hold, are dropped without a reply.
  void HandleMessage(const std::string& routing_id, std::string_view body) {
    Handle(routing_id, body);
  }
  // Forgets the attachments (and IsSM bits) of clients whose connection is gone. ZeroMQ does
  // not tell a ROUTER when a peer leaves (ZMQ_ROUTER_NOTIFY is a draft option Debian's libzmq
  // lacks), but a message to a departed peer fails at once under ZMQ_ROUTER_MANDATORY, so an
  // empty FromFabric (which the library ignores) finds them. Call it every few hundred ms.
  void ForgetDeparted();
  size_t attached_clients() const;
  bool Deliver(engine::LpId lp, int port, const engine::MadBytes& mad,
               const mgmt::MadAddress& from) override;
  // hca::VerbsClient: a completion for the verbs program of `session`.
  void Complete(uint32_t session, const hca::VerbsCompletion& c) override;
  void AsyncEvent(uint32_t session, int type, uint32_t qpn, uint32_t srq) override;
  // Sends the completions held back since the last call: the service loop calls it after each
  // run of the engine, so a program gets one message per step instead of one per completion.
  void FlushCompletions();
  // Forgets the clients that a send from inside the engine found gone (Deliver); the service
  // loop calls it after each run of the engine, outside any device's event.
  void ForgetFailed();
  uint64_t mads_in() const { return mads_in_; }
  uint64_t mads_out() const { return mads_out_; }

 private:
  struct Client {
    std::string routing_id;
    uint32_t handle = 0;
    // It asked at Attach for its MADs as frames (common/transport/mad_frame.h); a library that
    // did not (one from before them) gets Receive messages.
    bool frames = false;
  };
  void Handle(const std::string& routing_id, std::string_view body);
  // A MAD an attached program sends (a Send, or a frame of one).
  void HandleSend(const std::string& routing_id, uint32_t handle,
                  const transport::MadFrameAddress& addr, const uint8_t* mad, size_t len);
  int FindNode(const std::string& name) const;
  // The node one of whose ports has `lid` (within its LMC range), or "LID n".
  std::string NodeOfLid(uint16_t lid) const;
  void Reply(const std::string& routing_id, const std::string& body);
  // False when the client is gone (the caller decides whether to forget it there and then).
  bool SendTo(const std::string& routing_id, const std::string& body);
  void Forget(const std::string& routing_id);
  // Verbs programs (verbs_requests.cc): sessions, each a program on one HCA.
  struct Session {
    std::string routing_id;
    engine::LpId lp = 0;
    pid_t pid = 0;
    uint32_t qps = 0, mrs = 0;  // held, against the per-session limits
  };
  void HandleVerbs(const std::string& routing_id, uint64_t request, const umad::VerbsRequest& v);
  void CloseSession(uint32_t id);
  // A message to the program of a session, from inside an HCA's event (never forgets anyone).
  void SendToSession(uint32_t session, const umad::FromFabric& msg);

  zmq::socket_t sock_;
  std::unique_ptr<LocalChannel> local_;
  Fabric& f_;
  const scenario::Scenario& s_;
  engine::Partition& part_;
  std::string endpoint_;
  std::map<std::pair<engine::LpId, int>, std::vector<Client>> attached_;
  std::map<uint32_t, Session> sessions_;
  std::map<uint32_t, umad::FromFabric> pending_completions_;  // by session
  uint32_t next_session_ = 1;
  uint64_t seq_ = 0;
  uint64_t mads_in_ = 0, mads_out_ = 0;
  // Deliver's, kept for their capacity: every answer to a tool passes through them.
  std::string deliver_buf_;
  std::unique_ptr<umad::FromFabric> deliver_msg_;  // made once, in the constructor
  std::vector<std::string> failed_;  // routing ids a send from inside the engine found gone
  bool zmq_used_ = true;
};

}  // namespace ibemu::fabric
