#include "decimate.h"

#include <numeric>

namespace gui {

std::vector<size_t> minMaxPoints(const std::vector<double>& values, size_t buckets)
{
    const size_t n = values.size();
    std::vector<size_t> kept;
    if (buckets == 0 || n <= 2 * buckets) {
        kept.resize(n);
        std::iota(kept.begin(), kept.end(), size_t{0});
        return kept;
    }
    kept.reserve(2 * buckets + 2);
    kept.push_back(0);
    for (size_t b = 0; b < buckets; ++b) {
        const size_t begin = b * n / buckets;
        const size_t end = (b + 1) * n / buckets;
        size_t lo = begin, hi = begin;
        for (size_t i = begin + 1; i < end; ++i) {
            if (values[i] < values[lo])
                lo = i;
            if (values[i] > values[hi])
                hi = i;
        }
        for (size_t i : {std::min(lo, hi), std::max(lo, hi)})
            if (i > kept.back())
                kept.push_back(i);
    }
    if (kept.back() != n - 1)
        kept.push_back(n - 1);
    return kept;
}

} // namespace gui
