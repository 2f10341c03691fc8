#pragma once
// Reading ONNX proto fields into import's types: attributes, the values of small stored tensors, and the
// module path in NodeProto.metadata_props (a field ONNX 1.12's classes drop). No graph state here.
#include "headroom/import/model.h"

#include <optional>
#include <string>
#include <vector>

namespace onnx {
class AttributeProto;
class NodeProto;
class TensorProto;
} // namespace onnx

namespace headroom::detail {

// "ai.onnx" and "" name the same domain; Node::domain keeps "".
std::string normDomain(const std::string& d);

bool isSubgraphAttr(const onnx::AttributeProto& a);
Attr convertAttr(const onnx::AttributeProto& a);

// Values of a small integer tensor (shape constants, axes, indices); nullopt when not available.
std::optional<std::vector<int64_t>> smallValue(const onnx::TensorProto& t, int64_t numel);
// The file holds the tensor's bytes inline (in any of the typed fields).
bool tensorHasData(const onnx::TensorProto& t);

// Node::module and Node::moduleFromMetadata from the exporter's metadata_props, when the node has any
// unknown fields (where ONNX 1.12 leaves them).
void readNodeModule(const onnx::NodeProto& np, Node& n);

} // namespace headroom::detail
