// The yardstick for the verbs benchmark (bench/verbs_bench.sh): what two processes on this machine
// get from plain ZeroMQ over an ipc:// socket, the transport between a verbs program and the
// fabric. Two measurements, each between a parent and a forked child:
//   ping-pong: `iters` round trips of a `size`-byte message (PAIR sockets, blocking receives);
//              prints the median and the mean round trip in microseconds;
//   stream:    `iters` messages of `size` bytes one way (PUSH/PULL), the receiver's clock from the
//              first message to the last; prints MB/s (10^6 bytes per second, as perftest does).
//   ibemu_bench_zmq pingpong|stream SIZE ITERS
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include <zmq.hpp>

namespace {

using Clock = std::chrono::steady_clock;

std::string Endpoint() {
  char dir[] = "/tmp/ibemu-zmq-bench.XXXXXX";
  if (!mkdtemp(dir)) {
    std::perror("mkdtemp");
    std::exit(1);
  }
  return std::string("ipc://") + dir + "/s";
}

int PingPong(size_t size, int iters) {
  std::string ep = Endpoint();
  pid_t child = fork();
  if (child == 0) {
    {
      zmq::context_t ctx(1);
      zmq::socket_t s(ctx, zmq::socket_type::pair);
      s.connect(ep);
      for (int i = 0; i < iters + 1; ++i) {
        zmq::message_t m;
        if (!s.recv(m)) _exit(1);
        s.send(m, zmq::send_flags::none);
      }
    }  // the last reply leaves before the context ends
    _exit(0);
  }
  zmq::context_t ctx(1);
  zmq::socket_t s(ctx, zmq::socket_type::pair);
  s.bind(ep);
  std::vector<char> buf(size, 'x');
  std::vector<double> rtt;
  rtt.reserve(iters);
  for (int i = 0; i < iters + 1; ++i) {
    auto t0 = Clock::now();
    s.send(zmq::buffer(buf), zmq::send_flags::none);
    zmq::message_t m;
    if (!s.recv(m) || m.size() != size) return 1;
    // The first round trip includes the connection; it is not counted.
    if (i > 0) rtt.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  waitpid(child, nullptr, 0);
  std::sort(rtt.begin(), rtt.end());
  double mean = 0;
  for (double r : rtt) mean += r / static_cast<double>(rtt.size());
  std::printf("zmq ping-pong %zu bytes: median %.1f us, mean %.1f us round trip (%d iterations)\n",
              size, rtt[rtt.size() / 2], mean, iters);
  return 0;
}

int Stream(size_t size, int iters) {
  std::string ep = Endpoint();
  pid_t child = fork();
  if (child == 0) {
    {
      // Closing the socket and the context waits until every message has gone (linger).
      zmq::context_t ctx(1);
      zmq::socket_t s(ctx, zmq::socket_type::push);
      s.connect(ep);
      std::vector<char> buf(size, 'x');
      for (int i = 0; i < iters + 1; ++i) s.send(zmq::buffer(buf), zmq::send_flags::none);
    }
    _exit(0);
  }
  zmq::context_t ctx(1);
  zmq::socket_t s(ctx, zmq::socket_type::pull);
  s.bind(ep);
  zmq::message_t m;
  if (!s.recv(m)) return 1;
  auto t0 = Clock::now();  // from the end of the first message, so `iters` messages are timed
  for (int i = 0; i < iters; ++i)
    if (!s.recv(m) || m.size() != size) return 1;
  double sec = std::chrono::duration<double>(Clock::now() - t0).count();
  waitpid(child, nullptr, 0);
  std::printf("zmq stream %zu bytes: %.1f MB/s (%d messages in %.3f s)\n", size,
              static_cast<double>(size) * iters / sec / 1e6, iters, sec);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s pingpong|stream SIZE ITERS\n", argv[0]);
    return 2;
  }
  std::string mode = argv[1];
  size_t size = std::strtoul(argv[2], nullptr, 10);
  int iters = std::atoi(argv[3]);
  if (size == 0 || iters <= 0) {
    std::fprintf(stderr, "%s: SIZE and ITERS must be positive\n", argv[0]);
    return 2;
  }
  if (mode == "pingpong") return PingPong(size, iters);
  if (mode == "stream") return Stream(size, iters);
  std::fprintf(stderr, "%s: unknown mode '%s' (pingpong or stream)\n", argv[0], mode.c_str());
  return 2;
}
