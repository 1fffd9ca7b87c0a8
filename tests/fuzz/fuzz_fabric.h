// The fabric the fabric-level fuzz targets run against: the thesis test bed (two switches, seven
// hosts; 4x DDR hosts, 4x QDR trunk) with ports left in Init for an external SM, so that
// management traffic from the fuzzer meets the same agents a real SM would.
#pragma once
#include <memory>

#include "common/topology/generators.h"
#include "emulator/engine/partition.h"
#include "emulator/fabric/fabric.h"

namespace ibemu::fuzzing {

struct FuzzFabric {
  scenario::Scenario s;
  std::unique_ptr<fabric::Fabric> f;
  std::unique_ptr<engine::Partition> part;

  FuzzFabric() {
    s.topo = topology::TestBed({link::Width::k4x, link::Speed::kDDR},
                               {link::Width::k4x, link::Speed::kQDR});
    s.subnet_manager = "external";
    f = fabric::BuildFabric(s);
    part = std::make_unique<engine::Partition>(f->devices.size());
    for (auto& d : f->devices) part->Add(d.get());
  }
  // After the MAD clients are set: links train for 10 us.
  void Start() {
    part->StartAll();
    part->RunUntil(10 * link::kPsPerUs);
  }
};

}  // namespace ibemu::fuzzing
