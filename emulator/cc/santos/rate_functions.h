// The source response functions of Santos, Turner and Janakiraman ("End-to-End Congestion Control
// for InfiniBand", INFOCOM 2003, §V; ../shared/notes/mvcm_santos.md B.1.5): a flow's rate r moves
// to f_dec(r) on a marked ACK and to f_inc(r) on an unmarked one. Rates are normalised to the
// link (R_max = 1) and never leave [R_min, 1]. f_inc is the increase profile F_inc advanced by the
// nominal time to the next ACK, 1/r packet times, so that every function recovers from one mark
// in T_rec = 1/R_min packet times at any rate (the paper's condition 3; AIMD meets it only at
// its lowest rate).
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace ibemu::cc::santos {

class RateFunction {
 public:
  virtual ~RateFunction() = default;
  virtual double Decrease(double r) const = 0;  // f_dec, on a marked ACK
  virtual double Increase(double r) const = 0;  // f_inc, on an unmarked ACK
};

// `name` is one of RateFunctionNames(); `r_min` in (0, 1); `m` > 1 is FIMD's and AIMD's
// multiplicative decrease (LIPD has none).
std::unique_ptr<RateFunction> MakeRateFunction(const std::string& name, double r_min, double m);
const std::vector<std::string>& RateFunctionNames();

}  // namespace ibemu::cc::santos
