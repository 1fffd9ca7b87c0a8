// hostlib/umad, the libibumad.so.3 replacement: the test plays the fabric with a real ZeroMQ
// ROUTER on a temporary IBEMU_RUN_DIR and checks what the kernel's ib_umad would guarantee:
// timeouts and retries with status ETIMEDOUT, TID ownership, response routing to the sending
// agent, unsolicited dispatch by class/version/method mask, a pollable fd, IsSM through the issm
// file. The last tests run the Debian smpquery binary against the built .so.
#include <endian.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <infiniband/umad.h>
#include <infiniband/umad_str.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/mad/mad_header.h"
#include "common/transport/mad_frame_proto.h"
#include "hostlib/umad/host.h"
#include "umad.pb.h"

extern char** environ;

namespace ibemu::umad {
namespace {

using namespace std::chrono_literals;
using Ms = std::chrono::milliseconds;

constexpr uint8_t kClassSmi = 0x01;
constexpr uint8_t kClassSmiDr = 0x81;
constexpr uint8_t kClassSa = 0x03;
constexpr uint8_t kClassPerf = 0x04;
constexpr uint8_t kClassCc = 0x21;
constexpr uint8_t kGet = 0x01, kSet = 0x02, kGetResp = 0x81, kTrapRepress = 0x07;
constexpr uint64_t kNodeGuid = 0x0002C90300A1B2C0ull;
constexpr uint64_t kPortGuid = 0x0002C90300A1B2C1ull;

// ---------------------------------------------------------------------------------------------
// MAD helpers.

using Mad = std::vector<uint8_t>;

Mad MakeMad(uint8_t mgmt_class, uint8_t version, uint8_t method, uint64_t tid,
            uint16_t attr = 0x0011) {
  Mad m(256, 0);
  m[0] = 1;  // base version
  m[1] = mgmt_class;
  m[2] = version;
  m[3] = method;
  for (int i = 0; i < 8; ++i) m[8 + i] = static_cast<uint8_t>(tid >> (56 - 8 * i));
  m[16] = static_cast<uint8_t>(attr >> 8);
  m[17] = static_cast<uint8_t>(attr);
  return m;
}

uint64_t TidOf(const std::string& mad) {
  return mad::ConstMadView{reinterpret_cast<const uint8_t*>(mad.data())}.tid();
}
uint64_t TidOf(const uint8_t* mad) {
  return mad::ConstMadView{mad}.tid();
}

// A umad buffer as applications use it: header, then the MAD.
struct Umad {
  std::vector<uint8_t> buf = std::vector<uint8_t>(umad_size() + 256, 0);
  explicit Umad(const Mad& mad = Mad(256, 0)) {
    std::memcpy(buf.data() + umad_size(), mad.data(), mad.size());
  }
  void* p() { return buf.data(); }
  ib_user_mad* hdr() { return reinterpret_cast<ib_user_mad*>(buf.data()); }
  uint8_t* mad() { return static_cast<uint8_t*>(umad_get_mad(p())); }
};

// ---------------------------------------------------------------------------------------------
// The fabric side: a ROUTER that answers Query and Attach, records everything it is sent and
// injects Receive messages on request. With a `direct_path` it also listens there on a Unix
// SOCK_SEQPACKET socket, as `ibemu up` does, and the library then talks to it that way.

class FakeFabric {
 public:
  // `takes_frames`: whether Attached says the fabric takes MADs as frames (an `ibemu up` from
  // before them does not).
  explicit FakeFabric(const std::string& endpoint, bool answer = true,
                      const std::string& direct_path = "", bool takes_frames = true)
      : answer_(answer), direct_path_(direct_path), takes_frames_(takes_frames) {
    ctx_ = zmq_ctx_new();
    router_ = zmq_socket(ctx_, ZMQ_ROUTER);
    int zero = 0;
    zmq_setsockopt(router_, ZMQ_LINGER, &zero, sizeof zero);
    EXPECT_EQ(zmq_bind(router_, endpoint.c_str()), 0) << zmq_strerror(zmq_errno());
    if (!direct_path.empty()) {
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", direct_path.c_str());
      listen_fd_ = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      unlink(direct_path.c_str());
      EXPECT_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
      EXPECT_EQ(listen(listen_fd_, 16), 0);
    }
    thread_ = std::thread([this] { Run(); });
  }
  ~FakeFabric() {
    stop_ = true;
    thread_.join();
    zmq_close(router_);
    zmq_ctx_term(ctx_);
    for (int fd : direct_clients_) close(fd);
    if (listen_fd_ >= 0) {
      close(listen_fd_);
      unlink(direct_path_.c_str());
    }
  }
  // Clients connected over the direct socket so far.
  int direct_connections() const { return direct_connections_; }
  // From now on nothing more is read from the clients, as from a fabric that is stopped.
  void StopReading() { deaf_ = true; }

  static CaAttributes Ca() {
    CaAttributes ca;
    ca.set_ca_name("ibemu0");
    ca.set_node("H1");
    ca.set_node_type(1);
    ca.set_num_ports(2);
    ca.set_node_guid(kNodeGuid);
    ca.set_system_guid(kNodeGuid);
    ca.set_fw_ver("1.2.3");
    ca.set_hw_rev("0xa0");
    ca.set_ca_type("ibemu HCA");
    for (uint32_t p = 1; p <= 2; ++p) {
      PortAttributes* port = ca.add_ports();
      port->set_port(p);
      port->set_lid(p == 1 ? 5 : 0);
      port->set_lmc(0);
      port->set_sm_lid(p == 1 ? 1 : 0);
      port->set_sm_sl(0);
      port->set_state(p == 1 ? 4 : 1);
      port->set_phys_state(p == 1 ? 5 : 2);
      port->set_rate(100);
      port->set_capmask(0x02510868);
      port->set_gid_prefix(0xFE80000000000000ull);
      port->set_port_guid(kPortGuid + p - 1);
      port->add_pkeys(0xFFFF);
      port->add_pkeys(0x8001);
    }
    return ca;
  }

  // Called on the fabric thread for each Send; may Inject().
  void OnSend(std::function<void(const umad::Send&)> f) {
    std::lock_guard lock(mu_);
    on_send_ = std::move(f);
  }

  // A MAD arriving at the attached port for the client that attached `handle`. From a fabric
  // that takes frames, every other one comes as a frame (common/transport/mad_frame.h), as
  // `ibemu up` sends them to a library that asked for them at Attach, and the rest as a Receive,
  // as it sends them to one that did not: the library must take both.
  void Inject(uint32_t handle, const Mad& mad, const Address& from) {
    std::string bytes;
    if (takes_frames_ && injected_++ % 2 == 0) {
      transport::MadFrameHeader h;
      h.kind = transport::MadFrameKind::kReceive;
      h.handle = handle;
      h.addr = transport::FromProto(from);
      transport::EncodeMadFrame(h, mad.data(), mad.size(), &bytes);
    } else {
      FromFabric msg;
      msg.mutable_receive()->set_handle(handle);
      msg.mutable_receive()->set_mad(mad.data(), mad.size());
      *msg.mutable_receive()->mutable_addr() = from;
      bytes = msg.SerializeAsString();
    }
    std::lock_guard lock(mu_);
    outbox_.emplace_back(handle, std::move(bytes));
  }

  // Answers a request as an SMA/GSA would: same TID, the R bit, from `from`.
  void Respond(const umad::Send& s, const Address& from, uint16_t status = 0) {
    Mad mad(s.mad().begin(), s.mad().end());
    mad[3] = static_cast<uint8_t>(mad[3] | 0x80);
    mad[4] = static_cast<uint8_t>(status >> 8);
    mad[5] = static_cast<uint8_t>(status);
    Inject(s.handle(), mad, from);
  }

