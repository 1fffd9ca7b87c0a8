// A manager's end of the wire: one HCA port opened through libibumad (our drop-in libibumad.so.3
// under `ibemu exec`, the real one on a host with hardware), the agents it registers (an SM's,
// or the CC manager's), IsSM, and MAD transactions: many requests in flight, each answered or
// timed out, while unsolicited MADs (SMInfo queries, traps) that arrive meanwhile go to a handler.
// The subnet manager and ibemu-ccmgr both talk through it.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/mad/mad_header.h"

namespace ibemu::fabricmgr {

using SmpData = std::array<uint8_t, mad::kSmpDataBytes>;

class MadPortError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A MAD that arrived, with the address it came from (the umad header's).
struct ReceivedMad {
  mad::MadBuffer mad{};
  uint16_t slid = 0;
  uint32_t qpn = 0;
  uint8_t sl = 0;
  int status = 0;  // non-zero: a request of ours that timed out
};

// One management class the port sends on, and the request methods it receives unsolicited.
struct MadAgent {
  uint8_t mgmt_class = 0;
  uint8_t class_version = 1;
  std::vector<uint8_t> methods;
};
// An SM's: both SMP classes, answering Get and Set (SMInfo) and receiving traps.
std::vector<MadAgent> SmAgents();

class MadPort {
 public:
  // Opens the HCA port with GUID `port_guid`, or with 0 the port libibumad picks for port 0
  // (under `ibemu exec`, the one of --port), and registers `agents`. Throws MadPortError when
  // there is no such port or a registration is refused.
  MadPort(uint64_t port_guid, const std::vector<MadAgent>& agents);
  ~MadPort();
  MadPort(const MadPort&) = delete;
  MadPort& operator=(const MadPort&) = delete;

  // Marks the port IsSM the way OpenSM does: the issm device (a file under `ibemu exec`) held
  // open for as long as the SM runs.
  void AssertIsSm();

  int fd() const;  // readable while a MAD is queued (umad_get_fd)
  const std::string& ca_name() const { return ca_name_; }
  int port_num() const { return port_num_; }
  uint64_t port_guid() const { return port_guid_; }

  // A MAD to `dlid` (0xFFFF for directed route): on QP0 for the SMP classes, otherwise on QP1
  // with the GSI Q_Key. Requests time out after timeout_ms, sent again `retries` times, then
  // come back through Receive with a non-zero status.
  void Send(const mad::MadBuffer& m, uint16_t dlid, int timeout_ms, int retries);
  // The next MAD within timeout_ms (0: only what is queued); false if none.
  bool Receive(ReceivedMad* out, int timeout_ms);

 private:
  int port_id_ = -1;
  std::map<uint8_t, int> agents_;  // management class -> umad agent id
  int issm_fd_ = -1;
  std::string ca_name_;
  int port_num_ = 0;
  uint64_t port_guid_ = 0;
};

// One SMP: directed route along `path` (the ports out of each node from the SM's, empty for the
// SM's own node), or LID-routed when lid is not 0.
struct Smp {
  std::vector<uint8_t> path;
  uint16_t lid = 0;
  uint8_t method = mad::method::kGet;
  uint16_t attr = 0;
  uint32_t mod = 0;
  SmpData data{};
};

struct SmpReply {
  bool answered = false;  // false: timed out (or never came back)
  uint16_t status = 0;    // the MAD status (15 bits for directed route)
  SmpData data{};
  bool ok() const { return answered && status == 0; }
};

// One request of a transaction: the MAD as it goes out (its TID is the client's) and where to.
struct MadRequest {
  mad::MadBuffer mad{};
  uint16_t dlid = 0;
};

struct MadReply {
  bool answered = false;  // false: timed out (or never came back)
  uint16_t status = 0;    // the MAD status (15 bits for directed route)
  mad::MadBuffer mad{};   // the response, whole
  bool ok() const { return answered && status == 0; }
};

// Runs MAD transactions over a MadPort; anything that is not an answer to them goes to
// `unsolicited` (which may send on the port).
class MadClient {
 public:
  using Handler = std::function<void(const ReceivedMad&)>;
  MadClient(MadPort& port, Handler unsolicited)
      : port_(port), unsolicited_(std::move(unsolicited)) {}

  // Sends every request, at most `window` outstanding, and returns one reply per request, in
  // order. Never blocks longer than the requests' timeouts allow.
  std::vector<MadReply> Transact(std::vector<MadRequest> requests);

  // Hands whatever unsolicited MADs are queued to the handler, waiting at most timeout_ms.
  void Poll(int timeout_ms);

  uint64_t mads_sent() const { return sent_; }
  MadPort& port() { return port_; }  // for what is sent without an answer (a TrapRepress)
  int timeout_ms = 200;              // per try, as OpenSM's transaction_timeout
  int retries = 3;
  int window = 64;

 private:
  MadPort& port_;
  Handler unsolicited_;
  uint32_t next_tid_ = 0x1000;
  uint64_t sent_ = 0;
};

// SMP transactions: the attribute data in and out.
class SmpClient : public MadClient {
 public:
  using MadClient::MadClient;
  using MadClient::Transact;
  std::vector<SmpReply> Transact(const std::vector<Smp>& requests);
  SmpReply Transact(const Smp& request) { return Transact(std::vector<Smp>{request}).front(); }
};

// Builds the 256-byte MAD of an SMP request (class 0x81 or 0x01, M_Key 0).
mad::MadBuffer BuildSmp(const Smp& s, uint64_t tid);

}  // namespace ibemu::fabricmgr
