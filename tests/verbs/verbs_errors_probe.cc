// The error paths of the verbs transport, from a verbs program's side: a GoogleTest program that
// links the verbs API and runs under `ibemu exec --hca <node>` (tests/integration/
// verbs_errors_test.cc starts it), so every call goes through hostlib/verbs to the emulated HCA.
// Two RC QPs of the one HCA talk to each other (the HCA loops packets for its own LID back
// inside, as a real one does). Each case checks the status and errno the real library gives, and
// that every posted work request completes exactly once.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <infiniband/verbs.h>
#include <poll.h>

#include <chrono>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

class VerbsErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    devs_ = ibv_get_device_list(&n);
    ASSERT_EQ(n, 1) << "run under `ibemu exec --hca <node>`";
    ctx_ = ibv_open_device(devs_[0]);
    ASSERT_NE(ctx_, nullptr);
    ibv_port_attr port;
    ASSERT_EQ(ibv_query_port(ctx_, 1, &port), 0);
    ASSERT_EQ(port.state, IBV_PORT_ACTIVE);
    lid_ = port.lid;
    pd_ = ibv_alloc_pd(ctx_);
    cq_ = ibv_create_cq(ctx_, 256, nullptr, nullptr, 0);
    ASSERT_TRUE(pd_ && cq_);
    buf_.assign(1 << 16, 0x5a);
    mr_ = ibv_reg_mr(pd_, buf_.data(), buf_.size(),
                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                         IBV_ACCESS_REMOTE_ATOMIC);
    ASSERT_NE(mr_, nullptr);
  }
  void TearDown() override {
    for (ibv_qp* q : qps_) ibv_destroy_qp(q);
    if (mr_) ibv_dereg_mr(mr_);
    if (cq_) ibv_destroy_cq(cq_);
    if (pd_) ibv_dealloc_pd(pd_);
    if (ctx_) ibv_close_device(ctx_);
    if (devs_) ibv_free_device_list(devs_);
  }

  // A UD QP in RTS with Q_Key `qkey`.
  ibv_qp* NewUdQp(uint32_t qkey) {
    ibv_qp_init_attr init{};
    init.send_cq = init.recv_cq = cq_;
    init.qp_type = IBV_QPT_UD;
    init.cap.max_send_wr = init.cap.max_recv_wr = 4;
    init.cap.max_send_sge = init.cap.max_recv_sge = 1;
    ibv_qp* q = ibv_create_qp(pd_, &init);
    if (!q) return nullptr;
    qps_.push_back(q);
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    a.qkey = qkey;
    if (ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
      return nullptr;
    a.qp_state = IBV_QPS_RTR;
    if (ibv_modify_qp(q, &a, IBV_QP_STATE)) return nullptr;
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = 1;
    if (ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN)) return nullptr;
    return q;
  }

  // Posts wr, signaled, with the one SGE `sge`: what every case's work request has in common.
  static int PostOne(ibv_qp* q, ibv_send_wr wr, ibv_sge sge) {
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags |= IBV_SEND_SIGNALED;
    ibv_send_wr* bad = nullptr;
    return ibv_post_send(q, &wr, &bad);
  }

  // A signaled UD SEND of the 64 bytes at 8192 from q to itself through address handle h.
  int SendUd(ibv_qp* q, uint64_t id, ibv_ah* h, uint32_t qkey) {
    ibv_send_wr wr{};
    wr.wr_id = id;
    wr.opcode = IBV_WR_SEND;
    wr.wr.ud.ah = h;
    wr.wr.ud.remote_qpn = q->qp_num;
    wr.wr.ud.remote_qkey = qkey;
    return PostOne(q, wr, {At(8192), 64, mr_->lkey});
  }

  ibv_qp* NewQp() {
    ibv_qp_init_attr init{};
    init.send_cq = init.recv_cq = cq_;
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = init.cap.max_recv_wr = 16;
    init.cap.max_send_sge = init.cap.max_recv_sge = 2;
    ibv_qp* q = ibv_create_qp(pd_, &init);
    EXPECT_NE(q, nullptr);
    if (q) qps_.push_back(q);
    return q;
  }
  int ToInit(ibv_qp* q, int access) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    a.qp_access_flags = access;
    return ibv_modify_qp(q, &a,
                         IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  }
  int ToRtr(ibv_qp* q, uint32_t dest) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = IBV_MTU_1024;
    a.dest_qp_num = dest;
    a.rq_psn = 100;
    a.max_dest_rd_atomic = 4;
    a.min_rnr_timer = 1;  // 10 us
    a.ah_attr.dlid = lid_;
    a.ah_attr.port_num = 1;
    return ibv_modify_qp(q, &a,
                         IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                             IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  }
  int ToRts(ibv_qp* q, int retry, int rnr_retry) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 1;  // 8.192 us: retries come quickly
    a.retry_cnt = retry;
    a.rnr_retry = rnr_retry;
    a.sq_psn = 100;
    a.max_rd_atomic = 4;
    return ibv_modify_qp(q, &a,
                         IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                             IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
  }
  // Connects two RC QPs to each other and brings both to RTS.
  void Connect(ibv_qp* req, ibv_qp* resp, int req_access, int resp_access, int retry = 3,
               int rnr_retry = 1) {
    ASSERT_EQ(ToInit(req, req_access), 0);
    ASSERT_EQ(ToInit(resp, resp_access), 0);
    ASSERT_EQ(ToRtr(req, resp->qp_num), 0);
    ASSERT_EQ(ToRtr(resp, req->qp_num), 0);
    ASSERT_EQ(ToRts(req, retry, rnr_retry), 0);
    ASSERT_EQ(ToRts(resp, retry, rnr_retry), 0);
  }
  // A requester and a responder connected to each other, both in RTS.
  void Pair(ibv_qp** req, ibv_qp** resp, int resp_access, int retry = 3, int rnr_retry = 1) {
    *req = NewQp();
    *resp = NewQp();
    ASSERT_TRUE(*req && *resp);
    Connect(*req, *resp, 0, resp_access, retry, rnr_retry);
  }

  // `imm` in network order, for the _WITH_IMM opcodes.
  int Send(ibv_qp* q, uint64_t wr_id, ibv_wr_opcode op, uint64_t addr, uint32_t len, uint32_t lkey,
           uint64_t remote = 0, uint32_t rkey = 0, uint32_t imm = 0) {
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.opcode = op;
    wr.imm_data = imm;
    wr.wr.rdma.remote_addr = remote;
    wr.wr.rdma.rkey = rkey;
    return PostOne(q, wr, {addr, len, lkey});
  }
  // An atomic WR on the 8 bytes at `remote`, the old value landing at `local`.
  int Atomic(ibv_qp* q, uint64_t wr_id, ibv_wr_opcode op, uint64_t local, uint64_t remote,
             uint64_t compare_add, uint64_t swap) {
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.opcode = op;
    wr.wr.atomic.remote_addr = remote;
    wr.wr.atomic.rkey = mr_->rkey;
    wr.wr.atomic.compare_add = compare_add;
    wr.wr.atomic.swap = swap;
    return PostOne(q, wr, {local, 8, mr_->lkey});
  }
  int Recv(ibv_qp* q, uint64_t wr_id, uint64_t addr, uint32_t len) {
    ibv_sge sge{addr, len, mr_->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    return ibv_post_recv(q, &wr, &bad);
  }
  uint64_t At(size_t off) const { return reinterpret_cast<uintptr_t>(buf_.data()) + off; }

  // Completions by wr_id until `n` have come or `seconds` pass; then a short wait shows that no
  // more come (each WR completes once).
  std::map<uint64_t, ibv_wc> Poll(size_t n, double seconds = 10) {
    std::map<uint64_t, ibv_wc> got;
    auto until = Clock::now() + std::chrono::duration<double>(seconds);
    auto take = [&] {
      ibv_wc wc[8];
      int k = ibv_poll_cq(cq_, 8, wc);
      EXPECT_GE(k, 0);
      for (int i = 0; i < k; ++i) {
        EXPECT_EQ(got.count(wc[i].wr_id), 0u) << "wr_id " << wc[i].wr_id << " completed twice";
        got[wc[i].wr_id] = wc[i];
      }
    };
    while (got.size() < n && Clock::now() < until) {
      take();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    auto quiet = Clock::now() + std::chrono::milliseconds(100);
    while (Clock::now() < quiet) take();
    return got;
  }

  ibv_device** devs_ = nullptr;
  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_cq* cq_ = nullptr;
  ibv_mr* mr_ = nullptr;
  std::vector<uint8_t> buf_;
  std::vector<ibv_qp*> qps_;
  uint16_t lid_ = 0;
};

TEST_F(VerbsErrors, ASendThatWorksFirst) {
  ibv_qp *a, *b;
  Pair(&a, &b, IBV_ACCESS_REMOTE_WRITE);
  std::memset(buf_.data(), 0x11, 64);
  ASSERT_EQ(Recv(b, 1, At(4096), 64), 0);
  ASSERT_EQ(Send(a, 2, IBV_WR_SEND, At(0), 64, mr_->lkey), 0);
  auto got = Poll(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].status, IBV_WC_SUCCESS);
  EXPECT_EQ(got[1].opcode, IBV_WC_RECV);
  EXPECT_EQ(got[1].byte_len, 64u);
  EXPECT_EQ(got[1].src_qp, a->qp_num);
  EXPECT_EQ(got[2].status, IBV_WC_SUCCESS);
  EXPECT_EQ(got[2].opcode, IBV_WC_SEND);
  EXPECT_EQ(buf_[4096], 0x11);
  EXPECT_EQ(buf_[4096 + 63], 0x11);
}