  std::vector<ToFabric> Received() {
    std::lock_guard lock(mu_);
    return received_;
  }
  std::vector<umad::Send> Sends() {
    std::vector<umad::Send> out;
    for (const auto& m : Received())
      if (m.has_send()) out.push_back(m.send());
    return out;
  }
  // Waits until `pred` holds for the messages received so far.
  bool WaitFor(const std::function<bool(const std::vector<ToFabric>&)>& pred, Ms timeout = 3s) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return pred(received_); });
  }
  bool WaitForSends(size_t n, Ms timeout = 3s) {
    return WaitFor(
        [&](const std::vector<ToFabric>& all) {
          size_t count = 0;
          for (const auto& m : all) count += m.has_send();
          return count >= n;
        },
        timeout);
  }
  std::optional<uint32_t> last_handle() {
    std::lock_guard lock(mu_);
    return last_handle_;
  }
  // How many MADs came as frames.
  uint64_t frames_received() const { return frames_received_; }

 private:
  void Run() {
    while (!stop_) {
      if (deaf_) {
        std::this_thread::sleep_for(5ms);
        continue;
      }
      std::vector<zmq_pollitem_t> items = {{router_, 0, ZMQ_POLLIN, 0}};
      if (listen_fd_ >= 0) items.push_back({nullptr, listen_fd_, ZMQ_POLLIN, 0});
      for (int fd : direct_clients_) items.push_back({nullptr, fd, ZMQ_POLLIN, 0});
      zmq_poll(items.data(), static_cast<int>(items.size()), 5);
      for (;;) {
        std::string id, body;
        if (!RecvPart(&id, ZMQ_DONTWAIT)) break;
        RecvPart(&body, 0);
        Handle(id, body);
      }
      if (listen_fd_ >= 0) {
        for (int fd; (fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC)) >= 0;) {
          direct_clients_.push_back(fd);
          ++direct_connections_;
        }
      }
      for (auto it = direct_clients_.begin(); it != direct_clients_.end();) {
        char buf[70000];
        ssize_t n;
        bool gone = false;
        while ((n = recv(*it, buf, sizeof buf, MSG_DONTWAIT)) != 0) {
          if (n < 0) {
            gone = errno != EAGAIN;
            break;
          }
          Handle(DirectId(*it), std::string(buf, static_cast<size_t>(n)));
        }
        if (n == 0 || gone) {
          close(*it);
          it = direct_clients_.erase(it);
        } else {
          ++it;
        }
      }
      std::deque<std::pair<uint32_t, std::string>> out;
      {
        std::lock_guard lock(mu_);
        out.swap(outbox_);
      }
      for (auto& [handle, bytes] : out) {
        std::string peer;
        {
          std::lock_guard lock(mu_);
          auto it = peers_.find(handle);
          if (it == peers_.end()) continue;
          peer = it->second;
        }
        SendTo(peer, bytes);
      }
    }
  }

  static std::string DirectId(int fd) { return "\x01" + std::to_string(fd); }
  void SendTo(const std::string& peer, const std::string& bytes) {
    if (peer[0] == '\x01') {
      send(std::stoi(peer.substr(1)), bytes.data(), bytes.size(), MSG_NOSIGNAL);
      return;
    }
    zmq_send(router_, peer.data(), peer.size(), ZMQ_SNDMORE);
    zmq_send(router_, bytes.data(), bytes.size(), 0);
  }

  bool RecvPart(std::string* out, int flags) {
    zmq_msg_t part;
    zmq_msg_init(&part);
    if (zmq_msg_recv(&part, router_, flags) < 0) {
      zmq_msg_close(&part);
      return false;
    }
    out->assign(static_cast<const char*>(zmq_msg_data(&part)), zmq_msg_size(&part));
    zmq_msg_close(&part);
    return true;
  }

  void Reply(const std::string& peer, const FromFabric& msg) {
    SendTo(peer, msg.SerializeAsString());
  }

  void Handle(const std::string& peer, const std::string& body) {
    ToFabric msg;
    if (transport::IsMadFrame(body.data(), body.size())) {
      // The library sends its MADs as frames: recorded as the Send they stand for.
      transport::MadFrameHeader h;
      const uint8_t* mad;
      size_t len;
      ASSERT_TRUE(transport::DecodeMadFrame(body.data(), body.size(), &h, &mad, &len));
      ASSERT_EQ(h.kind, transport::MadFrameKind::kSend);
      ASSERT_TRUE(takes_frames_) << "a frame to a fabric that said it takes none";
      ++frames_received_;
      umad::Send* sd = msg.mutable_send();
      sd->set_handle(h.handle);
      sd->set_mad(mad, len);
      transport::ToProto(h.addr, sd->mutable_addr());
    } else {
      ASSERT_TRUE(msg.ParseFromString(body));
    }
    std::function<void(const umad::Send&)> on_send;
    {
      std::lock_guard lock(mu_);
      received_.push_back(msg);
      if (msg.has_attach()) {
        peers_[msg.attach().handle()] = peer;
        last_handle_ = msg.attach().handle();
      }
      on_send = on_send_;
    }
    cv_.notify_all();
    if (!answer_) return;
    if (msg.has_query()) {
      FromFabric reply;
      reply.set_request(msg.request());
      bool known = msg.query().node() == "H1";
      reply.mutable_described()->set_ok(known);
      if (known)
        *reply.mutable_described()->mutable_ca() = Ca();
      else
        reply.mutable_described()->set_error("no such node");
      Reply(peer, reply);
    } else if (msg.has_attach()) {
      FromFabric reply;
      reply.set_request(msg.request());
      bool ok = msg.attach().node() == "H1" && msg.attach().port() >= 1 && msg.attach().port() <= 2;
      reply.mutable_attached()->set_ok(ok);
      reply.mutable_attached()->set_handle(msg.attach().handle());
      reply.mutable_attached()->set_mad_frames(takes_frames_);
      if (!ok) reply.mutable_attached()->set_error("no such port");
      Reply(peer, reply);
    } else if (msg.has_send() && on_send) {
      on_send(msg.send());
    }
  }

  bool answer_;
  std::string direct_path_;
  const bool takes_frames_;
  int listen_fd_ = -1;
  std::vector<int> direct_clients_;  // fabric thread only
  std::atomic<int> direct_connections_{0};
  std::atomic<bool> deaf_{false};
  void* ctx_;
  void* router_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<ToFabric> received_;
  std::map<uint32_t, std::string> peers_;  // handle -> routing id
  std::optional<uint32_t> last_handle_;
  std::deque<std::pair<uint32_t, std::string>> outbox_;
  std::atomic<uint64_t> injected_{0};
  std::atomic<uint64_t> frames_received_{0};
  std::function<void(const umad::Send&)> on_send_;
};

Address From(uint32_t lid, uint32_t qpn, uint32_t sl = 0, uint32_t pkey_index = 0) {
  Address a;
  a.set_lid(lid);
  a.set_qpn(qpn);
  a.set_sl(sl);
  a.set_pkey_index(pkey_index);
  return a;
}

// ---------------------------------------------------------------------------------------------

// Every library test runs over both links: the ZeroMQ endpoint (a fabric without the direct
// socket) and the Unix SOCK_SEQPACKET socket that `ibemu up` offers beside it.
class UmadLibraryTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ibemu-umad-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    setenv("IBEMU_RUN_DIR", dir_.c_str(), 1);
    setenv("IBEMU_FABRIC", "t", 1);
    setenv("IBEMU_UMAD_PORT", "H1:1", 1);
    setenv("IBEMU_UMAD_QUERY_TIMEOUT_MS", "1000", 1);
    Host::ResetForTesting();
  }
  void TearDown() override {
    Host::ResetForTesting();
    fabric_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string Endpoint() const { return "ipc://" + dir_ + "/t.umad.sock"; }
  bool direct() const { return GetParam(); }
  void StartFabric(bool answer = true, bool takes_frames = true) {
    fabric_ = std::make_unique<FakeFabric>(
        Endpoint(), answer, direct() ? dir_ + "/t.umad.direct" : std::string(), takes_frames);
  }

  int OpenPort() {
    int fd = umad_open_port(nullptr, 0);
    EXPECT_GE(fd, 0);
    return fd;
  }
  // Sends `req` (`length` MAD bytes) and takes the file's next MAD into `got`: its answer, or
  // the request back timed out. umad_recv's result, or -1 when the send failed.
  int RoundTrip(int fd, int agent, Umad& req, int length, int timeout_ms, int retries, Umad* got) {
    if (umad_send(fd, agent, req.p(), length, timeout_ms, retries) != 0) return -1;
    int len = 256;
    return umad_recv(fd, got->p(), &len, 2000);
  }
  // A fabric that answers every MAD as H2's port 1, a port opened on it, and a PerfMgt agent
  // registered there; false when the agent could not be.
  bool OpenAnsweredPerfAgent(int* fd, int* agent) {
    StartFabric();
    fabric_->OnSend([this](const umad::Send& s) { fabric_->Respond(s, From(2, 1)); });
    *fd = OpenPort();
    *agent = umad_register(*fd, kClassPerf, 1, 0, nullptr);
    return *agent >= 0;
  }

  std::string dir_;
  std::unique_ptr<FakeFabric> fabric_;
};

TEST_P(UmadLibraryTest, HeaderIsTheSixtyFourByteUserMad) {
  EXPECT_EQ(umad_size(), sizeof(struct ib_user_mad));
  EXPECT_EQ(umad_size(), 64u);
  Umad u;
  EXPECT_EQ(umad_get_mad(u.p()), u.buf.data() + 64);
  umad_set_addr(u.p(), 0x1234, 1, 3, 0x80010000);
  ib_mad_addr_t* a = umad_get_mad_addr(u.p());
  EXPECT_EQ(be16toh(a->lid), 0x1234);
  EXPECT_EQ(be32toh(a->qpn), 1u);
  EXPECT_EQ(be32toh(a->qkey), 0x80010000u);
  EXPECT_EQ(a->sl, 3);
  umad_set_pkey(u.p(), 7);
  EXPECT_EQ(umad_get_pkey(u.p()), 7);
  ib_mad_addr_t grh{};
  grh.flow_label = 0x12345;  // host order in, network order stored
  grh.hop_limit = 9;
  grh.gid[15] = 0xAB;
  umad_set_grh(u.p(), &grh);
  EXPECT_EQ(a->grh_present, 1);
  EXPECT_EQ(be32toh(a->flow_label), 0x12345u);
  EXPECT_EQ(a->gid[15], 0xAB);
  umad_set_grh(u.p(), nullptr);
  EXPECT_EQ(a->grh_present, 0);
  EXPECT_STREQ(umad_class_str(0x81), "Subn");
  EXPECT_STREQ(umad_method_str(0x03, 0x92), "GetTableResp");
  EXPECT_STREQ(umad_attribute_str(0x01, htobe16(0x0015)), "PortInfo");
  EXPECT_STREQ(umad_common_mad_status_str(htobe16(0x000C)), "Method/Attribute combo not supported");
  EXPECT_STREQ(umad_sa_mad_status_str(htobe16(0x0300)), "No Records");
}

TEST_P(UmadLibraryTest, CaAndPortComeFromTheFabric) {
  StartFabric();
  char names[UMAD_MAX_DEVICES][UMAD_CA_NAME_LEN];
  ASSERT_EQ(umad_get_cas_names(names, UMAD_MAX_DEVICES), 1);
  EXPECT_STREQ(names[0], "ibemu0");

  umad_ca_t ca;
  ASSERT_EQ(umad_get_ca(nullptr, &ca), 0);
  EXPECT_STREQ(ca.ca_name, "ibemu0");
  EXPECT_EQ(ca.node_type, 1u);
  EXPECT_EQ(ca.numports, 2);
  EXPECT_STREQ(ca.fw_ver, "1.2.3");
  EXPECT_STREQ(ca.hw_ver, "0xa0");
  EXPECT_EQ(be64toh(ca.node_guid), kNodeGuid);  // network order, as read from sysfs
  EXPECT_EQ(ca.ports[0], nullptr);
  ASSERT_NE(ca.ports[1], nullptr);
  EXPECT_EQ(ca.ports[1]->base_lid, 5u);
  EXPECT_EQ(ca.ports[1]->state, 4u);
  EXPECT_EQ(be32toh(ca.ports[1]->capmask), 0x02510868u);
  EXPECT_EQ(be64toh(ca.ports[1]->port_guid), kPortGuid);
  EXPECT_EQ(be64toh(ca.ports[1]->gid_prefix), 0xFE80000000000000ull);
  ASSERT_EQ(ca.ports[1]->pkeys_size, 2u);
  EXPECT_EQ(ca.ports[1]->pkeys[1], 0x8001);
  EXPECT_STREQ(ca.ports[1]->link_layer, "InfiniBand");
  EXPECT_EQ(umad_release_ca(&ca), 0);
  EXPECT_NE(umad_get_ca("mlx5_0", &ca), 0);

  umad_port_t port;
  ASSERT_EQ(umad_get_port("ibemu0", 2, &port), 0);
  EXPECT_EQ(port.portnum, 2);
  EXPECT_EQ(be64toh(port.port_guid), kPortGuid + 1);
  umad_release_port(&port);
  ASSERT_EQ(umad_get_port(nullptr, 0, &port), 0);  // port 0: the configured one
  EXPECT_EQ(port.portnum, 1);
  umad_release_port(&port);

  __be64 guids[UMAD_CA_MAX_PORTS + 1];
  ASSERT_EQ(umad_get_ca_portguids(nullptr, guids, UMAD_CA_MAX_PORTS + 1), 3);
  EXPECT_EQ(guids[0], 0u);
  EXPECT_EQ(be64toh(guids[2]), kPortGuid + 1);
  EXPECT_EQ(umad_get_ca_portguids(nullptr, guids, 2), -ENOMEM);

  umad_device_node* list = umad_get_ca_device_list();
  ASSERT_NE(list, nullptr);
  EXPECT_STREQ(list->ca_name, "ibemu0");
  EXPECT_EQ(list->next, nullptr);
  EXPECT_EQ(umad_sort_ca_device_list(&list, 0), 0);
  umad_free_ca_device_list(list);
}

