// JSON Lines: one object a line for every API call and device operation
// (docs/export.md).
#include <ostream>

#include "gtap/readers/json.h"
#include "gtap/readers/record_export.h"

namespace gtap::readers {

const char* operationLevel(const DeviceOp& op) {
  if (op.recordedBy != schema::Api::IREE_HAL) return "device";
  return op.operation == "host_execution" ? "host" : "hal";
}

namespace {

// A HAL-level record's method, thread and call (the API call that issued it:
// the thread's event index of its begin), command buffer, the buffers it
// binds or touches, and the semaphore values it waits for and signals.
void writeHalOperation(const DeviceOp& op, std::ostream& out) {
  out << ",\"operation\":\"" << jsonEscape(op.operation) << "\",\"thread\":" << op.thread
      << ",\"call_index\":" << op.appendIndex << ",\"command_buffer\":" << op.list << ",\"buffers\":[";
  for (size_t i = 0; i < op.bindings.size(); ++i)
    out << (i ? "," : "") << "[" << op.bindings[i].buffer << "," << op.bindings[i].offset << ","
        << op.bindings[i].length << "]";
  auto semaphores = [&](const char* key, const std::vector<DeviceOp::SemaphoreValue>& values) {
    out << "],\"" << key << "\":[";
    for (size_t i = 0; i < values.size(); ++i)
      out << (i ? "," : "") << "[" << values[i].semaphore << "," << values[i].value << "]";
  };
  semaphores("waits", op.waits);
  semaphores("signals", op.signals);
  out << "]";
}

}  // namespace

void writeJsonLines(const std::vector<LoadedCapture>& loaded, std::ostream& out) {
  for (const auto& lc : loaded) {
    const auto& c = *lc.capture;
    std::string process = jsonEscape(c.label());
    c.forEachCall([&](const ApiCall& call) {
      out << "{\"type\":\"api\",\"process\":\"" << process << "\",\"pid\":" << c.process().pid
          << ",\"thread\":" << call.thread << ",\"function\":\"" << jsonEscape(c.functionName(call.function))
          << "\",\"begin_ns\":" << call.beginNs;
      if (call.finished) out << ",\"end_ns\":" << call.endNs << ",\"result\":" << call.result;
      else out << ",\"finished\":false";
      out << "}\n";
    });
    for (size_t index = 0; index < lc.work.ops.size(); ++index) {
      const auto& op = lc.work.ops[index];
      out << "{\"type\":\"device\",\"process\":\"" << process << "\",\"pid\":" << c.process().pid
          << ",\"index\":" << index << ",\"kind\":\"" << opKindName(op.kind) << "\",\"name\":\"" << jsonEscape(op.name)
          << "\",\"queue\":\"" << jsonEscape(lc.work.queueName(op.queue)) << "\",\"groups\":["
          << op.groupCount[0] << "," << op.groupCount[1] << "," << op.groupCount[2] << "],\"group_size\":["
          << op.groupSize[0] << "," << op.groupSize[1] << "," << op.groupSize[2] << "],\"bytes\":" << op.bytes;
      if (op.kind == schema::DeviceOpKind::COPY) out << ",\"direction\":\"" << directionName(op.direction) << "\"";
      out << ",\"submit_ns\":" << op.submitNs;
      if (op.timed) out << ",\"start_ns\":" << op.startNs << ",\"end_ns\":" << op.endNs;
      else out << ",\"untimed\":\"" << jsonEscape(op.note) << "\"";
      out << ",\"level\":\"" << operationLevel(op) << "\"";
      if (op.recordedBy == schema::Api::IREE_HAL) writeHalOperation(op, out);
      // The join of HAL and device dispatches, by the index of the other line.
      if (op.halDispatch != DeviceOp::kNone)
        out << ",\"hal_dispatch\":" << op.halDispatch << ",\"hal_submission\":" << op.halSubmission;
      if (op.recordedBy == schema::Api::IREE_HAL && op.operation == "dispatch")
        out << ",\"device_dispatches\":" << op.deviceDispatches;
      out << "}\n";
    }
  }
}

}  // namespace gtap::readers