// A message of no bytes (one SGE of length 0) is one packet with no payload; a 20000-byte one
// (ten packets, the last shorter, read and placed by the HCA as one chunk) arrives whole.
TEST_F(VerbsErrors, AnEmptySendAndALongOneWorkToo) {
  ibv_qp *a, *b;
  Pair(&a, &b, IBV_ACCESS_REMOTE_WRITE);
  for (size_t i = 0; i < 20000; ++i) buf_[i] = static_cast<uint8_t>(i * 7);
  ASSERT_EQ(Recv(b, 1, At(32768), 32768), 0);
  ASSERT_EQ(Recv(b, 3, At(32768), 32768), 0);
  ASSERT_EQ(Send(a, 2, IBV_WR_SEND, At(0), 0, mr_->lkey), 0);
  ASSERT_EQ(Send(a, 4, IBV_WR_SEND, At(0), 20000, mr_->lkey), 0);
  auto got = Poll(4);
  ASSERT_EQ(got.size(), 4u);
  for (uint64_t id : {1, 2, 3, 4}) EXPECT_EQ(got[id].status, IBV_WC_SUCCESS) << id;
  EXPECT_EQ(got[1].byte_len, 0u);
  EXPECT_EQ(got[3].byte_len, 20000u);
  EXPECT_EQ(std::memcmp(buf_.data(), buf_.data() + 32768, 20000), 0);
}

