#include "headroom/base/format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace headroom {

std::string formatBytes(int64_t bytes, Units units)
{
    static const char* const iec[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    static const char* const si[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
    const double base = units == Units::IEC ? 1024.0 : 1000.0;
    const char* const* names = units == Units::IEC ? iec : si;
    double v = std::fabs(static_cast<double>(bytes));
    int i = 0;
    while (v >= base && i < 6) {
        v /= base;
        ++i;
    }
    char buf[48];
    const char* sign = bytes < 0 ? "-" : "";
    if (i == 0)
        std::snprintf(buf, sizeof buf, "%s%lld B", sign, static_cast<long long>(std::llabs(bytes)));
    else if (v >= 100)
        std::snprintf(buf, sizeof buf, "%s%.0f %s", sign, v, names[i]);
    else if (v >= 10)
        std::snprintf(buf, sizeof buf, "%s%.1f %s", sign, v, names[i]);
    else
        std::snprintf(buf, sizeof buf, "%s%.2f %s", sign, v, names[i]);
    return buf;
}

std::string formatCount(int64_t count)
{
    static const char* const names[] = {"", " k", " M", " G", " T"};
    double v = std::fabs(static_cast<double>(count));
    int i = 0;
    while (v >= 1000 && i < 4) {
        v /= 1000;
        ++i;
    }
    char buf[48];
    const char* sign = count < 0 ? "-" : "";
    if (i == 0)
        std::snprintf(buf, sizeof buf, "%s%lld", sign, static_cast<long long>(std::llabs(count)));
    else
        std::snprintf(buf, sizeof buf, "%s%.*f%s", sign, v >= 100 ? 0 : (v >= 10 ? 1 : 2), v, names[i]);
    return buf;
}

} // namespace headroom
