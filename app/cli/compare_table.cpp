#include "table.h"

#include "headroom/base/format.h"

#include <cstdio>
#include <sstream>

namespace headroom::cli {

std::string compareTable(const nlohmann::json& compare)
{
    std::ostringstream out;
    out << "\nMeasured (" << compare.value("source", std::string()) << ", " << compare.value("file", std::string())
        << "):\n";
    char line[160];
    std::snprintf(line, sizeof line, "  %-20s %14s %14s %9s\n", "", "Headroom", "measured", "error");
    out << line;
    const char* names[][2] = {{"allocated_peak", "allocated peak"},
                              {"reserved_peak", "reserved peak"},
                              {"weights", "weights"},
                              {"steady_state", "between steps"},
                              {"outside_allocator", "outside allocator"}};
    for (const auto& n : names) {
        if (!compare.contains(n[0]))
            continue;
        const nlohmann::json& r = compare[n[0]];
        const std::string measured = r["measured"].is_number() ? formatBytes(r["measured"].get<int64_t>()) : "-";
        char err[32] = "-";
        if (r["error_pct"].is_number())
            std::snprintf(err, sizeof err, "%+.1f %%", r["error_pct"].get<double>());
        std::snprintf(line, sizeof line, "  %-20s %14s %14s %9s\n", n[1],
                      formatBytes(r["theory"].get<int64_t>()).c_str(), measured.c_str(), err);
        out << line;
    }
    return out.str();
}

} // namespace headroom::cli
