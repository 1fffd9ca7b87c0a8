#include "common/topology/generators.h"

#include <cstdint>
#include <string>

namespace ibemu::topology {
namespace {

// A bound on generated fabrics so a typo cannot allocate millions of nodes.
constexpr int64_t kMaxNodes = 1 << 20;

[[noreturn]] void Bad(const std::string& field, const std::string& msg) {
  throw TopologyError("<generated>: " + field + ": " + msg);
}

void Require(bool ok, const std::string& field, const std::string& msg) {
  if (!ok) Bad(field, msg);
}

void CheckPorts(int64_t ports, const std::string& field) {
  Require(ports >= 1 && ports <= kMaxPorts, field,
          "switches need 1.." + std::to_string(kMaxPorts) + " ports, this layout needs " +
              std::to_string(ports));
}

// Multiplies with a ceiling so size checks cannot overflow.
int64_t Mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (a > kMaxNodes || b > kMaxNodes || a * b > kMaxNodes) return kMaxNodes + 1;
  return a * b;
}

void CheckNodes(int64_t nodes, const std::string& what) {
  Require(nodes <= kMaxNodes, what,
          "more than " + std::to_string(kMaxNodes) + " nodes; refusing to generate");
}

int AddSwitch(Topology& t, const std::string& name, int ports, const std::string& role) {
  int i = t.AddNode(NodeType::kSwitch, name, ports);
  t.nodes[i].description = name + " " + role;
  return i;
}

int AddHost(Topology& t, const std::string& name, const std::string& device = "HCA-1") {
  int i = t.AddNode(NodeType::kCa, name, 1);
  t.nodes[i].description = name + " " + device;
  return i;
}

}  // namespace

Topology TestBed(link::LinkRate host_link, link::LinkRate isl) {
  Topology t;
  t.name = "testbed";
  const std::string role = "Infiniscale-IV Mellanox Technologies";
  int s1 = AddSwitch(t, "S1", kTestBedSwitchPorts, role);
  int s2 = AddSwitch(t, "S2", kTestBedSwitchPorts, role);
  for (int h = 1; h <= 7; ++h) {
    int host = AddHost(t, "H" + std::to_string(h), "mlx4_0");
    bool on_s1 = h <= 3;
    int port = on_s1 ? h : h - 3;
    t.Connect({on_s1 ? s1 : s2, port}, {host, 1}, host_link);
  }
  t.Connect({s1, 4}, {s2, 5}, isl);
  t.Validate();
  return t;
}

Topology KaryNTree(int k, int n, link::LinkRate rate) {
  Require(k >= 1, "k", "KaryNTree needs k >= 1, got " + std::to_string(k));
  Require(n >= 1, "n", "KaryNTree needs n >= 1, got " + std::to_string(n));
  CheckPorts(2 * static_cast<int64_t>(k), "k");
  int64_t per_level = 1;
  for (int i = 0; i < n - 1; ++i) per_level = Mul(per_level, k);
  int64_t hosts = Mul(per_level, k);
  CheckNodes(Mul(per_level, n) + hosts, "n");

  Topology t;
  t.name = std::to_string(k) + "-ary " + std::to_string(n) + "-tree";
  const int sw_per_level = static_cast<int>(per_level);
  // pow_k[i] is the weight of digit i of a switch word; digit 0 is the most significant.
  std::vector<int> pow_k(n > 1 ? n - 1 : 0);
  for (int i = n - 2, w = 1; i >= 0; --i, w *= k) pow_k[i] = w;
  auto sw = [&](int level, int word) { return level * sw_per_level + word; };

  for (int l = 0; l < n; ++l)
    for (int w = 0; w < sw_per_level; ++w)
      AddSwitch(t, "L" + std::to_string(l) + "-S" + std::to_string(w), 2 * k,
                "level " + std::to_string(l) + " switch");
  for (int l = 1; l < n; ++l) {
    for (int w = 0; w < sw_per_level; ++w) {
      int digit = (w / pow_k[l - 1]) % k;
      for (int j = 0; j < k; ++j) {
        int parent = w + (j - digit) * pow_k[l - 1];
        t.Connect({sw(l, w), k + 1 + j}, {sw(l - 1, parent), 1 + digit}, rate);
      }
    }
  }
  for (int64_t p = 0; p < hosts; ++p) {
    int host = AddHost(t, "H" + std::to_string(p + 1));
    t.Connect({sw(n - 1, static_cast<int>(p / k)), static_cast<int>(p % k) + 1}, {host, 1}, rate);
  }
  t.Validate();
  return t;
}

