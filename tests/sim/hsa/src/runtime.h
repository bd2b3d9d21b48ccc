// What the last hsa_shut_down tears down, part by part (each in its own file).
#pragma once

namespace sim_hsa {

void destroyAllQueues();       // queue.cpp: stops packet processors
void stopCopyEngine();         // copy_engine.cpp: drops copies not started yet
void stopAsyncEvents();        // async_events.cpp: forgets handlers
void destroyAllCodeObjects();  // code_object.cpp: readers, executables

}  // namespace sim_hsa
