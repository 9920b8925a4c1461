#include "core/config.h"

#include "core/limits.h"
#include "core/log.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>

extern char** environ;

namespace cuemu {
namespace {

using limits::kMaxDeviceMemory;
using limits::kMaxDevices;
using limits::kMaxSmCount;
using limits::kMinDeviceMemory;

std::string trim(std::string_view text) {
  auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  auto end = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(begin, end - begin + 1));
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

Expected<long long> parseInteger(const std::string& key, const std::string& text, long long min, long long max) {
  long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    return makeError(CUDA_ERROR_INVALID_VALUE, fmt::format("{}: '{}' is not a whole number", key, text));
  if (value < min || value > max)
    return makeError(CUDA_ERROR_INVALID_VALUE, fmt::format("{}: {} is outside {}..{}", key, value, min, max));
  return value;
}

// A per-device key "device<i>_<field>": the index and field, or index -1 for the all-devices form.
struct KeyParts {
  int index = -1;
  std::string field;
  bool valid = false;
};

KeyParts splitKey(const std::string& key) {
  KeyParts parts;
  if (key.rfind("device", 0) != 0) return parts;
  std::size_t pos = 6;
  std::size_t digits = pos;
  while (digits < key.size() && std::isdigit(static_cast<unsigned char>(key[digits]))) ++digits;
  if (digits > pos) {
    if (digits - pos > 3) return parts;
    parts.index = std::stoi(key.substr(pos, digits - pos));
    pos = digits;
  }
  if (pos >= key.size() || key[pos] != '_') return parts;
  parts.field = key.substr(pos + 1);
  parts.valid = true;
  return parts;
}

uint64_t halfOfHostMemory() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long pageSize = sysconf(_SC_PAGESIZE);
  uint64_t total = (pages > 0 && pageSize > 0) ? uint64_t(pages) * uint64_t(pageSize) : (8ull << 30);
  uint64_t half = total / 2;
  half &= ~((1ull << 20) - 1);  // whole MiB
  return std::max(half, kMinDeviceMemory);
}

Error configError(std::string message) {
  return makeError(CUDA_ERROR_INVALID_VALUE, "invalid cuemu configuration: " + std::move(message));
}

}  // namespace

std::string configKey(const std::string& name) {
  std::string key = lower(trim(name));
  if (key.rfind("cuemu_", 0) == 0) key = key.substr(6);
  if (key.rfind("device", 0) != 0) return {};
  return key;
}

Expected<uint64_t> parseByteSize(const std::string& text) {
  std::string value = trim(text);
  std::size_t digits = 0;
  while (digits < value.size() && std::isdigit(static_cast<unsigned char>(value[digits]))) ++digits;
  if (digits == 0) return makeError(CUDA_ERROR_INVALID_VALUE, fmt::format("'{}' is not a size", text));
  uint64_t number = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + digits, number);
  if (ec != std::errc()) return makeError(CUDA_ERROR_INVALID_VALUE, fmt::format("'{}' is too large", text));
  std::string suffix = lower(trim(value.substr(digits)));
  unsigned shift = 0;
  if (suffix.empty() || suffix == "b")
    shift = 0;
  else if (suffix == "k" || suffix == "kb" || suffix == "kib")
    shift = 10;
  else if (suffix == "m" || suffix == "mb" || suffix == "mib")
    shift = 20;
  else if (suffix == "g" || suffix == "gb" || suffix == "gib")
    shift = 30;
  else if (suffix == "t" || suffix == "tb" || suffix == "tib")
    shift = 40;
  else
    return makeError(CUDA_ERROR_INVALID_VALUE,
                     fmt::format("'{}' has an unknown unit '{}' (use K, M, G or T: binary multiples)", text, suffix));
  if (shift && number > (~0ull >> shift))
    return makeError(CUDA_ERROR_INVALID_VALUE, fmt::format("'{}' is too large", text));
  return number << shift;
}

Expected<ConfigSettings> parseConfigText(const std::string& text, const std::string& origin) {
  ConfigSettings settings;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::string content = trim(line);
    if (content.empty()) continue;
    auto eq = content.find('=');
    if (eq == std::string::npos)
      return configError(fmt::format("{}:{}: expected 'key = value', got '{}'", origin, number, content));
    std::string name = trim(content.substr(0, eq));
    std::string key = configKey(name);
    if (key.empty())
      return configError(fmt::format("{}:{}: unknown key '{}' (keys start with device)", origin, number, name));
    settings[key] = trim(content.substr(eq + 1));
  }
  return settings;
}