TEST_P(UmadLibraryTest, NoFabricMeansNoDeviceAtOnce) {
  auto start = std::chrono::steady_clock::now();
  char names[4][UMAD_CA_NAME_LEN];
  EXPECT_EQ(umad_get_cas_names(names, 4), 0);
  EXPECT_EQ(umad_open_port(nullptr, 0), -ENODEV);
  EXPECT_EQ(umad_get_ca_device_list(), nullptr);
  EXPECT_EQ(errno, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 500ms);
}

TEST_P(UmadLibraryTest, SilentFabricMeansNoDeviceAfterOneTimeout) {
  StartFabric(/*answer=*/false);
  auto start = std::chrono::steady_clock::now();
  char names[4][UMAD_CA_NAME_LEN];
  EXPECT_EQ(umad_get_cas_names(names, 4), 0);
  EXPECT_EQ(umad_open_port(nullptr, 0), -ENODEV);
  EXPECT_EQ(umad_open_port(nullptr, 0), -ENODEV);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, 1000ms);  // the first Query waited its full timeout...
  EXPECT_LT(took, 2000ms);  // ...the others only glanced
}

TEST_P(UmadLibraryTest, OpenPortAttachesAndClosePortDetaches) {
  StartFabric();
  EXPECT_EQ(umad_open_port("ibemu0", 7), -EINVAL);  // no such port
  int fd = umad_open_port("ibemu0", 2);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(umad_get_fd(fd), fd);
  auto handle = fabric_->last_handle();
  ASSERT_TRUE(handle);
  EXPECT_EQ(umad_close_port(fd), 0);
  EXPECT_TRUE(fabric_->WaitFor([&](const std::vector<ToFabric>& all) {
    for (const auto& m : all)
      if (m.has_detach() && m.detach().handle() == *handle) return true;
    return false;
  }));
  bool attached_port2 = false;
  for (const auto& m : fabric_->Received())
    if (m.has_attach() && m.attach().handle() == *handle)
      attached_port2 = m.attach().port() == 2 && m.attach().node() == "H1";
  EXPECT_TRUE(attached_port2);
  // The library took the direct socket when the fabric offered one, and ZeroMQ otherwise.
  EXPECT_EQ(fabric_->direct_connections(), direct() ? 1 : 0);
}

TEST_P(UmadLibraryTest, UnansweredRequestComesBackTimedOutAfterAllRetries) {
  StartFabric();
  int fd = OpenPort();
  int agent = umad_register(fd, kClassSmiDr, 1, 0, nullptr);
  ASSERT_GE(agent, 0);
  Umad req(MakeMad(kClassSmiDr, 1, kGet, 0x00000000CAFE0042ull));
  umad_set_addr(req.p(), 0xFFFF, 0, 0, 0);

  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(umad_send(fd, agent, req.p(), 256, 100, 2), 0);
  Umad got;
  int len = 256;
  int r = umad_recv(fd, got.p(), &len, -1);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r, agent);
  EXPECT_EQ(umad_status(got.p()), ETIMEDOUT);
  EXPECT_EQ(TidOf(got.mad()) & 0xFFFFFFFF, 0xCAFE0042u);
  EXPECT_EQ(got.mad()[1], kClassSmiDr);
  EXPECT_EQ(len, 24);            // the MAD header only, as ib_umad returns a timed-out send
  EXPECT_GE(took, 300ms - 5ms);  // timeout * (retries + 1)
  EXPECT_LT(took, 1000ms);

  // The first send and two retries, the same MAD each time.
  ASSERT_TRUE(fabric_->WaitForSends(3));
  auto sends = fabric_->Sends();
  ASSERT_EQ(sends.size(), 3u);
  EXPECT_EQ(sends[0].mad(), sends[1].mad());
  EXPECT_EQ(sends[0].mad(), sends[2].mad());
  EXPECT_EQ(sends[0].mad().size(), 256u);
  EXPECT_EQ(sends[0].addr().lid(), 0xFFFFu);

  // Nothing more: no further retries, no second report.
  len = 256;
  EXPECT_EQ(umad_recv(fd, got.p(), &len, 300), -ETIMEDOUT);
  EXPECT_EQ(fabric_->Sends().size(), 3u);
}

TEST_P(UmadLibraryTest, AFinishedRequestLeavesNothingInTheNextOnesRetries) {
  // The library keeps an answered request's buffer for the next request it tracks. A full MAD
  // of 0xAB is answered; a short request sent next is never answered, so it is sent again and
  // comes back timed out: every copy of it on the wire must be its own bytes, zero-padded, and
  // the report its own TID, with nothing of the first request left in them.
  StartFabric();
  constexpr uint64_t kFirst = 0x00000000A0000001ull, kSecond = 0x00000000A0000002ull;
  fabric_->OnSend([&](const umad::Send& s) {
    if ((TidOf(s.mad()) & 0xFFFFFFFF) == (kFirst & 0xFFFFFFFF)) fabric_->Respond(s, From(1, 0));
  });
  int fd = OpenPort();
  int agent = umad_register(fd, kClassSmiDr, 1, 0, nullptr);
  ASSERT_GE(agent, 0);
  Mad full = MakeMad(kClassSmiDr, 1, kGet, kFirst);
  std::fill(full.begin() + 24, full.end(), 0xAB);
  Umad first(full);
  umad_set_addr(first.p(), 0xFFFF, 0, 0, 0);
  Umad got;
  ASSERT_EQ(RoundTrip(fd, agent, first, 256, 1000, 3, &got), agent);
  EXPECT_EQ(umad_status(got.p()), 0);

  Mad shorter = MakeMad(kClassSmiDr, 1, kGet, kSecond);
  std::fill(shorter.begin() + 24, shorter.begin() + 40, 0x5C);
  Umad second(shorter);
  umad_set_addr(second.p(), 0xFFFF, 0, 0, 0);
  ASSERT_EQ(RoundTrip(fd, agent, second, 40, 100, 1, &got), agent);
  EXPECT_EQ(umad_status(got.p()), ETIMEDOUT);
  EXPECT_EQ(TidOf(got.mad()) & 0xFFFFFFFF, kSecond & 0xFFFFFFFF);

  ASSERT_TRUE(fabric_->WaitForSends(3));
  auto sends = fabric_->Sends();
  ASSERT_EQ(sends.size(), 3u);  // the first request, the second and its one retry
  for (size_t i = 1; i < 3; ++i) {
    SCOPED_TRACE(i);
    const std::string& m = sends[i].mad();
    ASSERT_EQ(m.size(), 256u);
    EXPECT_EQ(TidOf(m) & 0xFFFFFFFF, kSecond & 0xFFFFFFFF);
    EXPECT_TRUE(std::all_of(m.begin() + 24, m.begin() + 40, [](char c) { return c == 0x5C; }));
    EXPECT_TRUE(std::all_of(m.begin() + 40, m.end(), [](char c) { return c == 0; }));
  }
  EXPECT_EQ(sends[1].mad(), sends[2].mad());
}

TEST_P(UmadLibraryTest, SendsNeverBlockWhenTheFabricStopsReading) {
  // More MADs than a socket buffer holds, to a fabric that reads none of them: each send returns
  // at once (the library queues what the link cannot take, as ZeroMQ does), and each request
  // comes back timed out. A send that blocked would hold the library's lock, so no timeout would
  // fire and a tool would hang.
  StartFabric();
  int fd = OpenPort();
  int agent = umad_register(fd, kClassSmiDr, 1, 0, nullptr);
  ASSERT_GE(agent, 0);
  fabric_->StopReading();
  constexpr int kSends = 1000;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kSends; ++i) {
    Umad req(MakeMad(kClassSmiDr, 1, kGet, 0x00000000BEEF0000ull + i));
    umad_set_addr(req.p(), 0xFFFF, 0, 0, 0);
    ASSERT_EQ(umad_send(fd, agent, req.p(), 256, 100, 0), 0) << "send " << i;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2000ms);
  int timed_out = 0;
  for (int i = 0; i < kSends; ++i) {
    Umad got;
    int len = 256;
    if (umad_recv(fd, got.p(), &len, 5000) != agent || umad_status(got.p()) != ETIMEDOUT) break;
    ++timed_out;
  }
  EXPECT_EQ(timed_out, kSends);
}

