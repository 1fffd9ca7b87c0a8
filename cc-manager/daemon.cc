#include "cc-manager/daemon.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

// Before Boost.Asio: 1.74's awaitable.hpp uses std::exchange without including <utility>.
#include <utility>
// clang-format off: the order above matters
#include <boost/asio.hpp>
// clang-format on
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <zmq.hpp>

#include "cc-manager/cc_manager.h"
#include "common/transport/run_dir.h"

namespace ibemu::ccmgr {
namespace asio = boost::asio;

namespace {

void Log(const std::string& line);

// Runs one handler's work; what it throws (a MAD port that failed, a file that cannot be
// written) is logged and the daemon goes on: one bad moment must not end it.
template <typename F>
void Guarded(const char* what, F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    Log(std::string(what) + ": " + e.what());
  }
}

void Log(const std::string& line) {
  std::time_t t = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%H:%M:%S", std::localtime(&t));
  std::printf("%s ibemu-ccmgr: %s\n", stamp, line.c_str());
  std::fflush(stdout);
}

}  // namespace

std::string ControlEndpoint(const std::string& name, std::string* error) {
  if (std::string e = transport::CheckFabricName(name); !e.empty()) {
    *error = "--name: " + e;
    return "";
  }
  transport::RunDir dir = transport::ResolveRunDir();
  return transport::IpcEndpoint(dir.path + "/ccmgr-" + name + ".sock", error);
}

int RunDaemon(const DaemonOptions& o) {
  CcPolicy policy;
  try {
    if (!o.policy_file.empty()) policy = LoadPolicy(o.policy_file);
  } catch (const PolicyError& e) {
    std::fprintf(stderr, "ibemu-ccmgr: error: %s\n", e.what());
    return 2;
  }
  if (std::string e = transport::PrepareRunDir(transport::ResolveRunDir()); !e.empty()) {
    std::fprintf(stderr, "ibemu-ccmgr: error: %s\n", e.c_str());
    return 2;
  }
  std::string error;
  std::string endpoint = ControlEndpoint(o.name, &error);
  if (endpoint.empty()) {
    std::fprintf(stderr, "ibemu-ccmgr: error: %s\n", error.c_str());
    return 2;
  }
  // One daemon per name: the lock is held for the daemon's life, whatever it is busy with (a
  // daemon in a long sweep would miss a status request and lose its socket to a second one).
  std::string lock_path = transport::ResolveRunDir().path + "/ccmgr-" + o.name + ".lock";
  int lock_fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd < 0) {
    std::fprintf(stderr, "ibemu-ccmgr: error: %s: %s\n", lock_path.c_str(), std::strerror(errno));
    return 2;
  }
  if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    std::fprintf(stderr,
                 "ibemu-ccmgr: error: an ibemu-ccmgr named '%s' is already running (%s); use "
                 "--name\n",
                 o.name.c_str(), endpoint.c_str());
    close(lock_fd);
    return 2;
  }
  struct CloseOnExit {
    int fd;
    ~CloseOnExit() { close(fd); }
  } lock{lock_fd};
  zmq::context_t ctx;
  try {
    fabricmgr::MadPort port(o.port_guid, CcManagerAgents());
    CcManager* manager_ptr = nullptr;  // the client comes first; traps go to the manager
    fabricmgr::SmpClient client(port, [&](const fabricmgr::ReceivedMad& m) {
      if (manager_ptr) manager_ptr->OnUnsolicited(m);
    });
    client.timeout_ms = o.timeout_ms;
    client.retries = o.retries;
    CongestionRecord record(o.export_dir);
    CcManager manager(client, policy, record, Log);
    manager_ptr = &manager;
    manager.set_port_description(port.ca_name() + " port " + std::to_string(port.port_num()));
    Log("on " + port.ca_name() + " port " + std::to_string(port.port_num()) + ", policy " +
        (policy.file.empty() ? "(defaults)" : policy.file) + ", control " + endpoint +
        (o.export_dir.empty() ? "" : ", export " + o.export_dir));

    zmq::socket_t rep(ctx, zmq::socket_type::rep);
    rep.set(zmq::sockopt::linger, 0);
    rep.bind(endpoint);

    asio::io_context io;
    asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code&, int) { io.stop(); });

    // The CLI's requests. ZMQ_FD signals edges, not levels: drain everything the socket holds
    // each time it, or anything else, wakes us.
    auto drain = [&] {
      while (rep.get(zmq::sockopt::events) & ZMQ_POLLIN) {
        zmq::message_t msg;
        if (!rep.recv(msg, zmq::recv_flags::dontwait)) break;
        Request q;
        Reply r;
        if (!q.ParseFromArray(msg.data(), static_cast<int>(msg.size()))) {
          r.set_error("not an ibemu.ccmgr.Request");
        } else {
          try {
            r = manager.Handle(q);
          } catch (const std::exception& e) {  // the port failed under it: say so, go on
            r.Clear();
            r.set_error(e.what());
          }
        }
        std::string text = r.SerializeAsString();
        rep.send(zmq::buffer(text), zmq::send_flags::none);
      }
    };
    asio::posix::stream_descriptor zmq_fd(io, dup(rep.get(zmq::sockopt::fd)));
    std::function<void()> wait_cli = [&] {
      zmq_fd.async_wait(asio::posix::descriptor_base::wait_read,
                        [&](const boost::system::error_code& ec) {
                          if (ec) return;
                          Guarded("CLI", drain);
                          wait_cli();
                        });
    };
    // Unsolicited MADs (notices) between transactions.
    asio::posix::stream_descriptor mad_fd(io, dup(port.fd()));
    std::function<void()> wait_mad = [&] {
      mad_fd.async_wait(asio::posix::descriptor_base::wait_read,
                        [&](const boost::system::error_code& ec) {
                          if (ec) return;
                          Guarded("unsolicited MADs", [&] { client.Poll(0); });
                          Guarded("CLI", drain);
                          wait_mad();
                        });
    };
    asio::steady_timer sweep_timer(io), poll_timer(io);
    std::function<void()> sweep = [&] {
      Guarded("sweep", [&] { manager.Sweep(); });
      Guarded("CLI", drain);
      if (o.sweep_seconds <= 0) return;
      sweep_timer.expires_after(
          std::chrono::milliseconds(static_cast<int64_t>(o.sweep_seconds * 1000)));
      sweep_timer.async_wait([&](const boost::system::error_code& ec) {
        if (!ec) sweep();
      });
    };
    std::function<void()> poll = [&] {
      poll_timer.expires_after(std::chrono::milliseconds(o.poll_ms));
      poll_timer.async_wait([&](const boost::system::error_code& ec) {
        if (ec) return;
        Guarded("CongestionLog poll", [&] { manager.PollLogs(); });
        Guarded("CLI", drain);
        poll();
      });
    };
    wait_cli();
    wait_mad();
    asio::post(io, sweep);
    if (o.poll_ms > 0) poll();
    io.run();
    Log("stopping");
  } catch (const fabricmgr::MadPortError& e) {
    std::fprintf(stderr, "ibemu-ccmgr: error: %s\n", e.what());
    return 2;
  } catch (const zmq::error_t& e) {
    std::fprintf(stderr, "ibemu-ccmgr: error: %s: %s\n", endpoint.c_str(), e.what());
    return 2;
  } catch (const std::runtime_error& e) {
    std::fprintf(stderr, "ibemu-ccmgr: error: %s\n", e.what());
    return 2;
  }
  return 0;
}

}  // namespace ibemu::ccmgr
