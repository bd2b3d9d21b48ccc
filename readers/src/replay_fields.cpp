#include "gtap/readers/replay_fields.h"

#include <cstdio>

#include "gtap/readers/json.h"

namespace gtap::readers {

namespace {

using Kind = ReplayField::Kind;

struct ValueSpec {
  const char* name;
  unsigned count;  // > 1: a tuple of that many values
  Kind kind;
};

// What an op's generic fields hold (docs/replay.md, Records).
struct Layout {
  const char* object = nullptr;       // name of `object`, or nullptr when unused
  std::vector<const char*> objects;   // names of the leading `objects`
  const char* objectsRest = nullptr;  // name of the list the remaining `objects` form
  std::vector<ValueSpec> values;
  std::vector<const char*> addresses;
};

ValueSpec num(const char* name) { return {name, 1, Kind::number}; }
ValueSpec triple(const char* name) { return {name, 3, Kind::tuple}; }

Layout layoutOf(schema::ReplayOp op) {
  using O = schema::ReplayOp;
  const std::vector<const char*> appendEvents = {"signal"};
  switch (op) {
    case O::DEVICE:
      return {"device", {}, nullptr,
              {num("driverIndex"), num("deviceIndex"), {"vendorId", 1, Kind::hex}, {"deviceId", 1, Kind::hex}}, {}};
    case O::CONTEXT_CREATE: return {"context", {}, "devices", {num("flags")}, {}};
    case O::CONTEXT_DESTROY: return {"context", {}, nullptr, {}, {}};
    case O::MEM_ALLOC:
      return {"allocation", {"context", "device"}, nullptr, {num("kind"), num("size"), num("alignment")}, {"address"}};
    case O::MEM_FREE: return {"allocation", {"context"}, nullptr, {}, {"address"}};
    case O::MODULE_CREATE: return {"module", {"context", "device"}, nullptr, {num("format")}, {}};
    case O::MODULE_DESTROY: return {"module", {}, nullptr, {}, {}};
    case O::KERNEL_CREATE: return {"kernel", {"module"}, nullptr, {num("flags")}, {}};
    case O::KERNEL_DESTROY: return {"kernel", {}, nullptr, {}, {}};
    case O::KERNEL_SET_GROUP_SIZE: return {"kernel", {}, nullptr, {triple("groupSize")}, {}};
    case O::KERNEL_SET_ARGUMENT:
      return {"kernel", {}, nullptr, {num("index"), num("size"), num("hasValue")}, {}};
    case O::KERNEL_SET_INDIRECT_ACCESS: return {"kernel", {}, nullptr, {num("flags")}, {}};
    case O::KERNEL_SET_GLOBAL_OFFSET: return {"kernel", {}, nullptr, {triple("offset")}, {}};
    case O::QUEUE_CREATE:
      return {"queue", {"context", "device"}, nullptr,
              {num("ordinal"), num("index"), num("flags"), num("mode"), num("priority")}, {}};
    case O::QUEUE_DESTROY: return {"queue", {}, nullptr, {}, {}};
    case O::LIST_CREATE: return {"list", {"context", "device"}, nullptr, {num("ordinal"), num("flags")}, {}};
    case O::LIST_CREATE_IMMEDIATE:
      return {"list", {"context", "device"}, nullptr,
              {num("ordinal"), num("index"), num("flags"), num("mode"), num("priority")}, {}};
    case O::LIST_CLOSE:
    case O::LIST_RESET:
    case O::LIST_DESTROY: return {"list", {}, nullptr, {}, {}};
    case O::EVENT_POOL_CREATE: return {"pool", {"context"}, "devices", {num("flags"), num("count")}, {}};
    case O::EVENT_POOL_DESTROY: return {"pool", {}, nullptr, {}, {}};
    case O::EVENT_CREATE:
      return {"event", {"pool"}, nullptr, {num("index"), num("signalScope"), num("waitScope")}, {}};
    case O::EVENT_DESTROY:
    case O::EVENT_HOST_SIGNAL:
    case O::EVENT_HOST_RESET:
    case O::EVENT_QUERY_STATUS: return {"event", {}, nullptr, {}, {}};
    case O::EVENT_HOST_SYNCHRONIZE: return {"event", {}, nullptr, {num("timeout")}, {}};
    case O::FENCE_CREATE: return {"fence", {"queue"}, nullptr, {num("flags")}, {}};
    case O::FENCE_DESTROY:
    case O::FENCE_RESET:
    case O::FENCE_QUERY_STATUS: return {"fence", {}, nullptr, {}, {}};
    case O::FENCE_HOST_SYNCHRONIZE: return {"fence", {}, nullptr, {num("timeout")}, {}};
    case O::QUEUE_SYNCHRONIZE: return {"queue", {}, nullptr, {num("timeout")}, {}};
    case O::EXECUTE: return {"queue", {"fence"}, "lists", {num("firstDispatch"), num("dispatches")}, {}};
    case O::LAUNCH_KERNEL:
      return {"list", {"kernel", "signal"}, "waits", {triple("groups"), num("cooperative"), num("dispatch")}, {}};
    case O::COPY: return {"list", appendEvents, "waits", {num("size")}, {"dst", "src"}};
    case O::COPY_REGION:
      return {"list", appendEvents, "waits",
              {triple("dstOrigin"), triple("dstExtent"), num("dstPitch"), num("dstSlicePitch"), triple("srcOrigin"),
               triple("srcExtent"), num("srcPitch"), num("srcSlicePitch")},
              {"dst", "src"}};
    case O::FILL: return {"list", appendEvents, "waits", {num("size")}, {"dst"}};
    case O::BARRIER: return {"list", appendEvents, "waits", {}, {}};
    case O::SIGNAL_EVENT:
    case O::EVENT_RESET: return {"list", {"event"}, nullptr, {}, {}};
    case O::WAIT_ON_EVENTS: return {"list", {}, "events", {}, {}};
    case O::HOST_DATA: return {"allocation", {}, nullptr, {num("target"), num("offset")}, {"address"}};
    case O::READ_BACK: return {"copy", {}, nullptr, {num("offset")}, {"dst"}};
    case O::SCOPE_BEGIN:
    case O::SCOPE_END:
    case O::UNSUPPORTED: return {};
  }
  return {};
}

const char* textName(schema::ReplayOp op) {
  using O = schema::ReplayOp;
  switch (op) {
    case O::DEVICE: return "name";
    case O::MODULE_CREATE: return "buildFlags";
    case O::KERNEL_CREATE: return "name";
    case O::SCOPE_BEGIN:
    case O::SCOPE_END: return "scope";
    case O::UNSUPPORTED: return "reason";
    default: return "text";
  }
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::vector<ReplayField> replayFields(const ReplayRecord& r) {
  Layout layout = layoutOf(r.op);
  std::vector<ReplayField> out;
  if (r.op == schema::ReplayOp::HOST_DATA && !r.values.empty() && r.values[0] == 1) layout.object = "copy";
  if (layout.object) out.push_back({layout.object, Kind::id, {r.object}, {}});
  else if (r.object) out.push_back({"object", Kind::id, {r.object}, {}});

  size_t i = 0;
  for (; i < layout.objects.size() && i < r.objects.size(); ++i)
    out.push_back({layout.objects[i], Kind::id, {r.objects[i]}, {}});
  if (layout.objectsRest) {
    out.push_back({layout.objectsRest, Kind::ids, {r.objects.begin() + static_cast<long>(i), r.objects.end()}, {}});
  } else if (i < r.objects.size()) {
    out.push_back({"objects", Kind::ids, {r.objects.begin() + static_cast<long>(i), r.objects.end()}, {}});
  }

  size_t v = 0;
  for (const ValueSpec& spec : layout.values) {
    if (v >= r.values.size()) break;
    size_t n = std::min<size_t>(spec.count, r.values.size() - v);
    out.push_back({spec.name, spec.kind, {r.values.begin() + static_cast<long>(v),
                                          r.values.begin() + static_cast<long>(v + n)}, {}});
    v += n;
  }
  if (v < r.values.size())
    out.push_back({"extra", Kind::ids, {r.values.begin() + static_cast<long>(v), r.values.end()}, {}});

  size_t a = 0;
  for (; a < layout.addresses.size() && a < r.addresses.size(); ++a)
    out.push_back({layout.addresses[a], Kind::address, {r.addresses[a]}, {}});
  for (; a < r.addresses.size(); ++a) out.push_back({"address", Kind::address, {r.addresses[a]}, {}});

  if (!r.text.empty() || r.op == schema::ReplayOp::SCOPE_BEGIN || r.op == schema::ReplayOp::SCOPE_END ||
      r.op == schema::ReplayOp::KERNEL_CREATE)
    out.push_back({textName(r.op), Kind::text, {}, r.text});
  return out;
}

std::string fieldText(const ReplayField& f) {
  std::string s = f.name + "=";
  switch (f.kind) {
    case Kind::id:
    case Kind::number:
      s += f.values.empty() ? "?" : std::to_string(f.values[0]);
      break;
    case Kind::hex:
    case Kind::address:
      s += f.values.empty() ? "?" : hex(f.values[0]);
      break;
    case Kind::ids:
      s += "[";
      for (size_t i = 0; i < f.values.size(); ++i) s += (i ? "," : "") + std::to_string(f.values[i]);
      s += "]";
      break;
    case Kind::tuple:
      for (size_t i = 0; i < f.values.size(); ++i) s += (i ? "," : "") + std::to_string(f.values[i]);
      break;
    case Kind::text:
      appendJsonString(s, f.text);
      break;
  }
  return s;
}

std::string fieldJson(const ReplayField& f) {
  std::string s;
  switch (f.kind) {
    case Kind::id:
    case Kind::number:
      s = f.values.empty() ? "null" : std::to_string(f.values[0]);
      break;
    case Kind::hex:
    case Kind::address:
      if (f.values.empty()) s = "null";
      else appendJsonString(s, hex(f.values[0]));
      break;
    case Kind::ids:
    case Kind::tuple:
      s = "[";
      for (size_t i = 0; i < f.values.size(); ++i) s += (i ? "," : "") + std::to_string(f.values[i]);
      s += "]";
      break;
    case Kind::text:
      appendJsonString(s, f.text);
      break;
  }
  return s;
}

}  // namespace gtap::readers
