#pragma once
#include <cstdint>
#include <string>

namespace headroom {

enum class Units : uint8_t { IEC, SI };
// "1.50 GiB", "512 B", "-3.1 GiB"; SI: "1.61 GB". Three significant digits.
std::string formatBytes(int64_t bytes, Units units = Units::IEC);
// "11.7 M", "25.6 M", "1.2 k" for parameter counts
std::string formatCount(int64_t count);

} // namespace headroom
