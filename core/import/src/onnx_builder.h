#pragma once
// Writes the ONNX graphs import makes itself, laid out the way torch.onnx.export writes them: a Hugging Face
// config.json's architecture (hfconfig.cpp) and the synthetic test and benchmark graphs (synthetic.cpp).
// Their serialized bytes are what the loader reads, so what this writes, and in which order, is fixed.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace headroom::detail {

// What differs between the two generators' files.
struct OnnxStyle
{
    std::string producer;             // ModelProto.producer_name
    int64_t opset = 18;               // ai.onnx
    std::string weightsFile;          // every weight's external_data location (a file that is not there)
    bool weightOffsets = false;       // and its offset, as if the float32 weights lay end to end in it
    bool namedConstantValues = false; // a Constant's value tensor carries the Constant's output name
};

class OnnxBuilder
{
public:
    OnnxBuilder(OnnxStyle style, const std::string& graphName);
    OnnxBuilder(const OnnxBuilder&) = delete; // m_g points into m_model
    OnnxBuilder& operator=(const OnnxBuilder&) = delete;

    void metadata(const std::string& key, const std::string& value);
    // Graph inputs and outputs with dims [batch, seq], or [batch, seq, lastDim] when lastDim > 0.
    void input(const std::string& name, int elemType, int64_t lastDim = 0);
    void output(const std::string& name, int elemType, int64_t lastDim = 0);
    // A graph output with dims [batch, lastDim] (a sequence classifier's logits).
    void outputRows(const std::string& name, int elemType, int64_t lastDim);
    // A scalar graph output (a loss).
    void scalarOutput(const std::string& name, int elemType);

    // A node named `scope/op`, then `scope/op_1`, ..., as torch.onnx names an op repeated in one module.
    // Outputs are named `<node>_output_<k>`.
    std::vector<std::string> nodes(const std::string& op, const std::string& scope, const std::vector<std::string>& in,
                                   int outputs = 1);
    std::string node(const std::string& op, const std::string& scope, const std::vector<std::string>& in)
    {
        return nodes(op, scope, in)[0];
    }
    // A node the caller names; returns its first output.
    std::string namedNode(const std::string& op, const std::string& name, const std::vector<std::string>& in,
                          int outputs = 1);

    // Attributes of the node added last.
    void attrInt(const std::string& name, int64_t v);
    void attrInts(const std::string& name, const std::vector<int64_t>& v);
    void attrFloat(const std::string& name, double v);
    void attrString(const std::string& name, const std::string& v);

    // Shape pieces and scalars as Constant nodes, as torch.onnx writes them: constants, not buffers. Named
    // `name`, or `Constant_<k>` in order when it is empty; they return the Constant's output.
    std::string ints(const std::vector<int64_t>& v, bool scalar = false, const std::string& name = {});
    std::string scalar(double v, const std::string& name = {}); // float32
    std::string boolean(bool v);
    // A trained tensor: float32, dims only, its bytes in the style's weights file.
    std::string weight(const std::string& name, const std::vector<int64_t>& dims);

    std::string serialize() const { return m_model.SerializeAsString(); }

private:
    onnx::NodeProto* addNode(const std::string& op, const std::string& name, const std::vector<std::string>& in,
                             int outputs);
    onnx::AttributeProto* addAttr(const std::string& name, onnx::AttributeProto::AttributeType type);
    // A Constant node's output and the value tensor the caller fills.
    std::pair<std::string, onnx::TensorProto*> constant(const std::string& name);

    OnnxStyle m_style;
    onnx::ModelProto m_model;
    onnx::GraphProto* m_g;
    onnx::NodeProto* m_last = nullptr;
    std::map<std::string, int> m_count; // per `scope/op`: nodes named so far
    int m_consts = 0;
    int64_t m_offset = 0; // bytes of the weights written so far
};

} // namespace headroom::detail