Topology FatTree2Level(int radix, int leaves, int spines, int hosts_per_leaf, link::LinkRate rate) {
  CheckPorts(radix, "radix");
  Require(leaves >= 1, "leaves", "need at least one leaf switch");
  Require(spines >= 0, "spines", "cannot be negative");
  Require(hosts_per_leaf >= 0, "hosts_per_leaf", "cannot be negative");
  Require(hosts_per_leaf + spines <= radix, "radix",
          std::to_string(hosts_per_leaf) + " hosts and " + std::to_string(spines) +
              " uplinks do not fit on a leaf of " + std::to_string(radix) + " ports");
  Require(leaves <= radix, "leaves",
          std::to_string(leaves) + " leaves do not fit on a spine of " + std::to_string(radix) +
              " ports");

  Topology t;
  t.name = "fat tree " + std::to_string(leaves) + "x" + std::to_string(spines);
  std::vector<int> spine(spines), leaf(leaves);
  for (int j = 0; j < spines; ++j)
    spine[j] = AddSwitch(t, "Spine" + std::to_string(j + 1), radix, "spine switch");
  for (int i = 0; i < leaves; ++i)
    leaf[i] = AddSwitch(t, "Leaf" + std::to_string(i + 1), radix, "leaf switch");
  for (int i = 0; i < leaves; ++i)
    for (int j = 0; j < spines; ++j)
      t.Connect({leaf[i], hosts_per_leaf + j + 1}, {spine[j], i + 1}, rate);
  for (int i = 0; i < leaves; ++i) {
    for (int h = 0; h < hosts_per_leaf; ++h) {
      int host = AddHost(t, "H" + std::to_string(i * hosts_per_leaf + h + 1));
      t.Connect({leaf[i], h + 1}, {host, 1}, rate);
    }
  }
  t.Validate();
  return t;
}

Topology FatTree648(link::LinkRate rate) {
  Topology t = FatTree2Level(36, 36, 18, 18, rate);
  t.name = "Sun Datacenter InfiniBand Switch 648";
  return t;
}

Topology FatTree3Level(int radix, link::LinkRate rate) {
  CheckPorts(radix, "radix");
  Require(radix >= 2 && radix % 2 == 0, "radix",
          "a three-level fat tree needs an even radix, got " + std::to_string(radix));
  const int h = radix / 2;
  const int64_t hosts = Mul(Mul(radix, h), h);
  CheckNodes(hosts + Mul(h, h) + Mul(2 * radix, h), "radix");

  Topology t;
  t.name = "3-level fat tree of " + std::to_string(radix) + "-port switches";
  auto name = [](const char* p, int a, int b) {
    return p + std::to_string(a) + "." + std::to_string(b);
  };
  std::vector<int> core(h * h);
  for (int j = 0; j < h; ++j)
    for (int m = 0; m < h; ++m)
      core[j * h + m] = AddSwitch(t, name("C", j, m), radix, "core switch");
  std::vector<int> agg(radix * h), leaf(radix * h);
  for (int pod = 0; pod < radix; ++pod) {
    for (int j = 0; j < h; ++j)
      agg[pod * h + j] = AddSwitch(t, name("A", pod, j), radix, "aggregation switch");
    for (int i = 0; i < h; ++i)
      leaf[pod * h + i] = AddSwitch(t, name("L", pod, i), radix, "leaf switch");
  }
  for (int pod = 0; pod < radix; ++pod)
    for (int j = 0; j < h; ++j) {
      for (int i = 0; i < h; ++i)
        t.Connect({leaf[pod * h + i], h + 1 + j}, {agg[pod * h + j], 1 + i}, rate);
      for (int m = 0; m < h; ++m)
        t.Connect({agg[pod * h + j], h + 1 + m}, {core[j * h + m], 1 + pod}, rate);
    }
  int next = 1;
  for (int l = 0; l < radix * h; ++l)
    for (int p = 1; p <= h; ++p) {
      int host = AddHost(t, "H" + std::to_string(next++));
      t.Connect({leaf[l], p}, {host, 1}, rate);
    }
  t.Validate();
  return t;
}

