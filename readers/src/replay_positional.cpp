#include "gtap/readers/replay_positional.h"

#include <capnp/dynamic.h>
#include <capnp/schema.h>

#include <string>
#include <vector>

namespace gtap::readers {

namespace {

// Where formats 1.0-1.1 kept each operation's fields, by the names today's
// struct gives them. Frozen: new operations exist only in typed form.
struct Positional {
  const char* object = nullptr;      // `object`
  std::vector<const char*> objects;  // leading `objects`
  const char* objectsRest = nullptr; // the list the remaining `objects` form
  std::vector<std::pair<const char*, unsigned>> values;  // name, count (3: a Dim3)
  std::vector<const char*> addresses;
  const char* text = nullptr;
};

Positional positionalOf(schema::ReplayOp op) {
  using O = schema::ReplayOp;
  auto one = [](const char* n) { return std::pair<const char*, unsigned>{n, 1}; };
  auto dim = [](const char* n) { return std::pair<const char*, unsigned>{n, 3}; };
  switch (op) {
    case O::UNSUPPORTED: return {nullptr, {}, nullptr, {}, {}, "reason"};
    case O::DEVICE:
      return {"device", {}, nullptr, {one("driverIndex"), one("deviceIndex"), one("vendorId"), one("deviceId")}, {},
              "name"};
    case O::CONTEXT_CREATE: return {"context", {}, "devices", {one("flags")}, {}, nullptr};
    case O::CONTEXT_DESTROY: return {"context", {}, nullptr, {}, {}, nullptr};
    case O::MEM_ALLOC:
      return {"allocation", {"context", "device"}, nullptr, {one("kind"), one("size"), one("alignment")}, {"address"},
              nullptr};
    case O::MEM_FREE: return {"allocation", {"context"}, nullptr, {}, {"address"}, nullptr};
    case O::MODULE_CREATE: return {"module", {"context", "device"}, nullptr, {one("format")}, {}, "buildFlags"};
    case O::MODULE_DESTROY: return {"module", {}, nullptr, {}, {}, nullptr};
    case O::KERNEL_CREATE: return {"kernel", {"module"}, nullptr, {one("flags")}, {}, "name"};
    case O::KERNEL_DESTROY: return {"kernel", {}, nullptr, {}, {}, nullptr};
    case O::KERNEL_SET_GROUP_SIZE: return {"kernel", {}, nullptr, {dim("groupSize")}, {}, nullptr};
    case O::KERNEL_SET_ARGUMENT:
      return {"kernel", {}, nullptr, {one("index"), one("size"), one("hasValue")}, {}, nullptr};
    case O::KERNEL_SET_INDIRECT_ACCESS: return {"kernel", {}, nullptr, {one("flags")}, {}, nullptr};
    case O::KERNEL_SET_GLOBAL_OFFSET: return {"kernel", {}, nullptr, {dim("offset")}, {}, nullptr};
    case O::QUEUE_CREATE:
    case O::LIST_CREATE_IMMEDIATE:
      return {op == O::QUEUE_CREATE ? "queue" : "list", {"context", "device"}, nullptr,
              {one("ordinal"), one("index"), one("flags"), one("mode"), one("priority")}, {}, nullptr};
    case O::QUEUE_DESTROY: return {"queue", {}, nullptr, {}, {}, nullptr};
    case O::LIST_CREATE: return {"list", {"context", "device"}, nullptr, {one("ordinal"), one("flags")}, {}, nullptr};
    case O::LIST_CLOSE:
    case O::LIST_RESET:
    case O::LIST_DESTROY: return {"list", {}, nullptr, {}, {}, nullptr};
    case O::EVENT_POOL_CREATE: return {"pool", {"context"}, "devices", {one("flags"), one("count")}, {}, nullptr};
    case O::EVENT_POOL_DESTROY: return {"pool", {}, nullptr, {}, {}, nullptr};
    case O::EVENT_CREATE:
      return {"event", {"pool"}, nullptr, {one("index"), one("signalScope"), one("waitScope")}, {}, nullptr};
    case O::EVENT_DESTROY:
    case O::EVENT_HOST_SIGNAL:
    case O::EVENT_HOST_RESET:
    case O::EVENT_QUERY_STATUS: return {"event", {}, nullptr, {}, {}, nullptr};
    case O::EVENT_HOST_SYNCHRONIZE: return {"event", {}, nullptr, {one("timeout")}, {}, nullptr};
    case O::FENCE_CREATE: return {"fence", {"queue"}, nullptr, {one("flags")}, {}, nullptr};
    case O::FENCE_DESTROY:
    case O::FENCE_RESET:
    case O::FENCE_QUERY_STATUS: return {"fence", {}, nullptr, {}, {}, nullptr};
    case O::FENCE_HOST_SYNCHRONIZE: return {"fence", {}, nullptr, {one("timeout")}, {}, nullptr};
    case O::QUEUE_SYNCHRONIZE: return {"queue", {}, nullptr, {one("timeout")}, {}, nullptr};
    case O::EXECUTE: return {"queue", {"fence"}, "lists", {one("firstDispatch"), one("dispatches")}, {}, nullptr};
    case O::LAUNCH_KERNEL:
      return {"list", {"kernel", "signal"}, "waits", {dim("groups"), one("cooperative"), one("dispatch")}, {}, nullptr};
    case O::COPY: return {"list", {"signal"}, "waits", {one("size")}, {"dst", "src"}, nullptr};
    case O::COPY_REGION:
      return {"list", {"signal"}, "waits",
              {dim("dstOrigin"), dim("dstExtent"), one("dstPitch"), one("dstSlicePitch"), dim("srcOrigin"),
               dim("srcExtent"), one("srcPitch"), one("srcSlicePitch")},
              {"dst", "src"}, nullptr};
    case O::FILL: return {"list", {"signal"}, "waits", {one("size")}, {"dst"}, nullptr};
    case O::BARRIER: return {"list", {"signal"}, "waits", {}, {}, nullptr};
    case O::SIGNAL_EVENT:
    case O::EVENT_RESET: return {"list", {"event"}, nullptr, {}, {}, nullptr};
    case O::WAIT_ON_EVENTS: return {"list", {}, "events", {}, {}, nullptr};
    // hostData's object is an allocation (target 0) or a copy's seq (target
    // 1): convert() picks the member.
    case O::HOST_DATA: return {nullptr, {}, nullptr, {one("target"), one("offset")}, {"address"}, nullptr};
    case O::READ_BACK: return {"copy", {}, nullptr, {one("offset")}, {"dst"}, nullptr};
    case O::SCOPE_BEGIN:
    case O::SCOPE_END: return {nullptr, {}, nullptr, {}, {}, "scope"};
  }
  return {};
}

void convert(schema::ReplayRecord::Reader in, schema::ReplayRecord::Builder out) {
  out.setSeq(in.getSeq());
  out.setThread(in.getThread());
  out.setFunction(in.getFunction());
  if (in.hasPayload()) out.setPayload(in.getPayload());
  out.setHostNs(in.getHostNs());

  auto recordSchema = capnp::Schema::from<schema::ReplayRecord>();
  auto enumerants = capnp::Schema::from<schema::ReplayOp>().getEnumerants();
  auto op = static_cast<unsigned>(in.getOp());
  KJ_IF_MAYBE (member, op < enumerants.size()
                           ? recordSchema.findFieldByName(enumerants[op].getProto().getName())
                           : nullptr) {
    Positional p = positionalOf(in.getOp());
    auto body = capnp::toDynamic(out).init(*member).as<capnp::DynamicStruct>();
    auto values = in.getValues();
    auto objects = in.getObjects();
    auto addresses = in.getAddresses();
    if (in.getOp() == schema::ReplayOp::HOST_DATA)
      body.set(values.size() && values[0] == 1 ? "copy" : "allocation", in.getObject());
    if (p.object) body.set(p.object, in.getObject());
    unsigned i = 0;
    for (; i < p.objects.size() && i < objects.size(); ++i) body.set(p.objects[i], objects[i]);
    if (p.objectsRest) {
      auto rest = body.init(p.objectsRest, objects.size() > i ? objects.size() - i : 0).as<capnp::DynamicList>();
      for (unsigned k = 0; i + k < objects.size(); ++k) rest.set(k, objects[i + k]);
    }
    unsigned v = 0;
    for (auto [name, count] : p.values) {
      if (v >= values.size()) break;
      std::string n = name;
      if (n == "target") {  // named by the member hostData's union set above
        ++v;
        continue;
      }
      if (count == 3) {
        auto d = body.init(name).as<capnp::DynamicStruct>();
        const char* axes[] = {"x", "y", "z"};
        for (unsigned k = 0; k < 3 && v < values.size(); ++k) d.set(axes[k], values[v++]);
      } else {
        body.set(name, values[v++]);
      }
    }
    for (unsigned a = 0; a < p.addresses.size() && a < addresses.size(); ++a) body.set(p.addresses[a], addresses[a]);
    // Formats 1.0-1.1 wrote a kernel's and a scope's name even when empty,
    // other texts only when given.
    bool alwaysText = in.getOp() == schema::ReplayOp::KERNEL_CREATE || in.getOp() == schema::ReplayOp::SCOPE_BEGIN ||
                      in.getOp() == schema::ReplayOp::SCOPE_END;
    if (p.text && (in.getText().size() || alwaysText)) body.set(p.text, in.getText());
  } else {
    out.initUnsupported().setReason("operation " + std::to_string(op) + " of a format 1.0-1.1 record is unknown");
  }
}

}  // namespace

std::unique_ptr<capnp::MallocMessageBuilder> typedRecords(capnp::List<schema::ReplayRecord>::Reader records) {
  auto message = std::make_unique<capnp::MallocMessageBuilder>();
  auto out = message->initRoot<schema::Replay>().initRecords(records.size());
  for (unsigned i = 0; i < records.size(); ++i) {
    if (records[i].isPositional())
      convert(records[i], out[i]);
    else
      out.setWithCaveats(i, records[i]);
  }
  return message;
}

}  // namespace gtap::readers