TEST_F(VerbsErrors, ABadLkeyIsALocalProtectionErrorAndFlushesTheRest) {
  ibv_qp *a, *b;
  Pair(&a, &b, 0);
  ASSERT_EQ(Send(a, 1, IBV_WR_SEND, At(0), 64, mr_->lkey + 0x1000), 0);
  ASSERT_EQ(Send(a, 2, IBV_WR_SEND, At(0), 64, mr_->lkey), 0);
  auto got = Poll(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].status, IBV_WC_LOC_PROT_ERR);
  EXPECT_EQ(got[2].status, IBV_WC_WR_FLUSH_ERR);
  // The QP is in Error now: a new WR is accepted and flushed.
  ASSERT_EQ(Send(a, 3, IBV_WR_SEND, At(0), 8, mr_->lkey), 0);
  auto more = Poll(1);
  ASSERT_EQ(more.size(), 1u);
  EXPECT_EQ(more[3].status, IBV_WC_WR_FLUSH_ERR);
}

TEST_F(VerbsErrors, ALocalRangeOutsideTheRegionIsALocalProtectionError) {
  ibv_qp *a, *b;
  Pair(&a, &b, 0);
  ASSERT_EQ(Send(a, 1, IBV_WR_SEND, At(buf_.size() - 8), 64, mr_->lkey), 0);
  auto got = Poll(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[1].status, IBV_WC_LOC_PROT_ERR);
}

TEST_F(VerbsErrors, RemoteKeysBoundsAndAccessAreRemoteAccessErrors) {
  struct Case {
    const char* what;
    ibv_wr_opcode op;
    int resp_access;
    uint64_t remote;
    uint32_t rkey_delta;
  };
  const Case cases[] = {
      {"bad rkey", IBV_WR_RDMA_WRITE, IBV_ACCESS_REMOTE_WRITE, 0, 0x1000},
      {"out of bounds", IBV_WR_RDMA_WRITE, IBV_ACCESS_REMOTE_WRITE, buf_.size() - 16, 0},
      {"QP without remote write", IBV_WR_RDMA_WRITE, IBV_ACCESS_REMOTE_READ, 0, 0},
      {"QP without remote read", IBV_WR_RDMA_READ, IBV_ACCESS_REMOTE_WRITE, 0, 0},
  };
  uint64_t id = 1;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    ibv_qp *a, *b;
    Pair(&a, &b, c.resp_access);
    ASSERT_EQ(
        Send(a, id, c.op, At(0), 64, mr_->lkey, At(8192 + c.remote), mr_->rkey + c.rkey_delta), 0);
    auto got = Poll(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[id].status, IBV_WC_REM_ACCESS_ERR);
    ++id;
  }
}