Topology Torus(std::vector<int> dims, int hosts_per_switch, link::LinkRate rate, bool wrap) {
  Require(!dims.empty(), "dims", "need at least one dimension");
  Require(hosts_per_switch >= 0, "hosts_per_switch", "cannot be negative");
  int64_t switches = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    Require(dims[d] >= 1, "dims",
            "dimension " + std::to_string(d) + " has size " + std::to_string(dims[d]));
    switches = Mul(switches, dims[d]);
  }
  const int nd = static_cast<int>(dims.size());
  const int64_t ports = hosts_per_switch + 2 * static_cast<int64_t>(nd);
  CheckPorts(ports, "dims");
  CheckNodes(switches + Mul(switches, hosts_per_switch), "dims");

  Topology t;
  t.name = std::string(wrap ? "torus" : "mesh");
  for (size_t d = 0; d < dims.size(); ++d) t.name += (d ? "x" : " ") + std::to_string(dims[d]);
  // stride[d]: index distance between neighbours along dimension d (last dimension fastest).
  std::vector<int> stride(nd);
  for (int d = nd - 1, s = 1; d >= 0; --d) {
    stride[d] = s;
    s *= dims[d];
  }
  auto coord = [&](int idx, int d) { return (idx / stride[d]) % dims[d]; };
  auto label = [&](int idx) {
    std::string s;
    for (int d = 0; d < nd; ++d) s += (d ? "." : "") + std::to_string(coord(idx, d));
    return s;
  };

  const int n = static_cast<int>(switches);
  for (int i = 0; i < n; ++i)
    AddSwitch(t, "S" + label(i), static_cast<int>(ports), wrap ? "torus switch" : "mesh switch");
  for (int i = 0; i < n; ++i) {
    for (int d = 0; d < nd; ++d) {
      int c = coord(i, d);
      int minus_port = hosts_per_switch + 2 * d + 1, plus_port = minus_port + 1;
      if (c + 1 < dims[d])
        t.Connect({i, plus_port}, {i + stride[d], minus_port}, rate);
      else if (wrap && dims[d] > 2)  // size 2: the c+1 cable already joins the pair
        t.Connect({i, plus_port}, {i - c * stride[d], minus_port}, rate);
    }
  }
  for (int i = 0; i < n; ++i) {
    for (int h = 1; h <= hosts_per_switch; ++h) {
      int host = AddHost(t, "H" + label(i) + "-" + std::to_string(h));
      t.Connect({i, h}, {host, 1}, rate);
    }
  }
  t.Validate();
  return t;
}

Topology Dragonfly(int a, int p, int h, int g, link::LinkRate rate) {
  Require(a >= 1, "a", "need at least one router per group");
  Require(p >= 0, "p", "cannot be negative");
  Require(h >= 0, "h", "cannot be negative");
  Require(g >= 1, "g", "need at least one group");
  Require(static_cast<int64_t>(a) * h >= g - 1, "h",
          "a*h = " + std::to_string(static_cast<int64_t>(a) * h) +
              " global ports per group cannot reach the other " + std::to_string(g - 1) +
              " groups");
  const int64_t ports = static_cast<int64_t>(p) + (a - 1) + h;
  CheckPorts(ports, "a");
  int64_t routers = Mul(a, g);
  CheckNodes(routers + Mul(routers, p), "g");

  Topology t;
  t.name = "dragonfly a=" + std::to_string(a) + " p=" + std::to_string(p) +
           " h=" + std::to_string(h) + " g=" + std::to_string(g);
  auto router = [&](int group, int r) { return group * a + r; };
  for (int i = 0; i < g; ++i)
    for (int r = 0; r < a; ++r)
      AddSwitch(t, "G" + std::to_string(i) + "-R" + std::to_string(r), static_cast<int>(ports),
                "dragonfly router");

  // Local: all-to-all inside a group; router r reaches router o on port p+1+(o<r ? o : o-1).
  for (int i = 0; i < g; ++i)
    for (int r = 0; r < a; ++r)
      for (int o = r + 1; o < a; ++o)
        t.Connect({router(i, r), p + 1 + (o - 1)}, {router(i, o), p + 1 + r}, rate);

  // Global: consecutive arrangement (see generators.h).
  const int64_t rounds = g > 1 ? static_cast<int64_t>(a) * h / (g - 1) : 0;
  auto global_port = [&](int group, int64_t gp) -> PortRef {
    return {router(group, static_cast<int>(gp / h)), p + a + static_cast<int>(gp % h)};
  };
  for (int64_t m = 0; m < rounds; ++m)
    for (int i = 0; i < g; ++i)
      for (int u = i + 1; u < g; ++u)
        t.Connect(global_port(i, m * (g - 1) + (u - 1)), global_port(u, m * (g - 1) + i), rate);

  for (int i = 0; i < g; ++i) {
    for (int r = 0; r < a; ++r) {
      for (int x = 1; x <= p; ++x) {
        int host = AddHost(
            t, "G" + std::to_string(i) + "-R" + std::to_string(r) + "-H" + std::to_string(x));
        t.Connect({router(i, r), x}, {host, 1}, rate);
      }
    }
  }
  t.Validate();
  return t;
}

}  // namespace ibemu::topology
