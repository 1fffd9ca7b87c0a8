#include "emulator/hca/host_memory.h"

#include <algorithm>

namespace ibemu::hca {
namespace {

size_t Total(const iovec* local, int count) {
  size_t n = 0;
  for (int i = 0; i < count; ++i) n += local[i].iov_len;
  return n;
}

bool ProcessRead(pid_t pid, uint64_t addr, const iovec* local, int count) {
  size_t n = Total(local, count);
  iovec remote{reinterpret_cast<void*>(addr), n};
  return process_vm_readv(pid, local, count, &remote, 1, 0) == static_cast<ssize_t>(n);
}

bool ProcessWrite(pid_t pid, uint64_t addr, const iovec* local, int count) {
  size_t n = Total(local, count);
  iovec remote{reinterpret_cast<void*>(addr), n};
  return process_vm_writev(pid, local, count, &remote, 1, 0) == static_cast<ssize_t>(n);
}

HostMemoryOps g_ops{ProcessRead, ProcessWrite};

}  // namespace

void SetHostMemoryOps(HostMemoryOps ops) {
  g_ops = ops;
}

bool HostRead(pid_t pid, uint64_t addr, const iovec* local, int count) {
  return Total(local, count) == 0 || g_ops.read(pid, addr, local, count);
}

bool HostWrite(pid_t pid, uint64_t addr, const iovec* local, int count) {
  return Total(local, count) == 0 || g_ops.write(pid, addr, local, count);
}

std::vector<iovec> SliceIovecs(const std::vector<iovec>& iov, size_t from, size_t n) {
  std::vector<iovec> out;
  size_t at = 0;
  for (const iovec& v : iov) {
    if (n == 0) break;
    if (from < at + v.iov_len) {
      size_t skip = from > at ? from - at : 0;
      size_t take = std::min(v.iov_len - skip, n);
      out.push_back({static_cast<uint8_t*>(v.iov_base) + skip, take});
      from += take;
      n -= take;
    }
    at += v.iov_len;
  }
  return out;
}

}  // namespace ibemu::hca
