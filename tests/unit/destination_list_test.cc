// A shared destination list with the source's own LID left out must read exactly as a list with
// that LID removed: the same size and the same element at every position, so that a draw picks
// the same destination (and a run keeps its digest).
#include "emulator/hca/destination_list.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace ibemu::hca {
namespace {

std::vector<uint16_t> Without(const std::vector<uint16_t>& v, uint16_t lid) {
  std::vector<uint16_t> r;
  for (uint16_t l : v)
    if (l != lid) r.push_back(l);
  return r;
}

std::vector<uint16_t> Elements(const DestinationList& d) {
  std::vector<uint16_t> r;
  for (size_t i = 0; i < d.size(); ++i) r.push_back(d[i]);
  return r;
}

TEST(DestinationList, LeavingOutALidReadsAsTheListWithoutIt) {
  auto all = std::make_shared<const std::vector<uint16_t>>(std::vector<uint16_t>{7, 3, 9, 1, 12});
  for (uint16_t lid : {7, 3, 9, 1, 12, 5}) {  // first, middle, last, absent
    DestinationList d = DestinationList::AllBut(all, lid);
    std::vector<uint16_t> want = Without(*all, lid);
    ASSERT_EQ(d.size(), want.size()) << lid;
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(d[i], want[i]) << lid << " at " << i;
    EXPECT_EQ(Elements(d), want);
  }
}

TEST(DestinationList, ALidListedTwiceIsLeftOutEveryTime) {
  auto all = std::make_shared<const std::vector<uint16_t>>(std::vector<uint16_t>{4, 2, 4, 6});
  DestinationList d = DestinationList::AllBut(all, 4);
  EXPECT_EQ(Elements(d), (std::vector<uint16_t>{2, 6}));
}

TEST(DestinationList, OnlyItselfLeavesNothing) {
  auto all = std::make_shared<const std::vector<uint16_t>>(std::vector<uint16_t>{5});
  EXPECT_TRUE(DestinationList::AllBut(all, 5).empty());
  EXPECT_EQ(DestinationList({8}).size(), 1u);
  EXPECT_TRUE(DestinationList().empty());
}

}  // namespace
}  // namespace ibemu::hca
