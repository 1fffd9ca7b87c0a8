// The simulation's state (devices, ports, queues, packets, the event ring) is tens of megabytes
// touched at random, one packet-hop at a time, so with 4 KiB pages its cache misses are likely
// TLB misses too (the 648-node bench runs 1.24x faster on huge pages). glibc backs its heap with
// transparent huge pages when the tunable glibc.malloc.hugetlb=1 is set, which it reads only at
// start-up, so with IBEMU_HUGE_PAGES=1 ibemu starts itself again once with it set. Not the default:
// on the 11,664-host tree it made the run's peak memory 1.24x larger and the run no faster
// (docs/performance.md, "Stop 31").
#pragma once

namespace ibemu::cli {

// With IBEMU_HUGE_PAGES=1, re-executes this program with glibc.malloc.hugetlb=1 added to
// GLIBC_TUNABLES, unless it is already there or the program runs under valgrind (whose tools
// would not follow the new image). In the new image it puts GLIBC_TUNABLES back as it was, so that
// the programs ibemu starts (tools, MPI ranks, partitions) see the caller's environment. Returns
// when it does not re-execute, or when the exec fails.
void ReexecWithHugePages(char** argv);

}  // namespace ibemu::cli
