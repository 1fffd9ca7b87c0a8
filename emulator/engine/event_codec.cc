#include "emulator/engine/event_codec.h"

#include <cstring>

namespace ibemu::engine {
namespace {

template <typename T>
void Put(std::string* b, T v) {
  char raw[sizeof(T)];
  std::memcpy(raw, &v, sizeof(T));  // x86-64 and aarch64 are little-endian; frames are too
  b->append(raw, sizeof(T));
}

class Reader {
 public:
  Reader(const void* d, size_t n) : p_(static_cast<const uint8_t*>(d)), end_(p_ + n) {}
  template <typename T>
  bool Get(T* v) {
    if (static_cast<size_t>(end_ - p_) < sizeof(T)) return false;
    std::memcpy(v, p_, sizeof(T));
    p_ += sizeof(T);
    return true;
  }
  bool Bytes(uint8_t* out, size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) return false;
    std::memcpy(out, p_, n);
    p_ += n;
    return true;
  }
  bool done() const { return p_ == end_; }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

constexpr size_t kHeadBytes = 4 + 8 + 8 + 4 + 4;

}  // namespace

void BatchWriter::Reset(uint32_t from) {
  buf_.clear();
  count_ = 0;
  min_time_ = INT64_MAX;
  Put(&buf_, from);
  Put<int64_t>(&buf_, 0);
  Put<int64_t>(&buf_, 0);
  Put<uint32_t>(&buf_, 0);
  Put<uint32_t>(&buf_, 0);
}

void BatchWriter::Add(const Event& e) {
  Put(&buf_, e.kind);
  Put(&buf_, e.port);
  Put(&buf_, e.lp);
  Put(&buf_, e.src);
  Put(&buf_, e.seq);
  Put(&buf_, e.time);
  Put(&buf_, e.a);
  Put(&buf_, e.b);
  Put<uint8_t>(&buf_, static_cast<uint8_t>((e.pkt ? 1 : 0) | (e.pkt && e.pkt->mad ? 2 : 0)));
  if (e.pkt) {
    const Packet& p = *e.pkt;
    Put(&buf_, p.hdr_len);
    buf_.append(reinterpret_cast<const char*>(p.hdr.data()), p.hdr_len);
    Put(&buf_, p.payload_len);
    Put(&buf_, p.flow);
    Put(&buf_, p.id);
    Put(&buf_, p.created);
    Put(&buf_, p.injected);
    Put(&buf_, p.credit_class);
    if (p.mad) buf_.append(reinterpret_cast<const char*>(p.mad->data()), p.mad->size());
  }
  ++count_;
  if (e.time < min_time_) min_time_ = e.time;
}

const std::string& BatchWriter::Finish(SimTime promise, SimTime need, uint32_t ack) {
  std::memcpy(buf_.data() + 4, &promise, sizeof promise);
  std::memcpy(buf_.data() + 12, &need, sizeof need);
  std::memcpy(buf_.data() + 20, &ack, sizeof ack);
  std::memcpy(buf_.data() + 24, &count_, sizeof count_);
  return buf_;
}

bool DecodeBatch(const void* data, size_t len, PacketPool* pool, Batch* head,
                 std::vector<Event>* events) {
  if (len < kHeadBytes) return false;
  Reader r(data, len);
  r.Get(&head->from);
  r.Get(&head->promise);
  r.Get(&head->need);
  r.Get(&head->ack);
  r.Get(&head->count);
  for (uint32_t i = 0; i < head->count; ++i) {
    Event e;
    uint8_t flags = 0;
    if (!(r.Get(&e.kind) && r.Get(&e.port) && r.Get(&e.lp) && r.Get(&e.src) && r.Get(&e.seq) &&
          r.Get(&e.time) && r.Get(&e.a) && r.Get(&e.b) && r.Get(&flags)))
      return false;
    if (flags & 1) {
      Packet* p = pool->Get();
      bool ok = r.Get(&p->hdr_len) && p->hdr_len <= kMaxHeaderBytes &&
                r.Bytes(p->hdr.data(), p->hdr_len) && r.Get(&p->payload_len) && r.Get(&p->flow) &&
                r.Get(&p->id) && r.Get(&p->created) && r.Get(&p->injected) &&
                r.Get(&p->credit_class);
      if (ok && (flags & 2)) {
        p->mad = std::make_unique<MadBytes>();
        ok = r.Bytes(p->mad->data(), p->mad->size());
      }
      if (!ok) {
        pool->Put(p);
        return false;
      }
      e.pkt = p;
    }
    events->push_back(e);
  }
  return r.done();
}

}  // namespace ibemu::engine
