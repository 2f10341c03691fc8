#pragma once
#include "headroom/import/model.h"

#include <cstdint>
#include <vector>

namespace headroom {

// Concrete sizes of every tensor at one binding of the symbols. Cheap to build from the fitted shape
// functions (no inference), so it is rebuilt on every slider tick.
struct ShapeTable
{
    Bindings values;
    std::vector<int64_t> numel; // per tensor; -1 where the shape is unknown or overflows
    std::vector<int64_t> bytes; // numel * element size; -1 where unknown
    int64_t unknown = 0;        // activations whose size is unknown at this binding
};

// Evaluates every tensor's size at `values`. Tensors with State::Reinfer ask model.oracle (slow path).
ShapeTable evaluateShapes(const Model& model, const Bindings& values);
// The model's distinct exact shapes, each tensor's index into them (-1: not exact), so that a tick
// evaluates each distinct shape once: a deep graph repeats a handful of shapes ([batch, seq, d]) over
// 100k tensors, each dim an expression in its own allocation (issue 16). Points into `model`: valid while
// it is (a plan keeps one).
struct ShapeClasses
{
    std::vector<int> classOf;                        // per tensor
    std::vector<const std::vector<DimExpr>*> shapes; // per class: the dims of its first tensor
};
ShapeClasses classifyShapes(const Model& model);
// evaluateShapes(model, values), the same table, from the classes.
ShapeTable evaluateShapes(const Model& model, const ShapeClasses& classes, const Bindings& values);
// Concrete dims of one tensor (for display); empty if unknown.
std::vector<int64_t> concreteDims(const Model& model, int tensor, const Bindings& values);
// "[8, 3, 224, 224]" or "[batch, seq, 8000]" when symbolic is true.
std::string shapeString(const Model& model, int tensor, const Bindings* values);

} // namespace headroom
