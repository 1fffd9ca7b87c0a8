#include "emulator/hca/host_memory.h"

#include <sys/uio.h>

namespace ibemu::hca {
namespace {

bool ProcessRead(pid_t pid, uint64_t addr, void* dst, size_t n) {
  iovec local{dst, n};
  iovec remote{reinterpret_cast<void*>(addr), n};
  return process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(n);
}

bool ProcessWrite(pid_t pid, uint64_t addr, const void* src, size_t n) {
  iovec local{const_cast<void*>(src), n};
  iovec remote{reinterpret_cast<void*>(addr), n};
  return process_vm_writev(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(n);
}

HostMemoryOps g_ops{ProcessRead, ProcessWrite};

}  // namespace

void SetHostMemoryOps(HostMemoryOps ops) {
  g_ops = ops;
}

bool HostRead(pid_t pid, uint64_t addr, void* dst, size_t n) {
  return n == 0 || g_ops.read(pid, addr, dst, n);
}

bool HostWrite(pid_t pid, uint64_t addr, const void* src, size_t n) {
  return n == 0 || g_ops.write(pid, addr, src, n);
}

}  // namespace ibemu::hca
