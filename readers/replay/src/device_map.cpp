#include "device_map.h"

#include "gtap/readers/replayer.h"

namespace gtap::replay {

DeviceMap mapDevices(const ZeFunctions& ze, const readers::Capture& capture, const readers::ReplayStream& stream,
                     std::vector<std::string>& warnings) {
  DeviceMap map;
  ze_result_t r = ze.zeInit(0);
  if (r != ZE_RESULT_SUCCESS)
    throw readers::ReplayError(capture.path() + ": zeInit returned " + resultName(r) + " (no Level Zero driver?)");
  uint32_t count = 0;
  r = ze.zeDriverGet(&count, nullptr);
  if (r == ZE_RESULT_SUCCESS) {
    map.drivers.resize(count);
    r = ze.zeDriverGet(&count, map.drivers.data());
    map.drivers.resize(count);
  }
  if (r != ZE_RESULT_SUCCESS)
    throw readers::ReplayError(capture.path() + ": zeDriverGet returned " + resultName(r));
  std::map<size_t, std::vector<ze_device_handle_t>> devices;
  for (size_t d = 0; d < map.drivers.size(); ++d) {
    uint32_t n = 0;
    r = ze.zeDeviceGet(map.drivers[d], &n, nullptr);
    std::vector<ze_device_handle_t> list(n);
    if (r == ZE_RESULT_SUCCESS && n) r = ze.zeDeviceGet(map.drivers[d], &n, list.data());
    if (r != ZE_RESULT_SUCCESS)
      throw readers::ReplayError(capture.path() + ": zeDeviceGet on driver " + std::to_string(d) + " returned " +
                                 resultName(r));
    list.resize(n);
    devices[d] = std::move(list);
  }
  for (const auto& rec : stream.records) {
    if (rec.op != readers::ReplayOp::DEVICE) continue;
    auto dev = rec.fields.getDevice();
    std::string where = capture.path() + ": record " + readers::recordLabel(rec);
    uint64_t driver = dev.getDriverIndex(), index = dev.getDeviceIndex();
    std::string capturedName = dev.getName();
    std::string captured = "driver " + std::to_string(driver) + " device " + std::to_string(index) + " (\"" +
                           capturedName + "\")";
    if (driver >= map.drivers.size())
      throw readers::ReplayError(where + ": the capture used " + captured + ", this machine has " +
                                 std::to_string(map.drivers.size()) + " Level Zero driver(s)");
    if (index >= devices[driver].size())
      throw readers::ReplayError(where + ": the capture used " + captured + ", driver " + std::to_string(driver) +
                                 " here has " + std::to_string(devices[driver].size()) + " device(s)");
    MappedDevice m{map.drivers[driver], devices[driver][index], {}};
    ze_device_properties_t props{};
    props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    if (ze.zeDeviceGetProperties(m.device, &props) == ZE_RESULT_SUCCESS) {
      m.name = props.name;
      if (m.name != capturedName)
        warnings.push_back(where + ": captured device \"" + capturedName + "\" is \"" + m.name + "\" here");
    }
    map.byId[dev.getDevice()] = m;
  }
  return map;
}

}  // namespace gtap::replay
