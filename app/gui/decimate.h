#pragma once
#include <cstddef>
#include <vector>

namespace gui {

// Which points of a long series to draw: in each of `buckets` equal runs of points, the lowest and the
// highest (in their own order), plus the first and last point. With at least one bucket per pixel
// column, every column's drawn extent is the full series' extent there, so no spike, and never the peak,
// is lost; a series no longer than 2 * buckets is kept whole. Returns ascending indexes into `values`.
std::vector<size_t> minMaxPoints(const std::vector<double>& values, size_t buckets);

} // namespace gui
