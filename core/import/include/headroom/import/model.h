#pragma once
#include "headroom/base/dtype.h"
#include "headroom/base/symexpr.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace headroom {

// What a tensor is, as docs/DESIGN.md "Import" classifies it.
enum class TensorRole : uint8_t {
    Input,      // graph input that is not an initializer
    Activation, // output of a node
    Parameter,  // trainable stored tensor (weights, biases, norm scales, embedding tables, ...)
    Buffer,     // non-trained stored tensor (BN running stats, integer shapes, masks, position ids)
    Constant,   // stored scalar/shape constants that are neither (Constant-node scalars, axes, ...)
};

// The symbolic shape of a tensor. `dims` is valid when state == Exact.
struct TensorShape
{
    enum class State : uint8_t {
        Exact,   // dims hold for every binding (fitted and verified)
        Reinfer, // dims are not multilinear in the symbols: re-infer at the bound values
        Unknown, // shape inference could not determine it; see unknownNode/unknownReason
    };
    State state = State::Unknown;
    std::vector<DimExpr> dims;
    int unknownNode = -1;      // node that causes the unknown shape
    std::string unknownReason; // one line
};

struct Tensor
{
    std::string name;
    DType dtype = DType::Undefined;
    TensorRole role = TensorRole::Activation;
    int producer = -1;          // node index; -1 for inputs and stored tensors
    std::vector<int> consumers; // node indices, ascending (topological), no duplicates
    TensorShape shape;
    int aliasOf = -1; // Identity (or similar no-copy) output of a stored tensor: the stored tensor
    bool isGraphOutput = false;
    bool externalData = false; // stored tensor whose bytes live in an external file (never read)
    bool inSubgraph = false;   // stored tensor found inside an If/Loop/Scan body
};

// Kind::Tensor attributes keep no bytes: `i` holds the ONNX element type, `ints` the dims and `floats` the
// value when the tensor has one integral element (ConstantOfShape's fill value).
struct Attr
{
    enum class Kind : uint8_t { Int, Float, String, Ints, Floats, Strings, Tensor, Graph, Other };
    std::string name;
    Kind kind = Kind::Other;
    int64_t i = 0;
    double f = 0;
    std::string s;
    std::vector<int64_t> ints;
    std::vector<double> floats;
    std::vector<std::string> strings;
};

struct Node
{
    std::string name;         // as in the file (may be empty); display uses Model::nodePath
    std::string op;           // op_type
    std::string domain;       // "" for ai.onnx
    std::vector<int> inputs;  // tensor indices; -1 for an omitted optional input
    std::vector<int> outputs; // tensor indices; -1 for an omitted optional output
    std::vector<Attr> attrs;
    int layer = -1;                  // leaf LayerNode that holds this node
    bool hasSubgraphs = false;       // If/Loop/Scan: body activations are attributed to this node
    int implicitInputs = 0;          // the last `implicitInputs` entries of `inputs` are outer-scope tensors
                                     // read by this node's subgraphs (not ONNX inputs of the node)
    std::string module;              // module path as tree levels ("model/layers.3/self_attn/q_proj") from the
                                     // exporter's metadata_props, else from the parameters it consumes; "" if neither
    bool moduleFromMetadata = false; // `module` came from metadata_props (not guessed from parameter names)
    bool shapeComputation = false;   // exporter shape arithmetic: outputs only feed shape operands (layer_tree.cpp)
    bool fromInputsOnly = false;     // parameter-free, computed from integer inputs and constants: masks, positions

    const Attr* attr(std::string_view n) const noexcept;
    int64_t attrInt(std::string_view n, int64_t fallback) const noexcept;
    double attrFloat(std::string_view n, double fallback) const noexcept;
    std::vector<int64_t> attrInts(std::string_view n) const;
    std::string attrString(std::string_view n, std::string_view fallback = {}) const;
};

struct Symbol
{
    std::string name;  // dim_param, or "<input>_dim<k>" for unnamed dynamic dims
    int64_t value = 1; // default: batch 1; else the model's hint, else a stated default
    bool isBatch = false;
    std::string origin;        // "input_ids[1]": where it first appears
    std::string defaultSource; // "batch default", "model hint", "default" - said in the model info
};

// The layer tree mirrors the source framework's modules (scoped node names). Node 0 is the root.
struct LayerNode
{
    std::string name; // last path component ("conv1")
    std::string path; // full path ("layer1/layer1.0/conv1")
    int parent = -1;
    int depth = 0;                     // root 0
    std::vector<int> children;         // LayerNode indices
    std::vector<int> nodes;            // graph nodes directly under this layer (leaf layers hold them)
    int64_t params = 0;                // trainable parameter elements, aggregated over the subtree
    int firstNode = -1, lastNode = -1; // topological range covered by the subtree
    bool shapeOnly = false;            // every node of the subtree is a shape computation (folded when displayed)
};

struct ModelInfo
{
    std::string file;   // path as given
    std::string sha256; // of the file's bytes (the .onnx, or the config.json a graph was built from)
    int64_t fileSize = 0;
    std::string producer; // producer_name + " " + producer_version
    std::string graphName;
    std::string modelType; // a config's model_type (metadata_props "model_type", as the HF builder writes it)
    int64_t irVersion = 0;
    std::vector<std::pair<std::string, int64_t>> opsets; // domain ("" = ai.onnx) -> version
    bool externalDataMissing = false;                    // some initializer points at an absent external file
    bool hasWeights = true;                              // false when no stored tensor carries data
};

struct ParamTotals
{
    int64_t trainable = 0; // elements
    int64_t buffers = 0;   // elements
    int64_t trainableBytes = 0;
    int64_t bufferBytes = 0;
    int64_t constantBytes = 0;
};

// Re-runs shape inference at concrete symbol values, for tensors whose shape is State::Reinfer.
// Implemented by the loader (it keeps the parsed graph); thread-safe.
class ShapeOracle
{
public:
    virtual ~ShapeOracle() = default;
    // dims of every tensor at `values` (empty vector where unknown).
    virtual std::vector<std::vector<int64_t>> inferAt(const Bindings& values) const = 0;
};

// An imported model: immutable after load, shared by the CLI, GUI, engine and report.
struct Model
{
    ModelInfo info;
    std::vector<Tensor> tensors;
    std::vector<Node> nodes;  // topological order
    std::vector<int> inputs;  // tensor indices of graph inputs (not initializers)
    std::vector<int> outputs; // tensor indices of graph outputs
    std::vector<Symbol> symbols;
    int batchSymbol = -1;
    std::vector<LayerNode> layers; // [0] is the root
    ParamTotals params;
    std::vector<std::string> warnings; // one line each, naming the node where there is one
    std::shared_ptr<const ShapeOracle> oracle;
    // Built from a Hugging Face config.json (import/hfconfig.cpp): trained with `labels=`, its first output is
    // the logits that transformers' ForCausalLMLoss lifts to fp32 (memory/src/timeline/loss.cpp).
    bool hfCausalLm = false;

    Bindings defaultBindings() const;
    int symbolIndex(std::string_view name) const noexcept; // -1 if absent
    std::string nodePath(int node) const;                  // layer path + "/" + op, or name
    std::vector<std::string> symbolNames() const;
};

} // namespace headroom