TEST_F(VerbsErrors, AnMrWithoutRemoteWriteRefusesAWrite) {
  ibv_mr* ro = ibv_reg_mr(pd_, buf_.data() + 32768, 4096, IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(ro, nullptr);
  ibv_qp *a, *b;
  Pair(&a, &b, IBV_ACCESS_REMOTE_WRITE);
  ASSERT_EQ(Send(a, 1, IBV_WR_RDMA_WRITE, At(0), 64, mr_->lkey, At(32768), ro->rkey), 0);
  auto got = Poll(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[1].status, IBV_WC_REM_ACCESS_ERR);
  EXPECT_EQ(ibv_dereg_mr(ro), 0);
  // Registration itself: remote write without local write is refused, as the kernel does.
  errno = 0;
  EXPECT_EQ(ibv_reg_mr(pd_, buf_.data(), 4096, IBV_ACCESS_REMOTE_WRITE), nullptr);
  EXPECT_EQ(errno, EINVAL);
}

TEST_F(VerbsErrors, QpStateAndMaskMistakesGiveTheErrnosOfTheRealLibrary) {
  ibv_qp* q = NewQp();
  ASSERT_NE(q, nullptr);
  // Reset: a receive is EINVAL; Reset to RTR is EINVAL; Init without the port is EINVAL.
  EXPECT_EQ(Recv(q, 1, At(0), 8), EINVAL);
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  EXPECT_EQ(ibv_modify_qp(q, &a, IBV_QP_STATE), EINVAL);
  a.qp_state = IBV_QPS_INIT;
  EXPECT_EQ(ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS), EINVAL);
  EXPECT_EQ(q->state, IBV_QPS_RESET);
  ASSERT_EQ(ToInit(q, 0), 0);
  EXPECT_EQ(q->state, IBV_QPS_INIT);
  // Init: the send queue is not enabled yet (mlx5: ENOMEM), receives are fine.
  EXPECT_EQ(Send(q, 2, IBV_WR_SEND, At(0), 8, mr_->lkey), ENOMEM);
  EXPECT_EQ(Recv(q, 3, At(0), 8), 0);
  // RTR without the RNR timer (required for RC) is EINVAL.
  a = {};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_1024;
  a.ah_attr.dlid = lid_;
  a.ah_attr.port_num = 1;
  EXPECT_EQ(ibv_modify_qp(q, &a,
                          IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                              IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC),
            EINVAL);
  // To Error: the posted receive is flushed.
  a = {};
  a.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(ibv_modify_qp(q, &a, IBV_QP_STATE), 0);
  auto got = Poll(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[3].status, IBV_WC_WR_FLUSH_ERR);
}

TEST_F(VerbsErrors, NoReceiveAtThePeerEndsInRnrRetryExceeded) {
  ibv_qp *a, *b;
  Pair(&a, &b, 0, /*retry=*/3, /*rnr_retry=*/2);
  ASSERT_EQ(Send(a, 1, IBV_WR_SEND, At(0), 64, mr_->lkey), 0);
  auto got = Poll(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[1].status, IBV_WC_RNR_RETRY_EXC_ERR);
}

// Go back N across messages: the first of two multi-packet SENDs is NAKed (RNR) while the
// second is already partly on the wire; both must be sent again from the NAKed PSN and arrive
// whole once receives are posted.
TEST_F(VerbsErrors, SendsNakedForRnrAreSentAgainWholeOnceReceivesArePosted) {
  ibv_qp *a, *b;
  Pair(&a, &b, 0, /*retry=*/3, /*rnr_retry=*/7);  // 7: retry for ever
  for (size_t i = 0; i < 16384; ++i) buf_[i] = static_cast<uint8_t>(i * 7 + 1);
  ASSERT_EQ(Send(a, 1, IBV_WR_SEND, At(0), 8192, mr_->lkey), 0);  // 8 packets each
  ASSERT_EQ(Send(a, 2, IBV_WR_SEND, At(8192), 8192, mr_->lkey), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(Recv(b, 3, At(32768), 8192), 0);
  ASSERT_EQ(Recv(b, 4, At(40960), 8192), 0);
  auto got = Poll(4);
  ASSERT_EQ(got.size(), 4u);
  for (uint64_t id : {1, 2, 3, 4}) EXPECT_EQ(got[id].status, IBV_WC_SUCCESS) << id;
  EXPECT_EQ(got[3].byte_len, 8192u);
  EXPECT_EQ(got[4].byte_len, 8192u);
  EXPECT_EQ(std::memcmp(buf_.data(), buf_.data() + 32768, 16384), 0);
}

TEST_F(VerbsErrors, ADestroyedPeerEndsInRetryExceeded) {
  ibv_qp *a, *b;
  Pair(&a, &b, 0, /*retry=*/2, /*rnr_retry=*/1);
  ASSERT_EQ(ibv_destroy_qp(b), 0);
  qps_.erase(std::find(qps_.begin(), qps_.end(), b));
  ASSERT_EQ(Send(a, 1, IBV_WR_SEND, At(0), 64, mr_->lkey), 0);
  ASSERT_EQ(Send(a, 2, IBV_WR_SEND, At(0), 64, mr_->lkey), 0);
  auto got = Poll(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].status, IBV_WC_RETRY_EXC_ERR);
  EXPECT_EQ(got[2].status, IBV_WC_WR_FLUSH_ERR);
}