TEST_P(UmadLibraryTest, RequestsGetTheAgentsHiTidAndResponsesKeepTheirs) {
  StartFabric();
  int fd = OpenPort();
  int a = umad_register(fd, kClassSmi, 1, 0, nullptr);
  int b = umad_register(fd, kClassPerf, 1, 0, nullptr);
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  Umad get_a(MakeMad(kClassSmi, 1, kGet, 0xDEADBEEF12345678ull));
  Umad get_b(MakeMad(kClassPerf, 1, kGet, 0xDEADBEEF12345679ull));
  Umad resp(MakeMad(kClassPerf, 1, kGetResp, 0xDEADBEEF1234567Aull));
  Umad repress(MakeMad(kClassSmi, 1, kTrapRepress, 0xDEADBEEF1234567Bull));
  ASSERT_EQ(umad_send(fd, a, get_a.p(), 256, 0, 0), 0);
  ASSERT_EQ(umad_send(fd, b, get_b.p(), 256, 0, 0), 0);
  ASSERT_EQ(umad_send(fd, b, resp.p(), 256, 0, 0), 0);
  ASSERT_EQ(umad_send(fd, a, repress.p(), 256, 0, 0), 0);
  ASSERT_TRUE(fabric_->WaitForSends(4));
  auto s = fabric_->Sends();
  uint64_t ta = TidOf(s[0].mad()), tb = TidOf(s[1].mad());
  EXPECT_EQ(ta & 0xFFFFFFFF, 0x12345678u);
  EXPECT_EQ(tb & 0xFFFFFFFF, 0x12345679u);
  EXPECT_NE(ta >> 32, 0xDEADBEEFu);
  EXPECT_NE(tb >> 32, 0xDEADBEEFu);
  EXPECT_NE(ta >> 32, tb >> 32);  // one hi_tid per agent
  EXPECT_EQ(TidOf(s[2].mad()), 0xDEADBEEF1234567Aull);
  EXPECT_EQ(TidOf(s[3].mad()), 0xDEADBEEF1234567Bull);
  // The caller's buffer is left as it was, apart from the header fields umad_send fills.
  EXPECT_EQ(TidOf(get_a.mad()), 0xDEADBEEF12345678ull);
  EXPECT_EQ(get_a.hdr()->agent_id, static_cast<uint32_t>(a));
}

TEST_P(UmadLibraryTest, ResponseGoesToTheSendingAgentWithTheSendersAddress) {
  StartFabric();
  fabric_->OnSend([&](const umad::Send& s) { fabric_->Respond(s, From(7, 1, 3, 2)); });
  int fd = OpenPort();
  int smi = umad_register(fd, kClassSmi, 1, 0, nullptr);
  int perf = umad_register(fd, kClassPerf, 1, 0, nullptr);
  int perf2 = umad_register(fd, kClassPerf, 1, 0, nullptr);
  ASSERT_GE(smi, 0);
  ASSERT_GE(perf2, 0);
  // Twice: the first answer comes as a frame, the second as a Receive (FakeFabric::Inject).
  Umad got;
  int len = 256;
  for (uint64_t tid : {0x77u, 0x78u}) {
    SCOPED_TRACE(tid == 0x77 ? "frame" : "protobuf");
    Umad req(MakeMad(kClassPerf, 1, kGet, tid, 0x0012));
    umad_set_addr(req.p(), 7, 1, 0, 0x80010000);
    ASSERT_EQ(umad_send(fd, perf, req.p(), 256, 1000, 3), 0);
    len = 256;
    ASSERT_EQ(umad_recv(fd, got.p(), &len, 2000), perf);
    EXPECT_EQ(umad_status(got.p()), 0);
    EXPECT_EQ(len, 256);
    EXPECT_EQ(got.mad()[3], kGetResp);
    EXPECT_EQ(TidOf(got.mad()) & 0xFFFFFFFF, tid);
    const ib_mad_addr_t* from = umad_get_mad_addr(got.p());
    EXPECT_EQ(be16toh(from->lid), 7);
    EXPECT_EQ(be32toh(from->qpn), 1u);
    EXPECT_EQ(from->sl, 3);
    EXPECT_EQ(umad_get_pkey(got.p()), 2);
  }

  // Completed: no retry is sent and no timeout reported later.
  len = 256;
  EXPECT_EQ(umad_recv(fd, got.p(), &len, 1300), -ETIMEDOUT);
  EXPECT_EQ(fabric_->Sends().size(), 2u);
}

// The library asks for frames at Attach and sends its MADs as frames only to a fabric that said it
// takes them: an `ibemu up` from before frames gets Send messages, and still answers.
TEST_P(UmadLibraryTest, MadsGoAsFramesOnlyToAFabricThatTakesThem) {
  for (bool takes : {true, false}) {
    SCOPED_TRACE(takes ? "fabric takes frames" : "fabric from before frames");
    StartFabric(true, takes);
    fabric_->OnSend([&](const umad::Send& s) { fabric_->Respond(s, From(7, 1, 3, 2)); });
    int fd = OpenPort();
    int perf = umad_register(fd, kClassPerf, 1, 0, nullptr);
    ASSERT_GE(perf, 0);
    bool asked = false;
    for (const auto& m : fabric_->Received())
      if (m.has_attach()) asked = m.attach().mad_frames();
    EXPECT_TRUE(asked);
    Umad req(MakeMad(kClassPerf, 1, kGet, 0x55, 0x0012));
    umad_set_addr(req.p(), 7, 1, 3, 0x80010000);
    ASSERT_EQ(umad_send(fd, perf, req.p(), 256, 1000, 0), 0);
    Umad got;
    int len = 256;
    ASSERT_EQ(umad_recv(fd, got.p(), &len, 2000), perf);
    EXPECT_EQ(TidOf(got.mad()) & 0xFFFFFFFF, 0x55u);
    ASSERT_EQ(fabric_->Sends().size(), 1u);
    EXPECT_EQ(fabric_->Sends()[0].addr().sl(), 3u);
    EXPECT_EQ(fabric_->frames_received(), takes ? 1u : 0u);
    umad_close_port(fd);
    Host::ResetForTesting();
    fabric_.reset();
  }
}

TEST_P(UmadLibraryTest, ResponsesNobodyWaitsForAreDropped) {
  StartFabric();
  int fd = OpenPort();
  int agent = umad_register(fd, kClassSmi, 1, 0, nullptr);
  ASSERT_GE(agent, 0);
  // A request sent without a timeout is not waited for; its response is dropped (ib_mad).
  Umad req(MakeMad(kClassSmi, 1, kGet, 0x99));
  ASSERT_EQ(umad_send(fd, agent, req.p(), 256, 0, 0), 0);
  ASSERT_TRUE(fabric_->WaitForSends(1));
  auto handle = *fabric_->last_handle();
  fabric_->Respond(fabric_->Sends()[0], From(1, 0));
  // A response with a TID no agent owns.
  fabric_->Inject(handle, MakeMad(kClassSmi, 1, kGetResp, 0x1234567800000099ull), From(1, 0));
  Umad got;
  int len = 256;
  EXPECT_EQ(umad_recv(fd, got.p(), &len, 300), -ETIMEDOUT);
}

TEST_P(UmadLibraryTest, UnsolicitedRequestsGoByClassVersionAndMethodMask) {
  StartFabric();
  int fd = OpenPort();
  long get_set[16 / sizeof(long)] = {};
  get_set[0] = 1L << kGet | 1L << kSet;
  int plain = umad_register(fd, kClassSa, 2, 0, nullptr);  // responses only
  int sa = umad_register(fd, kClassSa, 2, 1, get_set);
  long trap[16 / sizeof(long)] = {};
  trap[0] = 1L << 0x05;
  int smi = umad_register(fd, kClassSmi, 1, 0, trap);
  ASSERT_GE(plain, 0);
  ASSERT_GE(sa, 0);
  ASSERT_GE(smi, 0);
  // The same method for the same class and version cannot be taken twice.
  EXPECT_EQ(umad_register(fd, kClassSa, 2, 0, get_set), -EPERM);
  auto handle = *fabric_->last_handle();

  auto expect_delivered = [&](const Mad& mad, int agent) {
    fabric_->Inject(handle, mad, From(9, 1));
    Umad got;
    int len = 256;
    EXPECT_EQ(umad_recv(fd, got.p(), &len, 2000), agent);
    EXPECT_EQ(umad_status(got.p()), 0);
    EXPECT_EQ(TidOf(got.mad()), TidOf(mad.data()));
  };
  expect_delivered(MakeMad(kClassSa, 2, kGet, 0x1001), sa);
  expect_delivered(MakeMad(kClassSa, 2, kSet, 0x1002), sa);
  expect_delivered(MakeMad(kClassSmi, 1, 0x05, 0x1003), smi);

  fabric_->Inject(handle, MakeMad(kClassSa, 2, 0x12, 0x2001), From(9, 1));  // GetTable: not in mask
  fabric_->Inject(handle, MakeMad(kClassSa, 1, kGet, 0x2002), From(9, 1));  // other version
  fabric_->Inject(handle, MakeMad(kClassCc, 2, kGet, 0x2003), From(9, 1));  // no agent
  fabric_->Inject(handle, MakeMad(kClassSmiDr, 1, kGet, 0x2004), From(9, 1));
  Umad got;
  int len = 256;
  EXPECT_EQ(umad_recv(fd, got.p(), &len, 400), -ETIMEDOUT);
  // And still alive.
  expect_delivered(MakeMad(kClassSa, 2, kGet, 0x1004), sa);
}

TEST_P(UmadLibraryTest, FdIsReadableExactlyWhileAMadIsQueued) {
  StartFabric();
  int fd = OpenPort();
  long mask[16 / sizeof(long)] = {1L << kGet};
  int agent = umad_register(fd, kClassPerf, 1, 0, mask);
  ASSERT_GE(agent, 0);
  int pfd_fd = umad_get_fd(fd);
  struct pollfd pfd = {pfd_fd, POLLIN, 0};
  EXPECT_EQ(poll(&pfd, 1, 0), 0);
  EXPECT_EQ(umad_poll(fd, 50), -ETIMEDOUT);

  fabric_->Inject(*fabric_->last_handle(), MakeMad(kClassPerf, 1, kGet, 1), From(3, 1));
  fabric_->Inject(*fabric_->last_handle(), MakeMad(kClassPerf, 1, kGet, 2), From(3, 1));
  ASSERT_EQ(poll(&pfd, 1, 2000), 1);
  EXPECT_TRUE(pfd.revents & POLLIN);
  EXPECT_EQ(umad_poll(fd, 0), 0);
  Umad got;
  int len = 256;
  ASSERT_EQ(umad_recv(fd, got.p(), &len, 0), agent);
  // The second may still be on its way on a loaded machine: readable as soon as it is queued.
  EXPECT_EQ(poll(&pfd, 1, 2000), 1);
  len = 256;
  ASSERT_EQ(umad_recv(fd, got.p(), &len, 0), agent);
  EXPECT_EQ(poll(&pfd, 1, 0), 0);  // drained
  len = 256;
  EXPECT_EQ(umad_recv(fd, got.p(), &len, 0), -EAGAIN);
}

