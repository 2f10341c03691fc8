#pragma once
// Shared between import's source files; not a public contract.
#include "headroom/import/model.h"

#include <string>
#include <string_view>
#include <vector>

namespace headroom::detail {

std::string sha256Hex(std::string_view bytes);

void classifyTensors(Model& model);
// Node::module for nodes the metadata did not name, from the parameters they consume (after classify).
void assignModules(Model& model);
// "model.layers.3.self_attn" -> {"model", "layers.3", "self_attn"}: the layer tree's levels.
std::vector<std::string> modulePathParts(const std::string& dotted);

} // namespace headroom::detail