TEST_F(VerbsErrors, ASendLongerThanTheReceiveIsALengthErrorOnBothSides) {
  ibv_qp *a, *b;
  Pair(&a, &b, 0);
  ASSERT_EQ(Recv(b, 1, At(4096), 32), 0);
  ASSERT_EQ(Send(a, 2, IBV_WR_SEND, At(0), 100, mr_->lkey), 0);
  auto got = Poll(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].status, IBV_WC_LOC_LEN_ERR);
  EXPECT_EQ(got[2].status, IBV_WC_REM_INV_REQ_ERR);
}

TEST_F(VerbsErrors, AQpWhosePKeyIndexNamesNoPartitionCannotBeBroughtUp) {
  // The port's table holds the default key at index 0 and nothing else (no partitions
  // configured): index 1 names no partition.
  ibv_qp* q = NewQp();
  ASSERT_NE(q, nullptr);
  __be16 key;
  ASSERT_EQ(ibv_query_pkey(ctx_, 1, 1, &key), 0);
  ASSERT_EQ(key, 0);
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.pkey_index = 1;
  EXPECT_EQ(
      ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
      EINVAL);
  EXPECT_EQ(q->state, IBV_QPS_RESET);
  a.pkey_index = 0;
  EXPECT_EQ(
      ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
      0);
}

TEST_F(VerbsErrors, ADatagramWithTheWrongQKeyIsDroppedAndCounted) {
  ibv_qp* q = NewUdQp(0x11111111);
  ASSERT_NE(q, nullptr);
  ibv_ah_attr ah{};
  ah.dlid = lid_;
  ah.port_num = 1;
  ibv_ah* h = ibv_create_ah(pd_, &ah);
  ASSERT_NE(h, nullptr);
  ibv_port_attr before;
  ASSERT_EQ(ibv_query_port(ctx_, 1, &before), 0);
  ASSERT_EQ(Recv(q, 1, At(0), 1024), 0);
  auto send = [&](uint64_t id, uint32_t qkey) { return SendUd(q, id, h, qkey); };
  ASSERT_EQ(send(2, 0x22222222), 0);  // wrong Q_Key: sent, dropped at the receiver
  auto got = Poll(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[2].status, IBV_WC_SUCCESS);
  ibv_port_attr after;
  ASSERT_EQ(ibv_query_port(ctx_, 1, &after), 0);
  EXPECT_EQ(after.qkey_viol_cntr, before.qkey_viol_cntr + 1);
  ASSERT_EQ(send(3, 0x11111111), 0);  // the right one is received
  got = Poll(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].status, IBV_WC_SUCCESS);
  EXPECT_EQ(got[1].byte_len, 64u + 40u);
  EXPECT_EQ(got[1].src_qp, q->qp_num);
  EXPECT_EQ(ibv_destroy_ah(h), 0);
}

