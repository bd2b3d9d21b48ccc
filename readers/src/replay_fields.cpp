#include "gtap/readers/replay_fields.h"

#include <capnp/dynamic.h>
#include <capnp/schema.h>

#include <cstdio>
#include <optional>
#include <unordered_map>

#include "gtap/readers/json.h"

namespace gtap::readers {

namespace {

using Kind = ReplayField::Kind;
using Field = capnp::StructSchema::Field;

// The schema's annotations (format/schema/capture.capnp).
constexpr uint64_t kRef = 0xd3a1c6e2f0b84a11ull;
constexpr uint64_t kAddress = 0xd3a1c6e2f0b84a12ull;
constexpr uint64_t kHex = 0xd3a1c6e2f0b84a13ull;
constexpr uint64_t kSeq = 0xd3a1c6e2f0b84a14ull;
constexpr uint64_t kMakes = 0xd3a1c6e2f0b84a15ull;
constexpr uint64_t kAppends = 0xd3a1c6e2f0b84a16ull;
constexpr uint64_t kPayload = 0xd3a1c6e2f0b84a17ull;
constexpr uint64_t kNote = 0xd3a1c6e2f0b84a18ull;

bool annotated(const Field& f, uint64_t id) {
  for (auto a : f.getProto().getAnnotations())
    if (a.getId() == id) return true;
  return false;
}

std::string annotationText(const Field& f, uint64_t id) {
  for (auto a : f.getProto().getAnnotations())
    if (a.getId() == id && a.getValue().isText()) return a.getValue().getText();
  return {};
}

bool inUnion(const Field& f) {
  return f.getProto().getDiscriminantValue() != capnp::schema::Field::NO_DISCRIMINANT;
}

bool isDim3(capnp::Type t) { return t.isStruct() && t.asStruct() == capnp::Schema::from<schema::Dim3>(); }

bool isInteger(capnp::Type t) {
  switch (t.which()) {
    case capnp::schema::Type::BOOL:
    case capnp::schema::Type::INT8:
    case capnp::schema::Type::INT16:
    case capnp::schema::Type::INT32:
    case capnp::schema::Type::INT64:
    case capnp::schema::Type::UINT8:
    case capnp::schema::Type::UINT16:
    case capnp::schema::Type::UINT32:
    case capnp::schema::Type::UINT64: return true;
    default: return false;
  }
}

Kind kindOf(const Field& f) {
  capnp::Type t = f.getType();
  if (t.isText()) return Kind::text;
  if (isDim3(t)) return Kind::tuple;
  if (t.isList()) {
    capnp::Type e = t.asList().getElementType();
    if (e.isStruct()) return Kind::records;
    switch (e.which()) {
      case capnp::schema::Type::INT8:
      case capnp::schema::Type::INT16:
      case capnp::schema::Type::INT32:
      case capnp::schema::Type::INT64: return Kind::integers;
      default: return Kind::ids;
    }
  }
  if (annotated(f, kRef) || annotated(f, kSeq)) return Kind::id;
  if (annotated(f, kAddress)) return Kind::address;
  if (annotated(f, kHex)) return Kind::hex;
  switch (t.which()) {
    case capnp::schema::Type::INT8:
    case capnp::schema::Type::INT16:
    case capnp::schema::Type::INT32:
    case capnp::schema::Type::INT64: return Kind::integer;
    default: return Kind::number;
  }
}

// What reading a struct's fields needs of each, worked out once per struct
// type (the schema's reflection is slow to ask field by field, record by
// record).
struct FieldPlan {
  Field field;
  capnp::Type type;
  Kind kind;
  bool inUnion;
  std::string name;
  bool structList;  // a list of structs
  bool integerList;
};

const std::vector<FieldPlan>& planOf(capnp::StructSchema schema) {
  // Per thread: no lock on the way to a record's fields.
  thread_local std::unordered_map<uint64_t, std::vector<FieldPlan>> plans;
  auto [it, fresh] = plans.try_emplace(schema.getProto().getId());
  if (fresh) {
    for (const Field& f : schema.getFields()) {
      capnp::Type t = f.getType();
      bool list = t.isList();
      it->second.push_back({f, t, kindOf(f), inUnion(f), f.getProto().getName().cStr(),
                            list && t.asList().getElementType().isStruct(),
                            list && isInteger(t.asList().getElementType())});
    }
  }
  return it->second;
}

uint64_t asNumber(capnp::DynamicValue::Reader v) {
  if (v.getType() == capnp::DynamicValue::BOOL) return v.as<bool>() ? 1 : 0;
  if (v.getType() == capnp::DynamicValue::INT) return static_cast<uint64_t>(v.as<int64_t>());
  return v.as<uint64_t>();
}

void appendStruct(std::vector<ReplayField>& out, capnp::DynamicStruct::Reader s, const std::string& prefix) {
  auto active = s.which();
  for (const FieldPlan& plan : planOf(s.getSchema())) {
    const Field& f = plan.field;
    if (plan.inUnion) {
      KJ_IF_MAYBE (a, active) {
        if (*a != f) continue;
      } else {
        continue;
      }
    }
    std::string name = prefix + plan.name;
    const capnp::Type& t = plan.type;
    Kind kind = plan.kind;
    if (t.isText()) {
      if (s.has(f)) out.push_back({name, kind, {}, s.get(f).as<capnp::Text>(), {}});
    } else if (isDim3(t)) {
      auto d = s.get(f).as<capnp::DynamicStruct>();
      out.push_back({name, kind, {asNumber(d.get("x")), asNumber(d.get("y")), asNumber(d.get("z"))}, {}, {}});
    } else if (t.isList()) {
      ReplayField field{name, kind, {}, {}, {}};
      if (plan.integerList)
        for (auto v : s.get(f).as<capnp::DynamicList>()) field.values.push_back(asNumber(v));
      if (plan.structList)
        for (auto v : s.get(f).as<capnp::DynamicList>()) {
          field.records.emplace_back();
          appendStruct(field.records.back(), v.as<capnp::DynamicStruct>(), "");
        }
      out.push_back(std::move(field));
    } else if (t.isStruct()) {
      appendStruct(out, s.get(f).as<capnp::DynamicStruct>(), name + ".");
    } else if (isInteger(t)) {
      out.push_back({name, kind, {asNumber(s.get(f))}, {}, {}});
    }
  }
}

// Reads every pointer the struct holds (its active union member's too), so
// a pointer of the wrong kind throws here rather than in a later reader.
void checkPointers(capnp::DynamicStruct::Reader s) {
  auto active = s.which();
  for (const FieldPlan& plan : planOf(s.getSchema())) {
    const Field& f = plan.field;
    if (plan.inUnion) {
      KJ_IF_MAYBE (a, active) {
        if (*a != f) continue;
      } else {
        continue;
      }
    }
    const capnp::Type& t = plan.type;
    if (t.isStruct()) {
      checkPointers(s.get(f).as<capnp::DynamicStruct>());
    } else if (t.isList()) {
      auto list = s.get(f).as<capnp::DynamicList>();
      if (plan.structList)
        for (auto e : list) checkPointers(e.as<capnp::DynamicStruct>());
      else
        for (auto e : list) (void)e;
    } else if (t.isText()) {
      (void)s.get(f).as<capnp::Text>();
    } else if (t.isData()) {
      (void)s.get(f).as<capnp::Data>();
    }
  }
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::optional<Field> memberOf(ReplayOp op) {
  KJ_IF_MAYBE (f, capnp::Schema::from<schema::ReplayRecord>().getFieldByDiscriminant(static_cast<uint16_t>(op)))
    return *f;
  return std::nullopt;
}

// A field's type as docs/replay.md shows it.
std::string typeText(const Field& f) {
  switch (kindOf(f)) {
    case Kind::id: return annotated(f, kSeq) ? "seq" : "id";
    case Kind::ids: return annotated(f, kRef) ? "ids" : "numbers";
    case Kind::records: return "list";
    case Kind::integers: return "signed numbers";
    case Kind::integer: return "signed number";
    case Kind::tuple: return "x, y, z";
    case Kind::address: return "address";
    case Kind::hex: return "hex";
    case Kind::text: return "text";
    case Kind::number: break;
  }
  return "number";
}

void fieldsMarkdown(std::string& cell, capnp::StructSchema s, const std::string& prefix) {
  for (const Field& f : s.getFields()) {
    std::string name = prefix + f.getProto().getName().cStr();
    capnp::Type t = f.getType();
    if (t.isStruct() && !isDim3(t)) {
      fieldsMarkdown(cell, t.asStruct(), name + ".");
      continue;
    }
    if (!cell.empty()) cell += ", ";
    cell += "`" + name + "` (" + typeText(f);
    if (inUnion(f)) cell += ", one of the union";
    std::string note = annotationText(f, kNote);
    if (!note.empty()) cell += ": " + note;
    if (kindOf(f) == Kind::records) {
      std::string each;
      fieldsMarkdown(each, t.asList().getElementType().asStruct(), "");
      cell += "; each: " + each;
    }
    cell += ")";
  }
}

}  // namespace

std::vector<ReplayField> replayFields(const ReplayRecord& r) {
  std::vector<ReplayField> out;
  auto record = capnp::toDynamic(r.fields);
  KJ_IF_MAYBE (member, record.which()) {
    if (member->getType().isStruct()) appendStruct(out, record.get(*member).as<capnp::DynamicStruct>(), "");
  }
  return out;
}

void checkReplayRecordShape(schema::ReplayRecord::Reader r) { checkPointers(capnp::toDynamic(r)); }

bool createsObject(ReplayOp op) {
  auto f = memberOf(op);
  return f && annotated(*f, kMakes);
}

bool isDeviceOperation(ReplayOp op) {
  auto f = memberOf(op);
  return f && annotated(*f, kAppends);
}

uint64_t createdObject(const ReplayRecord& r) {
  auto member = memberOf(r.op);
  if (!member || !annotated(*member, kMakes) || !member->getType().isStruct()) return 0;
  auto body = capnp::toDynamic(r.fields).get(*member).as<capnp::DynamicStruct>();
  auto fields = body.getSchema().getFields();
  return fields.size() && isInteger(fields[0].getType()) ? asNumber(body.get(fields[0])) : 0;
}

void writeReplayOpsMarkdown(std::ostream& out) {
  out << "| op | fields | payload | notes |\n| --- | --- | --- | --- |\n";
  for (const Field& member : capnp::Schema::from<schema::ReplayRecord>().getUnionFields()) {
    if (!member.getType().isStruct()) continue;  // `positional`: formats 1.0-1.1
    std::string fields;
    fieldsMarkdown(fields, member.getType().asStruct(), "");
    std::string notes = annotationText(member, kNote);
    auto add = [&](const std::string& n) { notes += (notes.empty() ? "" : "; ") + n; };
    auto first = member.getType().asStruct().getFields();
    if (annotated(member, kMakes) && first.size()) add(std::string("makes `") + first[0].getProto().getName().cStr() + "`");
    if (annotated(member, kAppends)) add("appended to `list` (device work)");
    out << "| `" << member.getProto().getName().cStr() << "` | " << fields << " | " << annotationText(member, kPayload)
        << " | " << notes << " |\n";
  }
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
    case Kind::integer:
      s += f.values.empty() ? "?" : std::to_string(static_cast<int64_t>(f.values[0]));
      break;
    case Kind::integers:
      s += "[";
      for (size_t i = 0; i < f.values.size(); ++i) s += (i ? "," : "") + std::to_string(static_cast<int64_t>(f.values[i]));
      s += "]";
      break;
    case Kind::records:
      s += "[";
      for (size_t i = 0; i < f.records.size(); ++i) {
        s += i ? ",{" : "{";
        for (size_t j = 0; j < f.records[i].size(); ++j) s += (j ? " " : "") + fieldText(f.records[i][j]);
        s += "}";
      }
      s += "]";
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
    case Kind::integer:
      s = f.values.empty() ? "null" : std::to_string(static_cast<int64_t>(f.values[0]));
      break;
    case Kind::integers:
      s = "[";
      for (size_t i = 0; i < f.values.size(); ++i) s += (i ? "," : "") + std::to_string(static_cast<int64_t>(f.values[i]));
      s += "]";
      break;
    case Kind::records:
      s = "[";
      for (size_t i = 0; i < f.records.size(); ++i) {
        s += i ? ",{" : "{";
        for (size_t j = 0; j < f.records[i].size(); ++j) {
          if (j) s += ",";
          appendJsonString(s, f.records[i][j].name);
          s += ":" + fieldJson(f.records[i][j]);
        }
        s += "}";
      }
      s += "]";
      break;
  }
  return s;
}

}  // namespace gtap::readers
