// The fabric's end of the direct MAD channel (emulator/fabric/local_channel.h) against real Unix
// SOCK_SEQPACKET clients: message boundaries and order, output held back (not dropped) while a
// client does not read, departures reported, and a client sending more than a message may hold
// cut off.
#include "emulator/fabric/local_channel.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace ibemu::fabric {
namespace {

class LocalChannelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ibemu-local-channel-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/f.umad.direct";
    channel_ = std::make_unique<LocalChannel>(path_);
  }
  void TearDown() override {
    for (int fd : clients_) close(fd);
    channel_.reset();
    std::filesystem::remove_all(dir_);
  }
  int Connect() {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path_.c_str());
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    clients_.push_back(fd);
    return fd;
  }
  // One Poll; what it handed over and who it reported gone.
  void PollOnce() {
    channel_->Poll(
        nullptr,
        [&](const std::string& id, std::string_view body) {
          got_.push_back({id, std::string(body)});
        },
        [&](const std::string& id) { gone_.push_back(id); });
  }

  std::string dir_, path_;
  std::unique_ptr<LocalChannel> channel_;
  std::vector<int> clients_;
  std::vector<std::pair<std::string, std::string>> got_;
  std::vector<std::string> gone_;
};

TEST_F(LocalChannelTest, MessagesKeepTheirBoundariesAndOrderAndRepliesFindTheirClient) {
  int a = Connect(), b = Connect();
  ASSERT_EQ(send(a, "one", 3, 0), 3);
  ASSERT_EQ(send(a, "two!", 4, 0), 4);
  ASSERT_EQ(send(b, "x", 1, 0), 1);
  PollOnce();
  ASSERT_EQ(got_.size(), 3u);
  EXPECT_EQ(channel_->clients(), 2u);
  std::string id_a, id_b;
  for (const auto& [id, body] : got_) (body == "x" ? id_b : id_a) = id;
  EXPECT_TRUE(LocalChannel::IsLocalId(id_a));
  EXPECT_NE(id_a, id_b);
  // A ZeroMQ routing id (generated ones start with a zero byte) is not ours.
  EXPECT_FALSE(LocalChannel::IsLocalId(std::string("\0\x80\0\0\x29", 5)));
  EXPECT_EQ(got_[0].second + got_[1].second, "onetwo!");  // a's two, in order

  ASSERT_TRUE(channel_->Send(id_b, "for b"));
  char buf[64];
  ASSERT_EQ(recv(b, buf, sizeof buf, MSG_DONTWAIT), 5);
  EXPECT_EQ(std::string(buf, 5), "for b");
  EXPECT_LT(recv(a, buf, sizeof buf, MSG_DONTWAIT), 0);  // nothing for a
}

TEST_F(LocalChannelTest, OutputForAClientThatDoesNotReadIsHeldInOrderNotDropped) {
  int a = Connect();
  ASSERT_EQ(send(a, "hi", 2, 0), 2);
  PollOnce();
  ASSERT_EQ(got_.size(), 1u);
  const std::string id = got_[0].first;
  // Far more than the socket buffer holds (a few hundred kilobytes).
  const int kMessages = 4000;
  std::string body(1000, 'm');
  for (int i = 0; i < kMessages; ++i) {
    body.replace(0, 8, std::to_string(10000000 + i));
    ASSERT_TRUE(channel_->Send(id, body));
  }
  std::vector<zmq::pollitem_t> items;
  channel_->AddPollItems(&items);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_TRUE(items[1].events & ZMQ_POLLOUT);  // it waits to write the rest
  int read = 0;
  char buf[2048];
  while (read < kMessages) {
    ssize_t n = recv(a, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0) {
      PollOnce();  // the service loop's turn: what was held goes out as the client reads
      continue;
    }
    ASSERT_EQ(n, 1000);
    ASSERT_EQ(std::string(buf, 8), std::to_string(10000000 + read)) << "message " << read;
    ++read;
  }
  items.clear();
  channel_->AddPollItems(&items);
  EXPECT_FALSE(items[1].events & ZMQ_POLLOUT);
  EXPECT_TRUE(gone_.empty());
}

TEST_F(LocalChannelTest, APollReadsExactlyTheClientsThatHaveEventsAmongMany) {
  // Twelve clients: their ids ("1" .. "12" after the mark) sort out of numeric order, which the
  // poll items must follow.
  std::vector<int> fds;
  for (int i = 0; i < 12; ++i) fds.push_back(Connect());
  for (int i = 0; i < 12; ++i) ASSERT_EQ(send(fds[i], "x", 1, 0), 1);
  PollOnce();
  ASSERT_EQ(got_.size(), 12u);
  got_.clear();
  for (int i : {1, 9, 11}) {
    std::string body = "from " + std::to_string(i);
    ASSERT_EQ(send(fds[i], body.data(), body.size(), 0), static_cast<ssize_t>(body.size()));
  }
  std::vector<zmq::pollitem_t> items;
  channel_->AddPollItems(&items);
  ASSERT_EQ(items.size(), 13u);
  ASSERT_EQ(zmq::poll(items.data(), items.size(), std::chrono::milliseconds(1000)), 3);
  channel_->Poll(
      items.data(),
      [&](const std::string& id, std::string_view body) {
        got_.push_back({id, std::string(body)});
      },
      [&](const std::string& id) { gone_.push_back(id); });
  std::vector<std::string> bodies;
  for (const auto& [id, body] : got_) bodies.push_back(body);
  std::sort(bodies.begin(), bodies.end());
  EXPECT_EQ(bodies, (std::vector<std::string>{"from 1", "from 11", "from 9"}));
  EXPECT_TRUE(gone_.empty());
}

TEST_F(LocalChannelTest, DeparturesAndOversizedMessagesCloseTheClient) {
  int a = Connect(), b = Connect();
  ASSERT_EQ(send(a, "a", 1, 0), 1);
  ASSERT_EQ(send(b, "b", 1, 0), 1);
  PollOnce();
  ASSERT_EQ(got_.size(), 2u);
  std::string id_a = got_[0].second == "a" ? got_[0].first : got_[1].first;
  std::string id_b = got_[0].second == "a" ? got_[1].first : got_[0].first;

  close(a);
  clients_.erase(clients_.begin());
  PollOnce();
  ASSERT_EQ(gone_, std::vector<std::string>{id_a});
  EXPECT_FALSE(channel_->Send(id_a, "late"));
  EXPECT_EQ(channel_->clients(), 1u);

  // One byte more than a message may hold: b is cut off, as the ROUTER's maxmsgsize does.
  std::string big(LocalChannel::kMaxMessage + 1, 'x');
  int sndbuf = 1 << 20;
  setsockopt(b, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  ASSERT_EQ(send(b, big.data(), big.size(), 0), static_cast<ssize_t>(big.size()));
  got_.clear();
  PollOnce();
  EXPECT_TRUE(got_.empty());
  ASSERT_EQ(gone_.size(), 2u);
  EXPECT_EQ(gone_[1], id_b);
  EXPECT_EQ(channel_->clients(), 0u);
}

}  // namespace
}  // namespace ibemu::fabric