// A blocking umad_recv on the direct link takes one message off the fabric's socket and leaves the
// rest there (one read each, as under ibsim), and the I/O thread keeps off the socket while a
// receiver is at it. What has arrived must still be there for a call that does not wait:
// umad_recv and umad_poll with timeout 0 take in everything that has arrived, as the kernel would
// have queued it, even when the first message is one nobody takes.
TEST_P(UmadLibraryTest, WhatArrivedWithTheFirstIsThereForATimeoutZeroCall) {
  StartFabric();
  int fd = OpenPort();
  long mask[16 / sizeof(long)] = {1L << kGet};
  int agent = umad_register(fd, kClassPerf, 1, 0, mask);
  ASSERT_GE(agent, 0);
  const uint32_t handle = *fabric_->last_handle();
  Umad got;
  int len = 256;
  // A first MAD through a blocking call, so that the next ones arrive while a receiver holds
  // the socket, not the I/O thread.
  fabric_->Inject(handle, MakeMad(kClassPerf, 1, kGet, 1), From(3, 1));
  ASSERT_EQ(umad_recv(fd, got.p(), &len, 2000), agent);
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    fabric_->Inject(handle, MakeMad(kClassPerf, 1, kGet, 2), From(3, 1));
    fabric_->Inject(handle, MakeMad(kClassCc, 2, kGet, 0x99), From(3, 1));  // no agent: dropped
    fabric_->Inject(handle, MakeMad(kClassPerf, 1, kGet, 3), From(3, 1));
    fabric_->Inject(handle, MakeMad(kClassPerf, 1, kGet, 4), From(3, 1));
  });
  len = 256;
  ASSERT_EQ(umad_recv(fd, got.p(), &len, 2000), agent);
  EXPECT_EQ(TidOf(got.mad()), 2u);
  later.join();
  // All of them are on the socket: 2 ms was too short now and then under the sanitizers over
  // ZeroMQ (2 of 60 runs); 5 ms stays well under the 10 ms after which the library's I/O thread
  // would take them in itself (kReceiverCheck), which would test another path.
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(umad_poll(fd, 0), 0);
  len = 256;
  ASSERT_EQ(umad_recv(fd, got.p(), &len, 0), agent);
  EXPECT_EQ(TidOf(got.mad()), 3u);
  struct pollfd pfd = {umad_get_fd(fd), POLLIN, 0};
  EXPECT_EQ(poll(&pfd, 1, 0), 1);  // the fourth is queued
  len = 256;
  ASSERT_EQ(umad_recv(fd, got.p(), &len, 0), agent);
  EXPECT_EQ(TidOf(got.mad()), 4u);
  EXPECT_EQ(poll(&pfd, 1, 0), 0);
  len = 256;
  EXPECT_EQ(umad_recv(fd, got.p(), &len, 0), -EAGAIN);
  EXPECT_EQ(umad_poll(fd, 0), -ETIMEDOUT);
}

TEST_P(UmadLibraryTest, SmallBufferGetsEnospcAndTheMadStaysQueued) {
  StartFabric();
  int fd = OpenPort();
  long mask[16 / sizeof(long)] = {1L << kGet};
  int agent = umad_register(fd, kClassPerf, 1, 0, mask);
  // A first MAD taken by a blocking call: on the direct link, the next one (arriving within
  // kReceiverCheck) is then taken off the socket by the receiving thread itself, the path that
  // does not signal the umad file on the way.
  fabric_->Inject(*fabric_->last_handle(), MakeMad(kClassPerf, 1, kGet, 0x54), From(3, 1));
  Umad got;
  int len = 256;
  ASSERT_EQ(umad_recv(fd, got.p(), &len, 2000), agent);
  fabric_->Inject(*fabric_->last_handle(), MakeMad(kClassPerf, 1, kGet, 0x55), From(3, 1));
  len = 100;
  EXPECT_EQ(umad_recv(fd, got.p(), &len, 2000), -ENOSPC);
  EXPECT_EQ(errno, ENOSPC);
  EXPECT_EQ(len, 256);
  EXPECT_EQ(TidOf(got.mad()), 0x55u);  // header and the part that fits
  struct pollfd pfd = {umad_get_fd(fd), POLLIN, 0};
  EXPECT_EQ(poll(&pfd, 1, 0), 1);  // still queued, so still readable
  ASSERT_EQ(umad_recv(fd, got.p(), &len, 0), agent);
  EXPECT_EQ(len, 256);
}

TEST_P(UmadLibraryTest, AgentRegistrationRules) {
  StartFabric();
  int fd = OpenPort();
  EXPECT_EQ(umad_register(fd, kClassSmi, 1, 0, nullptr), 0);  // lowest free id first
  EXPECT_EQ(umad_register(fd, kClassSmiDr, 1, 0, nullptr), 1);
  EXPECT_EQ(umad_unregister(fd, 0), 0);
  EXPECT_EQ(umad_register(fd, kClassSa, 2, 1, nullptr), 0);
  EXPECT_EQ(umad_unregister(fd, 17), -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(umad_register(fd, kClassSa, 9, 0, nullptr), -EPERM);   // class version >= 8
  EXPECT_EQ(umad_register(fd, kClassSmi, 1, 1, nullptr), -EPERM);  // RMPP for an SMP class
  EXPECT_EQ(umad_register(fd + 1000, kClassSa, 2, 0, nullptr), -EPERM);
  uint8_t oui[3] = {0x00, 0x14, 0x05};
  EXPECT_EQ(umad_register_oui(fd, 0x09, 0, oui, nullptr), -EINVAL);  // not vendor range 2
  EXPECT_EQ(umad_register_oui(fd, 0x30, 0, oui, nullptr), 2);

  umad_reg_attr attr{};
  uint32_t id = 99;
  attr.mgmt_class = 0x31;  // vendor range 2 without an OUI
  attr.mgmt_class_version = 1;
  EXPECT_EQ(umad_register2(fd, &attr, &id), EINVAL);
  attr.mgmt_class = kClassCc;
  attr.mgmt_class_version = 2;
  attr.flags = 0x10;
  EXPECT_EQ(umad_register2(fd, &attr, &id), EINVAL);
  EXPECT_EQ(attr.flags, static_cast<uint32_t>(UMAD_USER_RMPP));
  attr.flags = 0;
  EXPECT_EQ(umad_register2(fd, &attr, &id), 0);
  EXPECT_EQ(id, 3u);
  for (int i = 4; i < 32; ++i) EXPECT_EQ(umad_register(fd, kClassCc, 2, 0, nullptr), i);
  EXPECT_EQ(umad_register(fd, kClassCc, 2, 0, nullptr), -EPERM);  // 32 agents per file

  // Sending: unknown agent, short MAD. Agent 1 is a plain SMP agent, agent 0 does RMPP for the
  // SA class: it sends nothing else, and more than one MAD only with RMPP Active.
  Umad req(MakeMad(kClassSmiDr, 1, kGet, 1));
  EXPECT_EQ(umad_send(fd, 1, req.p(), 256, 0, 0), 0);
  EXPECT_EQ(umad_send(fd, 17 + 40, req.p(), 256, 0, 0), -EIO);
  EXPECT_EQ(umad_send(fd, 1, req.p(), 20, 0, 0), -EIO);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(umad_send(fd, 0, req.p(), 256, 0, 0), -EIO);
  EXPECT_EQ(errno, EINVAL);
  std::vector<uint8_t> big(umad_size() + 600, 0);
  Mad sa = MakeMad(kClassSa, 2, kGet, 2);
  std::memcpy(big.data() + umad_size(), sa.data(), sa.size());
  EXPECT_EQ(umad_send(fd, 0, big.data(), 600, 0, 0), -EIO);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(umad_send(fd, 0, big.data(), 256, 0, 0), 0);
}

TEST_P(UmadLibraryTest, RequestNeverHangsWhenTheFabricDies) {
  StartFabric();
  int fd = OpenPort();
  int agent = umad_register(fd, kClassSmiDr, 1, 0, nullptr);
  fabric_.reset();  // the fabric is gone
  Umad req(MakeMad(kClassSmiDr, 1, kGet, 0x4242));
  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(umad_send(fd, agent, req.p(), 256, 100, 1), 0);
  Umad got;
  int len = 256;
  EXPECT_EQ(umad_recv(fd, got.p(), &len, -1), agent);
  EXPECT_EQ(umad_status(got.p()), ETIMEDOUT);
  EXPECT_EQ(TidOf(got.mad()) & 0xFFFFFFFF, 0x4242u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1000ms);
}

TEST_P(UmadLibraryTest, BlockingReceiverAndConcurrentSenders) {
  int fd, agent;
  ASSERT_TRUE(OpenAnsweredPerfAgent(&fd, &agent));
  constexpr int kThreads = 4, kPerThread = 50;
  std::atomic<int> ok{0}, bad{0};
  std::thread receiver([&] {
    Umad got;
    for (int i = 0; i < kThreads * kPerThread; ++i) {
      int len = 256;
      int r = umad_recv(fd, got.p(), &len, -1);
      if (r == agent && umad_status(got.p()) == 0)
        ++ok;
      else
        ++bad;
    }
  });
  std::vector<std::thread> senders;
  for (int t = 0; t < kThreads; ++t) {
    senders.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        Umad req(MakeMad(kClassPerf, 1, kGet, static_cast<uint64_t>(t * 1000 + i)));
        umad_set_addr(req.p(), 2, 1, 0, 0x80010000);
        if (umad_send(fd, agent, req.p(), 256, 2000, 3) != 0) ++bad;
      }
    });
  }
  for (auto& s : senders) s.join();
  receiver.join();
  EXPECT_EQ(ok, kThreads * kPerThread);
  EXPECT_EQ(bad, 0);
}