// Not an error path: a datagram sent to a global address handle carries a GRH, which the
// receiver finds in the first 40 bytes of its buffer with IBV_WC_GRH (IBA 11.4.1.1, 8.3); one sent
// to a local address handle does not.
TEST_F(VerbsErrors, ADatagramToAGlobalAddressBringsItsGrhIntoTheReceiveBuffer) {
  ibv_qp* q = NewUdQp(0x11111111);
  ASSERT_NE(q, nullptr);
  ibv_gid gid;
  ASSERT_EQ(ibv_query_gid(ctx_, 1, 0, &gid), 0);
  ibv_ah_attr ah{};
  ah.dlid = lid_;
  ah.port_num = 1;
  ah.is_global = 1;
  ah.grh.dgid = gid;
  ah.grh.hop_limit = 64;
  ah.grh.traffic_class = 0x20;
  ah.grh.flow_label = 0x12345;
  ibv_ah* global = ibv_create_ah(pd_, &ah);
  ah.is_global = 0;
  ibv_ah* local = ibv_create_ah(pd_, &ah);
  ASSERT_TRUE(global && local);
  std::memset(buf_.data(), 0, 2048);
  ASSERT_EQ(Recv(q, 1, At(0), 1024), 0);
  ASSERT_EQ(Recv(q, 2, At(1024), 1024), 0);
  auto send = [&](uint64_t id, ibv_ah* h) { return SendUd(q, id, h, 0x11111111); };
  ASSERT_EQ(send(3, global), 0);
  ASSERT_EQ(send(4, local), 0);
  auto got = Poll(4);
  ASSERT_EQ(got.size(), 4u);
  ASSERT_EQ(got[1].status, IBV_WC_SUCCESS);
  EXPECT_TRUE(got[1].wc_flags & IBV_WC_GRH);
  EXPECT_EQ(got[1].byte_len, 40u + 64u);
  ibv_grh grh;
  std::memcpy(&grh, buf_.data(), sizeof grh);
  EXPECT_EQ(be32toh(grh.version_tclass_flow), 6u << 28 | 0x20u << 20 | 0x12345u);
  EXPECT_EQ(be16toh(grh.paylen), 12u + 8u + 64u + 4u);  // BTH, DETH, payload, ICRC
  EXPECT_EQ(grh.next_hdr, 0x1B);
  EXPECT_EQ(grh.hop_limit, 64);
  EXPECT_EQ(std::memcmp(grh.sgid.raw, gid.raw, 16), 0);
  EXPECT_EQ(std::memcmp(grh.dgid.raw, gid.raw, 16), 0);
  EXPECT_EQ(std::memcmp(buf_.data() + 40, buf_.data() + 8192, 64), 0);
  // An address handle made from it answers to the sender's GID.
  ibv_ah_attr back{};
  ASSERT_EQ(ibv_init_ah_from_wc(ctx_, 1, &got[1], &grh, &back), 0);
  EXPECT_EQ(back.is_global, 1);
  EXPECT_EQ(std::memcmp(back.grh.dgid.raw, gid.raw, 16), 0);
  ASSERT_EQ(got[2].status, IBV_WC_SUCCESS);
  EXPECT_FALSE(got[2].wc_flags & IBV_WC_GRH);
  EXPECT_EQ(got[2].byte_len, 40u + 64u);
  EXPECT_EQ(std::memcmp(buf_.data() + 1024 + 40, buf_.data() + 8192, 64), 0);
  EXPECT_EQ(ibv_destroy_ah(global), 0);
  EXPECT_EQ(ibv_destroy_ah(local), 0);
}

}  // namespace

namespace {

uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

}  // namespace

// The one-sided operations change (or read) the target's memory without the target calling
// verbs, each with its result: a 20000-byte WRITE and READ (several packets, chunked DMA), then
// fetch-and-add and compare-and-swap, a successful and a failing one.
TEST_F(VerbsErrors, OneSidedOperationsReachTheTargetsMemoryWithTheirResults) {
  ibv_qp *a, *b;
  Pair(&a, &b, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
  for (size_t i = 0; i < 20000; ++i) buf_[i] = static_cast<uint8_t>(i * 13 + 1);
  ASSERT_EQ(Send(a, 1, IBV_WR_RDMA_WRITE, At(0), 20000, mr_->lkey, At(32768), mr_->rkey), 0);
  auto w = Poll(1);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[1].status, IBV_WC_SUCCESS);
  EXPECT_EQ(w[1].opcode, IBV_WC_RDMA_WRITE);
  EXPECT_EQ(std::memcmp(buf_.data(), buf_.data() + 32768, 20000), 0);

  for (size_t i = 0; i < 20000; ++i) buf_[32768 + i] = static_cast<uint8_t>(i * 29 + 3);
  std::memset(buf_.data(), 0, 20000);
  ASSERT_EQ(Send(a, 2, IBV_WR_RDMA_READ, At(0), 20000, mr_->lkey, At(32768), mr_->rkey), 0);
  auto r = Poll(1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[2].status, IBV_WC_SUCCESS);
  EXPECT_EQ(r[2].opcode, IBV_WC_RDMA_READ);
  EXPECT_EQ(r[2].byte_len, 20000u);
  EXPECT_EQ(std::memcmp(buf_.data(), buf_.data() + 32768, 20000), 0);

  const size_t target = 60000, old = 60016;  // 8-byte aligned, inside the region
  uint64_t v = 0x1122334455667788;
  std::memcpy(&buf_[target], &v, 8);
  ASSERT_EQ(Atomic(a, 3, IBV_WR_ATOMIC_FETCH_AND_ADD, At(old), At(target), 5, 0), 0);
  auto f = Poll(1);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[3].status, IBV_WC_SUCCESS);
  EXPECT_EQ(f[3].opcode, IBV_WC_FETCH_ADD);
  EXPECT_EQ(Load64(&buf_[old]), v);
  EXPECT_EQ(Load64(&buf_[target]), v + 5);

  ASSERT_EQ(Atomic(a, 4, IBV_WR_ATOMIC_CMP_AND_SWP, At(old), At(target), v + 5, 77), 0);
  ASSERT_EQ(Atomic(a, 5, IBV_WR_ATOMIC_CMP_AND_SWP, At(old + 8), At(target), v, 99), 0);
  auto c = Poll(2);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[4].status, IBV_WC_SUCCESS);
  EXPECT_EQ(c[4].opcode, IBV_WC_COMP_SWAP);
  EXPECT_EQ(Load64(&buf_[old]), v + 5);    // equal: swapped
  EXPECT_EQ(Load64(&buf_[old + 8]), 77u);  // the second saw the first's swap, and failed
  EXPECT_EQ(Load64(&buf_[target]), 77u);
}

