// `ibemu mpirun`: an MPI job on a fabric that is up, each rank behind its own emulated HCA and
// every message across the emulated fabric (docs/mpi.md).
#pragma once
#include <string>
#include <vector>

namespace ibemu::cli {

struct MpirunOptions {
  std::string fabric = "default";
  std::string hosts;    // "H1,H3,...": rank i behind the i-th; empty: the fabric's CAs in order
  std::string hostmap;  // a file of "<node> [slots=N]" lines, the ranks in order
  std::vector<std::string> mpirun_args;  // given to mpirun unchanged
};

// The rank placement: one node per rank, checked against the fabric's CAs. `np` is the rank
// count the mpirun arguments give (0 when they give none). Throws naming the file and line, or
// the option, of a node the fabric lacks or a placement too small for `np`.
std::vector<std::string> PlaceRanks(const MpirunOptions& o, const std::vector<std::string>& cas,
                                    int np);

// The rank count of -np/-n/--np/-c N (or --np=N) among mpirun's own options (before the
// program; the values of Open MPI 4's options such as --mca a b and -x VAR are skipped), summed
// over the app contexts of an MPMD line (a : b), or 0 when they do not all give one.
int RankCount(const std::vector<std::string>& mpirun_args);

// Sets the environment (libraries, fabric, placement, Open MPI's components) and execs mpirun
// ($IBEMU_MPIRUN, else mpirun from PATH). Returns only on failure.
int Mpirun(const MpirunOptions& o);

}  // namespace ibemu::cli
