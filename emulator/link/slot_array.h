// A port's per-slot state (one entry per VL, or per VL and credit class), held inside the port
// when there is one slot, as on every link of a fabric with one data VL and standard IB credits,
// and on the heap otherwise. In a std::vector each port's credits were a line of the heap of
// their own, a cache miss at nearly every packet's arrival, release and transmit.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace ibemu::link {

template <class T>
class SlotArray {
 public:
  SlotArray() = default;
  SlotArray(const SlotArray& o) { *this = o; }
  SlotArray& operator=(const SlotArray& o) {
    if (this != &o) {
      Resize(o.size_);
      std::copy(o.begin(), o.end(), data_);
    }
    return *this;
  }
  ~SlotArray() { Free(); }

  void assign(size_t n, const T& v) {
    Resize(n);
    std::fill(data_, data_ + n, v);
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

 private:
  void Free() {
    if (data_ != &inline_) delete[] data_;
    data_ = &inline_;
  }
  void Resize(size_t n) {
    Free();
    size_ = 0;  // what the inline storage holds should `new` throw
    if (n > 1) data_ = new T[n];
    size_ = static_cast<uint32_t>(n);
  }

  T* data_ = &inline_;
  uint32_t size_ = 0;
  T inline_{};
};

}  // namespace ibemu::link