// OpenSM stops its receiving thread with pthread_cancel while it waits in umad_recv. The wait
// must end there without leaving a lock held or the thread counted as watching the fabric's
// socket: the next umad_recv on the file, from another thread, still gets its answer.
TEST_P(UmadLibraryTest, AReceiverCancelledWhileWaitingLeavesTheFileWorking) {
  int fd, agent;
  ASSERT_TRUE(OpenAnsweredPerfAgent(&fd, &agent));
  struct Waiter {
    int fd;
    std::atomic<bool> started{false};
    int result = 1;
  } w{fd};
  pthread_t t;
  ASSERT_EQ(pthread_create(
                &t, nullptr,
                [](void* arg) -> void* {
                  auto* w = static_cast<Waiter*>(arg);
                  Umad got;
                  int len = 256;
                  w->started = true;
                  w->result = umad_recv(w->fd, got.p(), &len, -1);  // only a cancel ends it
                  return nullptr;
                },
                &w),
            0);
  while (!w.started) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // into its poll
  ASSERT_EQ(pthread_cancel(t), 0);
  void* ret = nullptr;
  timespec limit;
  clock_gettime(CLOCK_REALTIME, &limit);
  limit.tv_sec += 5;
  Umad req(MakeMad(kClassPerf, 1, kGet, 0x77));
  umad_set_addr(req.p(), 2, 1, 0, 0x80010000);
  if (pthread_timedjoin_np(t, &ret, &limit) != 0) {
    ADD_FAILURE() << "the cancel did not end the wait";
    // An answer ends it, so that the thread is gone before the file and the library are.
    umad_send(fd, agent, req.p(), 256, 2000, 0);
    pthread_join(t, &ret);
    return;
  }
  EXPECT_EQ(ret, PTHREAD_CANCELED);
  EXPECT_EQ(w.result, 1);  // it never returned

  // Nobody watches the fabric's socket now but the I/O thread (on the direct socket, once the
  // cancelled receiver is no longer counted): each answer must come to the umad file's
  // descriptor without a receiving thread taking it in. Twice: the first may be read by a wait
  // of the I/O thread's that began before the receiver was counted.
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE(i);
    ASSERT_EQ(umad_send(fd, agent, req.p(), 256, 2000, 0), 0);
    pollfd pfd = {umad_get_fd(fd), POLLIN, 0};
    ASSERT_EQ(poll(&pfd, 1, 2000), 1) << "the answer did not reach the umad file";
    Umad got;
    int len = 256;
    EXPECT_EQ(umad_recv(fd, got.p(), &len, 0), agent);
    EXPECT_EQ(umad_status(got.p()), 0);
  }
}

TEST_P(UmadLibraryTest, IssmFileAssertsIsSmWhileOpen) {
  StartFabric();
  int fd = OpenPort();
  auto handle = *fabric_->last_handle();
  char path[256];
  ASSERT_EQ(umad_get_issm_path(nullptr, 1, path, sizeof path), 0);
  struct stat st;
  ASSERT_EQ(stat(path, &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(std::string(path).rfind(dir_, 0), 0u);

  auto last_issm = [&](const std::vector<ToFabric>& all) -> std::optional<bool> {
    std::optional<bool> v;
    for (const auto& m : all)
      if (m.has_issm() && m.issm().handle() == handle) v = m.issm().is_sm();
    return v;
  };
  EXPECT_TRUE(fabric_->WaitFor([&](const auto& all) { return last_issm(all) == true; }));
  // OpenSM holds the path open as long as it is the SM; closing it clears IsSM.
  int issm_fd = open(path, O_NONBLOCK);
  ASSERT_GE(issm_fd, 0);
  close(issm_fd);  // the open and the close arrive in order: the count goes 1, then 0
  EXPECT_TRUE(fabric_->WaitFor([&](const auto& all) { return last_issm(all) == false; }));
  issm_fd = open(path, O_NONBLOCK);
  EXPECT_TRUE(fabric_->WaitFor([&](const auto& all) { return last_issm(all) == true; }));
  umad_close_port(fd);
  EXPECT_TRUE(fabric_->WaitFor([&](const auto& all) { return last_issm(all) == false; }));
  close(issm_fd);
  umad_done();
  EXPECT_NE(stat(path, &st), 0);  // removed
}

TEST_P(UmadLibraryTest, IssmRequestedBeforeOpenAppliesToPortsOpenedLater) {
  StartFabric();
  char path[256];
  ASSERT_EQ(umad_get_issm_path("ibemu0", 0, path, sizeof path), 0);
  int fd = OpenPort();
  auto handle = *fabric_->last_handle();
  auto is_sm = [&](bool want) {
    return fabric_->WaitFor([&](const std::vector<ToFabric>& all) {
      std::optional<bool> v;
      for (const auto& m : all)
        if (m.has_issm() && m.issm().handle() == handle) v = m.issm().is_sm();
      return v == want;
    });
  };
  EXPECT_TRUE(is_sm(true));
  umad_close_port(fd);
  EXPECT_TRUE(is_sm(false));
}

// The fabric that comes back is a build from before MAD frames: until its Attached says otherwise,
// the library sends Send messages (the fake fabric fails the test on a frame it did not agree to).
TEST_P(UmadLibraryTest, AttachesAgainWhenTheFabricComesBack) {
  StartFabric();
  int fd = OpenPort();
  int agent = umad_register(fd, kClassPerf, 1, 0, nullptr);
  auto handle = *fabric_->last_handle();
  fabric_.reset();
  StartFabric(true, false);
  ASSERT_TRUE(fabric_->WaitFor(
      [&](const std::vector<ToFabric>& all) {
        for (const auto& m : all)
          if (m.has_attach() && m.attach().handle() == handle) return true;
        return false;
      },
      5s));
  // And the port works through the new fabric.
  fabric_->OnSend([&](const umad::Send& s) { fabric_->Respond(s, From(2, 1)); });
  Umad req(MakeMad(kClassPerf, 1, kGet, 0x31));
  Umad got;
  EXPECT_EQ(RoundTrip(fd, agent, req, 256, 1000, 0, &got), agent);
  EXPECT_EQ(umad_status(got.p()), 0);
  EXPECT_EQ(fabric_->frames_received(), 0u);
}

// ---------------------------------------------------------------------------------------------
// RMPP (IBA 13.6) for agents registered with rmpp_version 1, as the kernel's ib_mad does it. The
// expected numbers follow from the SA layout: every segment repeats the 56 header bytes and
// carries 200 data bytes; PayloadLength counts 220 bytes (all after the RMPP header) per segment.

constexpr uint8_t kGetTable = 0x12, kGetTableResp = 0x92;
constexpr uint8_t kRmppData = 1, kRmppAck = 2, kRmppAbort = 4;
constexpr uint8_t kActive = 1, kFirst = 2, kLast = 4;

uint32_t Be32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}
void PutBe32(uint8_t* p, uint32_t v) {
  for (int i = 3; i >= 0; --i, v >>= 8) p[i] = static_cast<uint8_t>(v);
}

// MAD bytes 24..35.
struct RmppFields {
  uint8_t version, type, flags, status;
  uint32_t seg, paylen_newwin;
};
RmppFields RmppOf(const uint8_t* mad) {
  return {mad[24], mad[25],        static_cast<uint8_t>(mad[26] & 7),
          mad[27], Be32(mad + 28), Be32(mad + 32)};
}
RmppFields RmppOf(const std::string& mad) {
  return RmppOf(reinterpret_cast<const uint8_t*>(mad.data()));
}
void SetRmpp(uint8_t* mad, uint8_t type, uint8_t flags, uint32_t seg, uint32_t paylen_newwin,
             uint8_t status = 0) {
  mad[24] = 1;
  mad[25] = type;
  mad[26] = flags;
  mad[27] = status;
  PutBe32(mad + 28, seg);
  PutBe32(mad + 32, paylen_newwin);
}

// An SA message of `len` bytes: MAD and SA headers (AttributeOffset `offset` 8-byte words), then
// data bytes that differ from position to position.
Mad SaMessage(size_t len, uint8_t method, uint64_t tid, uint8_t offset = 14) {
  Mad m = MakeMad(kClassSa, 2, method, tid, 0x0011);
  m.resize(len, 0);
  m[45] = offset;
  for (size_t i = 56; i < len; ++i) m[i] = static_cast<uint8_t>(i * 7 + 1);
  return m;
}

// The DATA segments an SA sends for `msg`, cut as the kernel cuts them.
std::vector<Mad> SaSegments(const Mad& msg) {
  const size_t data = msg.size() - 56;
  const size_t count = std::max<size_t>(1, (data + 199) / 200);
  const auto pad = static_cast<uint32_t>(count * 200 - data);
  std::vector<Mad> segs;
  for (size_t n = 1; n <= count; ++n) {
    Mad s(256, 0);
    std::copy(msg.begin(), msg.begin() + 56, s.begin());
    auto flags = static_cast<uint8_t>(kActive | (n == 1 ? kFirst : 0) | (n == count ? kLast : 0));
    uint32_t paylen = n == count ? 220 - pad
                      : n == 1   ? static_cast<uint32_t>(count) * 220 - pad
                                 : 0;
    SetRmpp(s.data(), kRmppData, flags, static_cast<uint32_t>(n), paylen);
    const size_t off = 56 + (n - 1) * 200;
    std::copy(msg.begin() + static_cast<std::ptrdiff_t>(off),
              msg.begin() + static_cast<std::ptrdiff_t>(std::min(msg.size(), off + 200)),
              s.begin() + 56);
    segs.push_back(s);
  }
  return segs;
}

class UmadRmppTest : public UmadLibraryTest {
 protected:
  // An SA as OpenSM registers it: RMPP, Get and GetTable taken.
  void OpenSa() {
    StartFabric();
    fd_ = OpenPort();
    long mask[16 / sizeof(long)] = {};
    mask[0] = 1L << kGet | 1L << kGetTable;
    sa_ = umad_register(fd_, kClassSa, 2, 1, mask);
    ASSERT_GE(sa_, 0);
    handle_ = *fabric_->last_handle();
  }
  // The SA answers with `msg` (RMPP Active set, as OpenSM does) to LID 9.
  void SendResponse(Mad msg, int timeout_ms, int retries) {
    msg[26] = kActive;
    std::vector<uint8_t> buf(umad_size() + msg.size());
    std::memcpy(buf.data() + umad_size(), msg.data(), msg.size());
    umad_set_addr(buf.data(), 9, 1, 0, 0x80010000);
    ASSERT_EQ(umad_send(fd_, sa_, buf.data(), static_cast<int>(msg.size()), timeout_ms, retries),
              0);
  }
  // The requester at LID 9 acknowledges: the segment's header, R bit flipped.
  void Ack(const std::string& segment, uint32_t seg, uint32_t newwin, uint8_t type = kRmppAck,
           uint8_t status = 0) {
    Mad a(256, 0);
    std::copy(segment.begin(), segment.begin() + 56, a.begin());
    a[3] ^= 0x80;
    SetRmpp(a.data(), type, kActive, seg, newwin, status);
    fabric_->Inject(handle_, a, From(9, 1));
  }
  std::string Sent(size_t i) { return fabric_->Sends().at(i).mad(); }

  int fd_ = -1, sa_ = -1;
  uint32_t handle_ = 0;
};

TEST_P(UmadRmppTest, SendIsSegmentedAndPacedByTheReceiversWindow) {
  OpenSa();
  // A 632-byte GetTableResp: 576 data bytes, three segments, 24 bytes of padding.
  const uint64_t tid = 0x0000BEEF00000042ull;
  Mad msg = SaMessage(632, kGetTableResp, tid);
  SendResponse(msg, 0, 3);

  // The receiver's window starts at 1: the first segment goes out alone.
  ASSERT_TRUE(fabric_->WaitForSends(1));
  std::this_thread::sleep_for(100ms);
  ASSERT_EQ(fabric_->Sends().size(), 1u);
  const std::string s1 = Sent(0);
  ASSERT_EQ(s1.size(), 256u);
  EXPECT_EQ(fabric_->Sends()[0].addr().lid(), 9u);
  EXPECT_EQ(TidOf(s1), tid);  // a response keeps the requester's TID
  RmppFields r = RmppOf(s1);
  EXPECT_EQ(r.version, 1);
  EXPECT_EQ(r.type, kRmppData);
  EXPECT_EQ(r.flags, kActive | kFirst);
  EXPECT_EQ(r.seg, 1u);
  EXPECT_EQ(r.paylen_newwin, 3 * 220u - 24);                        // the whole message
  EXPECT_EQ(std::memcmp(s1.data() + 36, msg.data() + 36, 220), 0);  // SA header, data 0..199

  // An ACK of segment 1 that opens the window to 2 lets exactly segment 2 go.
  Ack(s1, 1, 2);
  ASSERT_TRUE(fabric_->WaitForSends(2));
  std::this_thread::sleep_for(100ms);
  ASSERT_EQ(fabric_->Sends().size(), 2u);
  const std::string s2 = Sent(1);
  r = RmppOf(s2);
  EXPECT_EQ(r.type, kRmppData);
  EXPECT_EQ(r.flags, kActive);
  EXPECT_EQ(r.seg, 2u);
  EXPECT_EQ(r.paylen_newwin, 0u);
  EXPECT_EQ(std::memcmp(s2.data(), s1.data(), 24), 0);            // headers repeated
  EXPECT_EQ(std::memcmp(s2.data() + 36, s1.data() + 36, 20), 0);  // SA header too
  EXPECT_EQ(std::memcmp(s2.data() + 56, msg.data() + 256, 200), 0);

  Ack(s2, 2, 5);
  ASSERT_TRUE(fabric_->WaitForSends(3));
  const std::string s3 = Sent(2);
  r = RmppOf(s3);
  EXPECT_EQ(r.flags, kActive | kLast);
  EXPECT_EQ(r.seg, 3u);
  EXPECT_EQ(r.paylen_newwin, 220u - 24);  // the last segment's share
  EXPECT_EQ(std::memcmp(s3.data() + 56, msg.data() + 456, 176), 0);
  EXPECT_TRUE(std::all_of(s3.begin() + 232, s3.end(), [](char c) { return c == 0; }));

  // The last ACK completes a response: nothing is reported, nothing sent again.
  Ack(s3, 3, 5);
  Umad got;
  int len = 256;
  EXPECT_EQ(umad_recv(fd_, got.p(), &len, 300), -ETIMEDOUT);
  EXPECT_EQ(fabric_->Sends().size(), 3u);
}

TEST_P(UmadRmppTest, LostAckMakesTheWindowGoAgain) {
  OpenSa();
  Mad msg = SaMessage(632, kGetTableResp, 0x43);
  SendResponse(msg, 150, 2);  // ACK timeout 150 ms
  ASSERT_TRUE(fabric_->WaitForSends(1));
  Ack(Sent(0), 1, 3);
  ASSERT_TRUE(fabric_->WaitForSends(3));
  auto start = std::chrono::steady_clock::now();
  // The ACK of segments 2 and 3 is lost: both go again, from the last segment acknowledged.
  ASSERT_TRUE(fabric_->WaitForSends(5, 2s));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 100ms);
  EXPECT_EQ(RmppOf(Sent(3)).seg, 2u);
  EXPECT_EQ(RmppOf(Sent(4)).seg, 3u);
  EXPECT_EQ(Sent(3), Sent(1));
  EXPECT_EQ(Sent(4), Sent(2));
  Ack(Sent(4), 3, 3);
  std::this_thread::sleep_for(100ms);
  const size_t sent = fabric_->Sends().size();
  // Complete: no further retransmission and no timeout report.
  Umad got;
  int len = 256;
  EXPECT_EQ(umad_recv(fd_, got.p(), &len, 600), -ETIMEDOUT);
  EXPECT_EQ(fabric_->Sends().size(), sent);
  for (size_t i = 3; i < sent; ++i) EXPECT_NE(RmppOf(Sent(i)).seg, 1u);
}