Expected<MachineConfig> buildMachineConfig(const ConfigSettings& settings, uint64_t defaultMemory) {
  int count = 1;
  if (auto it = settings.find("device_count"); it != settings.end()) {
    auto value = parseInteger("CUEMU_DEVICE_COUNT", it->second, 0, kMaxDevices);
    if (!value) return configError(value.error().message);
    count = static_cast<int>(*value);
  }

  // Per field, the setting for all devices and the per-device ones.
  struct FieldSettings {
    std::string all;
    bool hasAll = false;
    std::map<int, std::string> perDevice;
  };
  std::map<std::string, FieldSettings> fields;
  static const char* const kFields[] = {"profile", "memory", "name", "sm_count"};
  for (const auto& [key, value] : settings) {
    if (key == "device_count") continue;
    KeyParts parts = splitKey(key);
    bool known = parts.valid && std::find_if(std::begin(kFields), std::end(kFields),
                                             [&](const char* f) { return parts.field == f; }) != std::end(kFields);
    if (!known)
      return configError(
          fmt::format("unknown setting CUEMU_{} (known: CUEMU_DEVICE_COUNT, CUEMU_DEVICE_PROFILE, CUEMU_DEVICE_MEMORY, "
                      "CUEMU_DEVICE_NAME, CUEMU_DEVICE_SM_COUNT, CUEMU_DEVICE<i>_<PROFILE|MEMORY|NAME|SM_COUNT>)",
                      upper(key)));
    FieldSettings& field = fields[parts.field];
    if (parts.index < 0) {
      field.all = value;
      field.hasAll = true;
    } else {
      if (parts.index >= count)
        return configError(fmt::format("CUEMU_DEVICE{}_{} configures device {}, but there are only {} device(s)",
                                       parts.index, upper(parts.field), parts.index, count));
      field.perDevice[parts.index] = value;
    }
  }
  auto settingFor = [&](const char* field, int device) -> const std::string* {
    auto it = fields.find(field);
    if (it == fields.end()) return nullptr;
    if (auto d = it->second.perDevice.find(device); d != it->second.perDevice.end()) return &d->second;
    return it->second.hasAll ? &it->second.all : nullptr;
  };
  auto variable = [&](const char* field, int device) {
    auto it = fields.find(field);
    bool perDevice = it != fields.end() && it->second.perDevice.count(device);
    return perDevice ? fmt::format("CUEMU_DEVICE{}_{}", device, upper(field))
                     : fmt::format("CUEMU_DEVICE_{}", upper(field));
  };

  MachineConfig config;
  for (int i = 0; i < count; ++i) {
    DeviceProfile profile;
    if (const std::string* name = settingFor("profile", i)) {
      auto builtin = builtinProfile(*name);
      if (!builtin) return configError(fmt::format("{}: {}", variable("profile", i), builtin.error().message));
      profile = *builtin;
    } else {
      profile = *builtinProfile("h100");
    }
    profile.totalMemory = defaultMemory;
    if (const std::string* memory = settingFor("memory", i)) {
      auto bytes = parseByteSize(*memory);
      if (!bytes) return configError(fmt::format("{}: {}", variable("memory", i), bytes.error().message));
      if (*bytes < kMinDeviceMemory || *bytes > kMaxDeviceMemory)
        return configError(fmt::format("{}: {} bytes is outside 64 MiB..256 TiB", variable("memory", i), *bytes));
      profile.totalMemory = *bytes;
    }
    if (const std::string* name = settingFor("name", i)) {
      if (name->empty() || name->size() > 255)
        return configError(fmt::format("{}: a device name has 1..255 characters", variable("name", i)));
      profile.name = *name;
    }
    if (const std::string* sms = settingFor("sm_count", i)) {
      auto value = parseInteger(variable("sm_count", i), *sms, 1, kMaxSmCount);
      if (!value) return configError(value.error().message);
      profile.smCount = static_cast<int>(*value);
    }
    auto valid = profile.validate();
    if (!valid) return configError(fmt::format("device {}: {}", i, valid.error().message));
    config.devices.push_back(std::move(profile));
  }
  return config;
}

Expected<MachineConfig> loadMachineConfig() {
  ConfigSettings settings;
  if (const char* path = std::getenv("CUEMU_CONFIG"); path && *path) {
    std::ifstream file(path);
    if (!file) return configError(fmt::format("CUEMU_CONFIG: cannot read '{}'", path));
    std::stringstream text;
    text << file.rdbuf();
    auto parsed = parseConfigText(text.str(), path);
    if (!parsed) return parsed.takeError();
    settings = std::move(*parsed);
  }
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string_view variable(*entry);
    auto eq = variable.find('=');
    if (eq == std::string_view::npos) continue;
    std::string name(variable.substr(0, eq));
    if (name.rfind("CUEMU_DEVICE", 0) != 0) continue;
    std::string value = trim(variable.substr(eq + 1));
    if (value.empty()) continue;  // an empty variable counts as unset
    settings[configKey(name)] = value;
  }
  return buildMachineConfig(settings, halfOfHostMemory());
}

Expected<uint64_t> parseKernelTimeout(const std::string& text) {
  std::string value = trim(text);
  double seconds = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  // A day at most: the limit exists to end runaway kernels of tests and batch jobs.
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() || !(seconds >= 0) || seconds > 86400)
    return makeError(CUDA_ERROR_INVALID_VALUE,
                     fmt::format("CUEMU_KERNEL_TIMEOUT: '{}' is not a number of seconds in 0..86400", text));
  uint64_t ms = uint64_t(seconds * 1000 + 0.5);
  return seconds > 0 && ms == 0 ? 1 : ms;
}

uint64_t kernelTimeoutMs() {
  static const uint64_t timeout = [] {
    const char* value = std::getenv("CUEMU_KERNEL_TIMEOUT");
    if (!value || !*value) return uint64_t(0);
    auto parsed = parseKernelTimeout(value);
    if (!parsed) {
      CUEMU_ERROR("{}: kernels run without a time limit", parsed.error().message);
      return uint64_t(0);
    }
    return *parsed;
  }();
  return timeout;
}

}  // namespace cuemu
