// The host libraries' channel as a Unix SOCK_SEQPACKET socket (FabricFiles::direct), beside the
// ZeroMQ ROUTER of the same channel. A MAD from a tool then costs two thread wake-ups on its
// way to the fabric and back (the service loop's, and the tool's) instead of a ZeroMQ I/O thread
// at each end in each direction. Each packet is one message (a serialized umad.proto message or a
// MAD frame, common/transport/mad_frame.h); the kernel keeps their
// boundaries and their order, and tells the service when a client goes (ZeroMQ's ROUTER does
// not). Clients are named like ROUTER peers, by an id string that no ZeroMQ peer can have, so the
// service keeps one table of attachments for both.
#pragma once
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>
#include <zmq.hpp>

namespace ibemu::fabric {

class LocalChannel {
 public:
  // Binds and listens at `path` (a stale socket file there is replaced); throws naming the path.
  explicit LocalChannel(const std::string& path);
  ~LocalChannel();
  LocalChannel(const LocalChannel&) = delete;
  LocalChannel& operator=(const LocalChannel&) = delete;

  // What the service loop waits on: the listening socket and every client (for output too while
  // some of it waits in this process).
  void AddPollItems(std::vector<zmq::pollitem_t>* items) const;
  // Accepts new clients, sends what was held back, and hands over every waiting message. A
  // client that hung up, sent more than a message may hold, or cannot be written to any more is
  // closed and reported to `gone` after its last message. `ready` is what a poll made of
  // AddPollItems's items returned (only those with events are looked at), or null for all.
  void Poll(const zmq::pollitem_t* ready,
            const std::function<void(const std::string& id, std::string_view body)>& message,
            const std::function<void(const std::string& id)>& gone);

  static bool IsLocalId(const std::string& id) { return !id.empty() && id[0] == kIdMark; }
  // Sends to client `id` without blocking: what the socket cannot take now is held here, in
  // order, and sent as the client reads (nothing is dropped for a client that is alive, as with
  // the ROUTER's unlimited high-water mark). False when the client is gone.
  bool Send(const std::string& id, const std::string& body);
  size_t clients() const { return clients_.size(); }

  // A ToFabric or a MAD frame is a few hundred bytes; as on the ROUTER, a client sending more is
  // cut off.
  static constexpr size_t kMaxMessage = size_t{64} << 10;

 private:
  // ZeroMQ's generated routing ids start with a zero byte and ours with a non-zero one, and our
  // library never sets its own.
  static constexpr char kIdMark = '\x01';
  struct Client {
    int fd = -1;
    std::deque<std::string> held;  // not yet taken by the socket
    bool broken = false;           // a write failed: closed at the next Poll
    bool look = true;              // Poll: it had events, or is new
  };
  bool Flush(Client& c);  // false when the client is gone

  std::string path_;
  int listen_fd_ = -1;
  std::chrono::steady_clock::time_point accept_paused_until_{};
  uint64_t next_id_ = 1;
  std::map<std::string, Client> clients_;
  std::vector<char> buf_;
};

}  // namespace ibemu::fabric