TEST_P(UmadRmppTest, UnacknowledgedSendComesBackTimedOut) {
  OpenSa();
  const uint64_t tid = 0x0000BEEF00000044ull;
  auto start = std::chrono::steady_clock::now();
  SendResponse(SaMessage(632, kGetTableResp, tid), 100, 2);
  Umad got;
  int len = 256;
  ASSERT_EQ(umad_recv(fd_, got.p(), &len, 3000), sa_);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms - 5ms);  // ACK timeout * (retries + 1)
  EXPECT_EQ(umad_status(got.p()), ETIMEDOUT);
  EXPECT_EQ(len, 24);
  EXPECT_EQ(TidOf(got.mad()), tid);
  auto sends = fabric_->Sends();
  ASSERT_EQ(sends.size(), 3u);  // the first segment, twice again
  for (const auto& s : sends) EXPECT_EQ(RmppOf(s.mad()).seg, 1u);
}

TEST_P(UmadRmppTest, AbortFromTheReceiverEndsTheSendQuietly) {
  OpenSa();
  SendResponse(SaMessage(632, kGetTableResp, 0x45), 100, 5);
  ASSERT_TRUE(fabric_->WaitForSends(1));
  Ack(Sent(0), 0, 0, kRmppAbort, 118);  // T2L
  std::this_thread::sleep_for(50ms);
  const size_t sent = fabric_->Sends().size();
  Umad got;
  int len = 256;
  EXPECT_EQ(umad_recv(fd_, got.p(), &len, 700), -ETIMEDOUT);  // ib_umad reports only timeouts
  EXPECT_EQ(fabric_->Sends().size(), sent);
  EXPECT_LE(sent, 2u);
}

// The requesting side: saquery's agent (SA class, RMPP, no methods).
class UmadRmppClientTest : public UmadLibraryTest {
 protected:
  void SetUp() override {
    UmadLibraryTest::SetUp();
    StartFabric();
    fd_ = OpenPort();
    handle_ = *fabric_->last_handle();
  }
  // Sends a GetTable to the SA at LID 1 and returns the TID it went out with.
  uint64_t Ask(int agent, uint64_t tid) {
    const size_t before = fabric_->Sends().size();
    Umad req(MakeMad(kClassSa, 2, kGetTable, tid));
    umad_set_addr(req.p(), 1, 1, 0, 0x80010000);
    EXPECT_EQ(umad_send(fd_, agent, req.p(), 256, 2000, 0), 0);
    EXPECT_TRUE(fabric_->WaitForSends(before + 1));
    return TidOf(fabric_->Sends().at(before).mad());
  }
  void FromSa(const Mad& mad) { fabric_->Inject(handle_, mad, From(1, 1)); }
  std::string Sent(size_t i) { return fabric_->Sends().at(i).mad(); }

  int fd_ = -1;
  uint32_t handle_ = 0;
};

TEST_P(UmadRmppClientTest, SegmentsAreAcknowledgedAndReassembledInOrder) {
  int sa = umad_register(fd_, kClassSa, 2, 1, nullptr);
  ASSERT_GE(sa, 0);
  const uint64_t tid = Ask(sa, 0x77);
  Mad msg = SaMessage(632, kGetTableResp, tid);
  auto segs = SaSegments(msg);
  ASSERT_EQ(segs.size(), 3u);

  // The first segment draws an ACK opening a window of 64 more, to the SA's LID and QP.
  FromSa(segs[0]);
  ASSERT_TRUE(fabric_->WaitForSends(2));
  const auto ack = fabric_->Sends()[1];
  RmppFields r = RmppOf(ack.mad());
  EXPECT_EQ(r.type, kRmppAck);
  EXPECT_EQ(r.flags, kActive);
  EXPECT_EQ(r.seg, 1u);
  EXPECT_EQ(r.paylen_newwin, 65u);
  EXPECT_EQ(static_cast<uint8_t>(ack.mad()[3]), kGetTable);  // the R bit flipped
  EXPECT_EQ(TidOf(ack.mad()), tid);
  EXPECT_EQ(ack.addr().lid(), 1u);
  EXPECT_EQ(ack.addr().qpn(), 1u);
  EXPECT_EQ(ack.addr().qkey(), 0x80010000u);

  // Segment 3 before 2, and twice: held, no ACK, nothing delivered.
  FromSa(segs[2]);
  FromSa(segs[2]);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(fabric_->Sends().size(), 2u);
  Umad got;
  int len = 256;
  EXPECT_EQ(umad_recv(fd_, got.p(), &len, 0), -EAGAIN);

  // Segment 2 fills the gap: the last segment is in, ACKed, and the message delivered whole.
  FromSa(segs[1]);
  ASSERT_TRUE(fabric_->WaitForSends(3));
  r = RmppOf(Sent(2));
  EXPECT_EQ(r.type, kRmppAck);
  EXPECT_EQ(r.seg, 3u);
  len = 256;
  ASSERT_EQ(umad_recv(fd_, got.p(), &len, 2000), -ENOSPC);  // as libibmad's sa_query expects
  EXPECT_EQ(len, 632);
  std::vector<uint8_t> whole(umad_size() + static_cast<size_t>(len));
  ASSERT_EQ(umad_recv(fd_, whole.data(), &len, 0), sa);
  EXPECT_EQ(len, 632);
  const auto* hdr = reinterpret_cast<const ib_user_mad*>(whole.data());
  EXPECT_EQ(hdr->status, 0u);
  EXPECT_EQ(hdr->length, umad_size() + 632);
  EXPECT_EQ(be16toh(hdr->addr.lid), 1);
  const uint8_t* mad = whole.data() + umad_size();
  EXPECT_EQ(std::memcmp(mad, segs[0].data(), 36), 0);  // the first segment's headers
  EXPECT_EQ(std::memcmp(mad + 36, msg.data() + 36, 632 - 36), 0);

  // A repeated last segment draws the last ACK again; nothing more is delivered.
  FromSa(segs[2]);
  ASSERT_TRUE(fabric_->WaitForSends(4));
  EXPECT_EQ(RmppOf(Sent(3)).seg, 3u);
  len = 256;
  EXPECT_EQ(umad_recv(fd_, got.p(), &len, 200), -ETIMEDOUT);

  // A segment 2 claiming to be the first is refused with ABORT (BadSeg).
  Mad bad = segs[1];
  bad[26] |= kFirst;
  FromSa(bad);
  ASSERT_TRUE(fabric_->WaitForSends(5));
  r = RmppOf(Sent(4));
  EXPECT_EQ(r.type, kRmppAbort);
  EXPECT_EQ(r.status, 120);
}

