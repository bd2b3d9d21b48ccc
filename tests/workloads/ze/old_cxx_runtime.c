/* An old C++ runtime as an older image has it: a libstdc++.so.6 whose newest
   symbol version is GLIBCXX_3.4 (old_cxx_runtime.map), for the test that gtap
   run refuses to preload a bundle's libgtap.so, which needs a newer one, into
   a program that loads this (the loader would stop the program at start). */
int old_cxx_runtime_answer(void) { return 42; }
