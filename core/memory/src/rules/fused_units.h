#pragma once
// The plan's units (fused_units.cpp): the decompositions PyTorch runs as one op, then one unit per other
// dynamic node, in topological order of their heads.
#include "engine/engine_internal.h"

namespace headroom {

void formUnits(PlanData& plan, const Model& model, const PlanOptions& options);

} // namespace headroom