TEST_P(UmadRmppClientTest, SingleSegmentIsCutToItsPayloadLength) {
  int sa = umad_register(fd_, kClassSa, 2, 1, nullptr);
  ASSERT_GE(sa, 0);
  // Two 64-byte records: PayloadLength 20 + 128, so the message is 184 bytes and sa_query counts
  // (184 - 56) / 64 = 2 records, not (256 - 56) / 64 = 3.
  uint64_t tid = Ask(sa, 0x80);
  auto segs = SaSegments(SaMessage(56 + 128, kGetTableResp, tid, 8));
  ASSERT_EQ(segs.size(), 1u);
  EXPECT_EQ(RmppOf(segs[0].data()).flags, kActive | kFirst | kLast);
  EXPECT_EQ(RmppOf(segs[0].data()).paylen_newwin, 148u);
  FromSa(segs[0]);
  Umad got;
  int len = 256;
  ASSERT_EQ(umad_recv(fd_, got.p(), &len, 2000), sa);
  EXPECT_EQ(len, 184);
  EXPECT_EQ(got.hdr()->length, umad_size() + 184);
  ASSERT_TRUE(fabric_->WaitForSends(2));
  RmppFields r = RmppOf(Sent(1));
  EXPECT_EQ(r.type, kRmppAck);
  EXPECT_EQ(r.seg, 1u);
  EXPECT_EQ(r.paylen_newwin, 1u);

  // No records at all: one segment of padding, PayloadLength 20, 56 bytes delivered.
  tid = Ask(sa, 0x81);
  segs = SaSegments(SaMessage(56, kGetTableResp, tid, 0));
  EXPECT_EQ(RmppOf(segs[0].data()).paylen_newwin, 20u);
  FromSa(segs[0]);
  len = 256;
  ASSERT_EQ(umad_recv(fd_, got.p(), &len, 2000), sa);
  EXPECT_EQ(len, 56);
}

TEST_P(UmadRmppClientTest, WholeMessageGoesToTheAgentThatAsked) {
  int a = umad_register(fd_, kClassSa, 2, 1, nullptr);
  int b = umad_register(fd_, kClassSa, 2, 1, nullptr);
  int plain = umad_register(fd_, kClassSa, 2, 0, nullptr);  // no RMPP: segments pass untouched
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  ASSERT_GE(plain, 0);
  Ask(a, 0x91);
  const uint64_t tid_b = Ask(b, 0x92);
  const uint64_t tid_plain = Ask(plain, 0x93);
  ASSERT_EQ(fabric_->Sends().size(), 3u);

  Mad msg = SaMessage(400, kGetTableResp, tid_b);
  for (const Mad& s : SaSegments(msg)) FromSa(s);
  std::vector<uint8_t> whole(umad_size() + 400);
  int len = 400;
  ASSERT_EQ(umad_recv(fd_, whole.data(), &len, 2000), b);
  EXPECT_EQ(len, 400);
  EXPECT_EQ(std::memcmp(whole.data() + umad_size() + 36, msg.data() + 36, 400 - 36), 0);
  ASSERT_TRUE(fabric_->WaitForSends(5));  // the ACKs of segments 1 and 2

  auto one = SaSegments(SaMessage(120, kGetTableResp, tid_plain));
  FromSa(one[0]);
  Umad got;
  len = 256;
  ASSERT_EQ(umad_recv(fd_, got.p(), &len, 2000), plain);
  EXPECT_EQ(len, 256);  // the segment as it came
  EXPECT_EQ(RmppOf(got.mad()).flags, kActive | kFirst | kLast);
  // Nothing for `a`, and no ACK from an agent that does not do RMPP.
  len = 256;
  EXPECT_EQ(umad_recv(fd_, got.p(), &len, 200), -ETIMEDOUT);
  EXPECT_EQ(fabric_->Sends().size(), 5u);
}

// ---------------------------------------------------------------------------------------------
// An unmodified Debian binary (libibmad + our libibumad.so.3) against the fake fabric.

struct ProcessResult {
  int status = -1;
  std::string out;
  Ms took{0};
};

ProcessResult RunWithOurLibrary(std::vector<std::string> argv, const std::string& run_dir) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string v = *e;
    if (v.rfind("LD_LIBRARY_PATH=", 0) == 0 || v.rfind("IBEMU_", 0) == 0) continue;
    env.push_back(v);
  }
  env.push_back(std::string("LD_LIBRARY_PATH=") + IBEMU_UMAD_SO_DIR);
  env.push_back("IBEMU_RUN_DIR=" + run_dir);
  env.push_back("IBEMU_FABRIC=t");
  env.push_back("IBEMU_UMAD_PORT=H1:1");
  std::vector<char*> envp, args;
  for (auto& v : env) envp.push_back(v.data());
  envp.push_back(nullptr);
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);

  int pipefd[2];
  EXPECT_EQ(pipe(pipefd), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipefd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipefd[1], 2);
  posix_spawn_file_actions_addclose(&actions, pipefd[0]);
  pid_t pid;
  ProcessResult res;
  auto start = std::chrono::steady_clock::now();
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(pipefd[1]);
  if (rc != 0) {
    close(pipefd[0]);
    return res;
  }
  char buf[4096];
  for (;;) {
    struct pollfd p = {pipefd[0], POLLIN, 0};
    if (poll(&p, 1, 20000) <= 0) {  // a hung tool is a failure, not a hung test
      kill(pid, SIGKILL);
      break;
    }
    ssize_t n = read(pipefd[0], buf, sizeof buf);
    if (n <= 0) break;
    res.out.append(buf, static_cast<size_t>(n));
  }
  close(pipefd[0]);
  waitpid(pid, &res.status, 0);
  res.took = std::chrono::duration_cast<Ms>(std::chrono::steady_clock::now() - start);
  return res;
}

// A sanitizer-built library cannot be loaded into a binary that was not built with the sanitizer.
bool CanRunDebianTools() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return false;
#else
  return access("/usr/sbin/smpquery", X_OK) == 0;
#endif
}

// NodeInfo (IBA 14.2.5.3) at the SMP data offset.
void FillNodeInfo(Mad& mad) {
  uint8_t* d = mad.data() + 64;
  d[0] = 1;  // BaseVersion
  d[1] = 1;  // ClassVersion
  d[2] = 1;  // NodeType: CA
  d[3] = 2;  // NumPorts
  for (int i = 0; i < 8; ++i) {
    d[4 + i] = static_cast<uint8_t>(kNodeGuid >> (56 - 8 * i));
    d[12 + i] = static_cast<uint8_t>(kNodeGuid >> (56 - 8 * i));
    d[20 + i] = static_cast<uint8_t>(kPortGuid >> (56 - 8 * i));
  }
  d[28] = 0;
  d[29] = 64;  // PartitionCap
  d[36] = 1;   // LocalPortNum
}

TEST_P(UmadLibraryTest, SmpqueryRunsOverTheLibrary) {
  if (!CanRunDebianTools()) GTEST_SKIP() << "no infiniband-diags, or a sanitizer build";
  StartFabric();
  fabric_->OnSend([&](const umad::Send& s) {
    Mad mad(s.mad().begin(), s.mad().end());
    if (mad[1] != kClassSmiDr || mad[3] != kGet || mad[17] != 0x11) return;
    mad[3] = kGetResp;
    mad[4] |= 0x80;  // D bit: the SMP is returning
    FillNodeInfo(mad);
    fabric_->Inject(s.handle(), mad, From(0xFFFF, 0));
  });
  auto res = RunWithOurLibrary({"/usr/sbin/smpquery", "-D", "nodeinfo", "0"}, dir_);
  EXPECT_TRUE(WIFEXITED(res.status) && WEXITSTATUS(res.status) == 0) << res.out;
  EXPECT_NE(res.out.find("PortGuid:"), std::string::npos) << res.out;
  EXPECT_NE(res.out.find("0x0002c90300a1b2c0"), std::string::npos) << res.out;
  EXPECT_NE(res.out.find("Channel Adapter"), std::string::npos) << res.out;
}

TEST_P(UmadLibraryTest, SmpqueryFailsCleanlyWhenNobodyAnswers) {
  if (!CanRunDebianTools()) GTEST_SKIP() << "no infiniband-diags, or a sanitizer build";
  StartFabric();  // answers Query/Attach but no SMP
  auto res = RunWithOurLibrary({"/usr/sbin/smpquery", "-t", "100", "-D", "nodeinfo", "0"}, dir_);
  EXPECT_TRUE(WIFEXITED(res.status)) << res.out;
  EXPECT_NE(WEXITSTATUS(res.status), 0) << res.out;
  EXPECT_NE(res.out.find("node info query failed"), std::string::npos) << res.out;
  // libibmad waits in umad_recv as long as the send's timeout, so it usually gives up on its
  // own (as with the kernel, whose timer fires a little later than the poll) after one send.
  EXPECT_GE(fabric_->Sends().size(), 1u);
  EXPECT_LT(res.took, 5000ms);
}

std::string LinkName(const ::testing::TestParamInfo<bool>& info) {
  return info.param ? "Direct" : "Zmq";
}
INSTANTIATE_TEST_SUITE_P(Links, UmadLibraryTest, ::testing::Bool(), LinkName);
INSTANTIATE_TEST_SUITE_P(Links, UmadRmppTest, ::testing::Bool(), LinkName);
INSTANTIATE_TEST_SUITE_P(Links, UmadRmppClientTest, ::testing::Bool(), LinkName);

}  // namespace
}  // namespace ibemu::umad
