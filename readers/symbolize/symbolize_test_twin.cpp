// Built at -O0 (CMakeLists.txt): its copy of twin::sumBelow is larger than
// symbolize_test.cpp's, which the linker keeps.
#include "symbolize_test_twin.h"

namespace twin {

int sumBelowFromUnoptimised(int n) { return sumBelow(n); }

}  // namespace twin
