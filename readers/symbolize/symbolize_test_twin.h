// An inline function that two objects of the test program emit, compiled
// with different optimisation (symbolize_test_twin.cpp is built at -O0), so
// that the two copies differ in size and the linker keeps only one.
#pragma once

namespace twin {

[[gnu::noinline]] inline int sumBelow(int n) {
  int sum = 0;
  for (int i = 0; i < n; ++i) sum += i * i + (i ^ n);
  return sum;
}

// Calls sumBelow from the -O0 object, so that its copy is emitted there too.
int sumBelowFromUnoptimised(int n);

}  // namespace twin
