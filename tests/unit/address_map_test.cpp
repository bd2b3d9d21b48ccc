// Replay's map from the program's allocations to the replay's: an address
// freed by one thread and given to another may be numbered alloc-then-free
// in captures made before allocations were numbered at their return; the
// free of the older allocation leaves the newer one's range.
#include <gtest/gtest.h>

#include "address_map.h"

namespace gtap::replay {
namespace {

TEST(AddressMap, AFreeLeavesTheNewerAllocationAtItsAddress) {
  uint8_t older[64], newer[64];
  AddressMap m;
  m.add(0x1000, {64, older, 5});
  m.add(0x1000, {64, newer, 19});  // the same address, given again
  m.remove(0x1000, 5);             // the older allocation's free, numbered after
  auto hit = m.find(0x1010);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->range->id, 19u);
  EXPECT_EQ(hit->replay(), newer + 0x10);
  m.remove(0x1000, 19);
  EXPECT_FALSE(m.find(0x1010).has_value());
}

TEST(AddressMap, RangesTranslateOffsetsAndEndAtTheirSize) {
  uint8_t a[16], b[32];
  AddressMap m;
  m.add(0x1000, {16, a, 1});
  m.add(0x2000, {32, b, 2});
  EXPECT_EQ(m.find(0x100f)->replay(), a + 15);
  EXPECT_FALSE(m.find(0x1010).has_value());
  EXPECT_FALSE(m.find(0xfff).has_value());
  EXPECT_EQ(m.find(0x2000)->range->id, 2u);
}

}  // namespace
}  // namespace gtap::replay
