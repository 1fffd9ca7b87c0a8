// The HCA's DMA into the memory of the program that owns a QP or an MR: the program is another
// process (a verbs program attached through hostlib/verbs), so its memory is read and written
// with process_vm_readv/process_vm_writev, which need the same user and, under Yama's
// ptrace_scope 1, the program's consent (the library gives it with PR_SET_PTRACER). The fabric
// trusts the pid a program gives when it opens its session; it can only reach processes of its
// own user, which that user can reach anyway.
#pragma once
#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ibemu::hca {

// [addr, addr + n) of `pid` from or into the local buffers `local` laid end to end (their
// lengths sum to n): one system call however many buffers, so a chunk of a message moves between
// the program and its packets' payloads without being copied on the way. False when the range
// is not mapped in `pid` (or the process is gone, or not ours to touch).
bool HostRead(pid_t pid, uint64_t addr, const iovec* local, int count);
bool HostWrite(pid_t pid, uint64_t addr, const iovec* local, int count);

// The bytes [from, from + n) of the buffers `iov` lays end to end, as buffers.
std::vector<iovec> SliceIovecs(const std::vector<iovec>& iov, size_t from, size_t n);

// What HostRead and HostWrite do. The fuzz target, which opens sessions with pids made of random
// bytes, replaces them so that no process is touched.
struct HostMemoryOps {
  bool (*read)(pid_t, uint64_t, const iovec*, int);
  bool (*write)(pid_t, uint64_t, const iovec*, int);
};
void SetHostMemoryOps(HostMemoryOps ops);

}  // namespace ibemu::hca
