#include "emulator/cc/santos/rate_functions.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ibemu::cc::santos {
namespace {

// Fast Increase, Multiplicative Decrease: F_inc(t) = R_min * m^(t / T_rec), so
// f_inc(r) = r * m^(R_min / r) [S:L222-L246].
class Fimd : public RateFunction {
 public:
  Fimd(double r_min, double m) : r_min_(r_min), m_(m) {}
  double Decrease(double r) const override { return std::max(r / m_, r_min_); }
  double Increase(double r) const override { return std::min(r * std::pow(m_, r_min_ / r), 1.0); }

 private:
  double r_min_, m_;
};

// Linear Inter-Packet Delay: a mark adds one packet time to the IPD (r = 1 / (1 + ipd)), and
// F_inc(t) = 1 / (1 / R_min - t / T_rec), so f_inc(r) = r / (1 - R_min) [S:L252-L276].
class Lipd : public RateFunction {
 public:
  explicit Lipd(double r_min) : r_min_(r_min) {}
  double Decrease(double r) const override { return std::max(1 / (1 / r + 1), r_min_); }
  double Increase(double r) const override { return std::min(r / (1 - r_min_), 1.0); }

 private:
  double r_min_;
};

// The baseline: FIMD's decrease, and a linear increase in time with the slope that recovers
// R_min -> 2 R_min in T_rec, R_min^2 per packet time, so f_inc(r) = r + R_min^2 / r. The paper
// prints no formula; this one gives its 133.7 ms from R_min to R_max [S:L302-L304].
class Aimd : public RateFunction {
 public:
  Aimd(double r_min, double m) : r_min_(r_min), m_(m) {}
  double Decrease(double r) const override { return std::max(r / m_, r_min_); }
  double Increase(double r) const override { return std::min(r + r_min_ * r_min_ / r, 1.0); }

 private:
  double r_min_, m_;
};

}  // namespace

const std::vector<std::string>& RateFunctionNames() {
  static const std::vector<std::string> names = {"aimd", "fimd", "lipd"};
  return names;
}

std::unique_ptr<RateFunction> MakeRateFunction(const std::string& name, double r_min, double m) {
  if (name == "fimd") return std::make_unique<Fimd>(r_min, m);
  if (name == "lipd") return std::make_unique<Lipd>(r_min);
  if (name == "aimd") return std::make_unique<Aimd>(r_min, m);
  throw std::invalid_argument("no rate function '" + name + "'");
}

}  // namespace ibemu::cc::santos