// SEND and RDMA WRITE with immediate: the receiver's completion carries the immediate (in
// network order, as posted) and says which it was; the WRITE's data is in place.
TEST_F(VerbsErrors, ImmediatesArriveWithTheirCompletions) {
  ibv_qp *a, *b;
  Pair(&a, &b, IBV_ACCESS_REMOTE_WRITE);
  ASSERT_EQ(Recv(b, 1, At(4096), 256), 0);
  ASSERT_EQ(Recv(b, 2, At(4096), 256), 0);
  std::memset(buf_.data(), 0x3c, 128);
  auto post = [&](uint64_t id, ibv_wr_opcode op, uint32_t imm) {
    return Send(a, id, op, At(0), 128, mr_->lkey, At(16384), mr_->rkey, htonl(imm));
  };
  ASSERT_EQ(post(3, IBV_WR_SEND_WITH_IMM, 0xabcd0001), 0);
  ASSERT_EQ(post(4, IBV_WR_RDMA_WRITE_WITH_IMM, 0xabcd0002), 0);
  auto got = Poll(4);
  ASSERT_EQ(got.size(), 4u);
  for (uint64_t id : {1, 2, 3, 4}) EXPECT_EQ(got[id].status, IBV_WC_SUCCESS) << id;
  EXPECT_EQ(got[1].opcode, IBV_WC_RECV);
  EXPECT_TRUE(got[1].wc_flags & IBV_WC_WITH_IMM);
  EXPECT_EQ(ntohl(got[1].imm_data), 0xabcd0001u);
  EXPECT_EQ(got[1].byte_len, 128u);
  EXPECT_EQ(got[2].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_TRUE(got[2].wc_flags & IBV_WC_WITH_IMM);
  EXPECT_EQ(ntohl(got[2].imm_data), 0xabcd0002u);
  EXPECT_EQ(got[3].opcode, IBV_WC_SEND);
  EXPECT_EQ(got[4].opcode, IBV_WC_RDMA_WRITE);
  EXPECT_EQ(buf_[16384], 0x3c);
  EXPECT_EQ(buf_[16384 + 127], 0x3c);
  EXPECT_EQ(buf_[4096], 0x3c);  // the SEND's bytes
}

// An SRQ armed with a limit raises IBV_EVENT_SRQ_LIMIT_REACHED once fewer WQEs than the limit are
// left, through the async fd, which poll() sees readable; the event disarms the limit.
TEST_F(VerbsErrors, TheSrqLimitEventArrivesOnThePollableAsyncFd) {
  ibv_srq_init_attr sattr{};
  sattr.attr.max_wr = 8;
  sattr.attr.max_sge = 1;
  ibv_srq* srq = ibv_create_srq(pd_, &sattr);
  ASSERT_NE(srq, nullptr);
  ibv_qp_init_attr init{};
  init.send_cq = init.recv_cq = cq_;
  init.srq = srq;
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = 8;
  init.cap.max_send_sge = 1;
  ibv_qp* b = ibv_create_qp(pd_, &init);
  ASSERT_NE(b, nullptr);
  qps_.push_back(b);
  ibv_qp* a = NewQp();
  Connect(a, b, 0, 0);
  for (uint64_t i = 0; i < 3; ++i) {
    ibv_sge sge{At(4096 + 256 * i), 256, mr_->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = 10 + i;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    ASSERT_EQ(ibv_post_srq_recv(srq, &wr, &bad), 0);
  }
  ibv_srq_attr limit{};
  limit.srq_limit = 2;
  ASSERT_EQ(ibv_modify_srq(srq, &limit, IBV_SRQ_LIMIT), 0);
  pollfd pfd{ctx_->async_fd, POLLIN, 0};
  EXPECT_EQ(poll(&pfd, 1, 0), 0);                               // nothing yet
  ASSERT_EQ(Send(a, 1, IBV_WR_SEND, At(0), 64, mr_->lkey), 0);  // 2 left: not below the limit
  ASSERT_EQ(Poll(2).size(), 2u);
  EXPECT_EQ(poll(&pfd, 1, 0), 0);
  ASSERT_EQ(Send(a, 2, IBV_WR_SEND, At(0), 64, mr_->lkey), 0);  // 1 left: below
  ASSERT_EQ(Poll(2).size(), 2u);
  ASSERT_EQ(poll(&pfd, 1, 2000), 1);
  ibv_async_event e{};
  ASSERT_EQ(ibv_get_async_event(ctx_, &e), 0);
  EXPECT_EQ(e.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
  EXPECT_EQ(e.element.srq, srq);
  ibv_ack_async_event(&e);
  EXPECT_EQ(poll(&pfd, 1, 0), 0);  // one event only
  ibv_srq_attr now{};
  ASSERT_EQ(ibv_query_srq(srq, &now), 0);
  EXPECT_EQ(now.srq_limit, 0u);  // disarmed
  ibv_destroy_qp(b);
  qps_.pop_back();
  EXPECT_EQ(ibv_destroy_srq(srq), 0);
}

// A CQ on a completion channel, armed, makes the channel's fd readable at its next completion,
// for poll() as for ibv_get_cq_event; unarmed, it does not.
TEST_F(VerbsErrors, ACompletionChannelIsPollable) {
  ibv_comp_channel* ch = ibv_create_comp_channel(ctx_);
  ASSERT_NE(ch, nullptr);
  ibv_cq* ecq = ibv_create_cq(ctx_, 16, this, ch, 0);
  ASSERT_NE(ecq, nullptr);
  ibv_qp_init_attr init{};
  init.send_cq = init.recv_cq = ecq;
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = init.cap.max_recv_wr = 4;
  init.cap.max_send_sge = init.cap.max_recv_sge = 1;
  ibv_qp* a = ibv_create_qp(pd_, &init);
  ibv_qp* b = ibv_create_qp(pd_, &init);
  ASSERT_TRUE(a && b);
  Connect(a, b, IBV_ACCESS_REMOTE_WRITE, IBV_ACCESS_REMOTE_WRITE);
  pollfd pfd{ch->fd, POLLIN, 0};
  // Unarmed: a completion raises no event.
  ASSERT_EQ(Send(a, 1, IBV_WR_RDMA_WRITE, At(0), 8, mr_->lkey, At(8192), mr_->rkey), 0);
  ibv_wc wc{};
  auto until = Clock::now() + std::chrono::seconds(10);
  while (ibv_poll_cq(ecq, 1, &wc) == 0 && Clock::now() < until) {
  }
  EXPECT_EQ(wc.wr_id, 1u);
  EXPECT_EQ(poll(&pfd, 1, 50), 0);
  // Armed: the next one does.
  ASSERT_EQ(ibv_req_notify_cq(ecq, 0), 0);
  ASSERT_EQ(Send(a, 2, IBV_WR_RDMA_WRITE, At(0), 8, mr_->lkey, At(8192), mr_->rkey), 0);
  ASSERT_EQ(poll(&pfd, 1, 5000), 1);
  ibv_cq* which = nullptr;
  void* context = nullptr;
  ASSERT_EQ(ibv_get_cq_event(ch, &which, &context), 0);
  EXPECT_EQ(which, ecq);
  EXPECT_EQ(context, this);
  ibv_ack_cq_events(ecq, 1);
  ASSERT_EQ(ibv_poll_cq(ecq, 1, &wc), 1);
  EXPECT_EQ(wc.wr_id, 2u);
  EXPECT_EQ(poll(&pfd, 1, 0), 0);
  ibv_destroy_qp(a);
  ibv_destroy_qp(b);
  EXPECT_EQ(ibv_destroy_cq(ecq), 0);
  EXPECT_EQ(ibv_destroy_comp_channel(ch), 0);
}

// The HCA clock as mlx5 gives it: raw cycles of the 1 GHz core clock in tv_nsec, tv_sec 0, and
// comp_mask saying the raw clock was filled; it advances with the fabric's virtual time.
TEST_F(VerbsErrors, TheRawClockReadsAsMlx5Gives) {
  ibv_values_ex v{};
  v.comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
  ASSERT_EQ(ibv_query_rt_values_ex(ctx_, &v), 0);
  EXPECT_EQ(v.comp_mask, static_cast<uint32_t>(IBV_VALUES_MASK_RAW_CLOCK));
  EXPECT_EQ(v.raw_clock.tv_sec, 0);
  uint64_t first = static_cast<uint64_t>(v.raw_clock.tv_nsec);
  EXPECT_GT(first, 0u);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(ibv_query_rt_values_ex(ctx_, &v), 0);
  EXPECT_GT(static_cast<uint64_t>(v.raw_clock.tv_nsec), first);
  ibv_device_attr_ex attr{};
  ASSERT_EQ(ibv_query_device_ex(ctx_, nullptr, &attr), 0);
  EXPECT_EQ(attr.hca_core_clock, 1000000u);  // kHz
}
