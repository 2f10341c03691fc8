// importModel: parse, LoRA rewrite, import, symbols, classify, module paths, totals (shapes come next).
#include "headroom/import/import.h"

#include "headroom/base/error.h"
#include "headroom/import/hfconfig.h"
#include "import_internal.h"
#include "lora_graph.h"
#include "onnx_graph.h"

#include <onnx/onnx_pb.h>

#include <google/protobuf/io/coded_stream.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <filesystem>
#include <fstream>

namespace headroom {
namespace detail {
namespace {

std::string lowerCase(std::string_view s)
{
    std::string r(s);
    for (char& c : r)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return r;
}

bool isBatchName(const std::string& n)
{
    const std::string l = lowerCase(n);
    return l == "batch" || l == "batch_size" || l == "batchsize" || l == "n" || l == "bs" || l == "b" ||
           l == "batch_dim" || l == "nbatch" || l == "num_batch" || l == "unk__batch";
}

bool isSeqName(const std::string& n)
{
    const std::string l = lowerCase(n);
    for (const char* k : {"seq", "len", "token", "time", "step", "position", "sentence", "sequence"})
        if (l.find(k) != std::string::npos)
            return true;
    return l == "t" || l == "s" || l == "l";
}

bool isSpatialName(const std::string& n)
{
    const std::string l = lowerCase(n);
    return l == "h" || l == "w" || l == "height" || l == "width" || l.find("height") != std::string::npos ||
           l.find("width") != std::string::npos;
}

void assignSymbols(Model& m, const ImportContext& ctx, const onnx::ModelProto& mp, const LoadOptions& options,
                   const std::string& file)
{
    // The batch symbol: a batch-like name, else the first symbol found on axis 0.
    for (size_t i = 0; i < m.symbols.size() && m.batchSymbol < 0; ++i)
        if (isBatchName(m.symbols[i].name))
            m.batchSymbol = static_cast<int>(i);
    for (size_t i = 0; i < m.symbols.size() && m.batchSymbol < 0; ++i)
        if (i < ctx.symbolAxis.size() && ctx.symbolAxis[i] == 0)
            m.batchSymbol = static_cast<int>(i);
    for (size_t i = 0; i < m.symbols.size(); ++i) {
        Symbol& s = m.symbols[i];
        if (static_cast<int>(i) == m.batchSymbol) {
            s.isBatch = true;
            s.value = 1;
            s.defaultSource = "batch default (1)";
            continue;
        }
        bool hinted = false;
        for (const auto& kv : mp.metadata_props()) {
            if (kv.key() != s.name)
                continue;
            try {
                size_t used = 0;
                const long long v = std::stoll(kv.value(), &used);
                if (used == kv.value().size() && v > 0) {
                    s.value = v;
                    s.defaultSource = "model hint (metadata)";
                    hinted = true;
                }
            } catch (...) {
            }
        }
        if (hinted)
            continue;
        if (isSpatialName(s.name)) {
            s.value = 224;
            s.defaultSource = "default (224 for spatial dims)";
        } else {
            s.value = 128;
            s.defaultSource = isSeqName(s.name) ? "default (128 for sequence dims)" : "default (128)";
        }
    }
    for (const auto& [name, value] : options.symbolValues) {
        int idx = m.symbolIndex(name);
        if (idx < 0 && isBatchName(name))
            idx = m.batchSymbol;
        if (idx < 0) {
            std::string known;
            for (const Symbol& s : m.symbols)
                known += (known.empty() ? "" : ", ") + s.name;
            m.warnings.push_back(file + ": no symbol named '" + name + "'" +
                                 (known.empty() ? std::string(" (the model has none)") : " (symbols: " + known + ")"));
            continue;
        }
        if (value < 1) {
            m.warnings.push_back(file + ": value " + std::to_string(value) + " for '" + name +
                                 "' ignored (must be >= 1)");
            continue;
        }
        m.symbols[size_t(idx)].value = value;
        m.symbols[size_t(idx)].defaultSource = "set by user";
    }
}

void totals(Model& m)
{
    ParamTotals p;
    for (const Tensor& t : m.tensors) {
        if (t.aliasOf >= 0 || (t.producer >= 0 && t.role == TensorRole::Activation))
            continue;
        if (t.role != TensorRole::Parameter && t.role != TensorRole::Buffer && t.role != TensorRole::Constant)
            continue;
        int64_t numel = 1;
        for (const DimExpr& d : t.shape.dims)
            numel = checkedMul(numel, d.constantValue().value_or(0)).value_or(INT64_MAX);
        const int64_t bytes = checkedMul(numel, bytesOf(t.dtype)).value_or(INT64_MAX);
        auto add = [](int64_t& acc, int64_t v) { acc = checkedAdd(acc, v).value_or(INT64_MAX); };
        if (t.role == TensorRole::Parameter) {
            add(p.trainable, numel);
            add(p.trainableBytes, bytes);
        } else if (t.role == TensorRole::Buffer) {
            add(p.buffers, numel);
            add(p.bufferBytes, bytes);
        } else {
            add(p.constantBytes, bytes);
        }
    }
    m.params = p;
}

} // namespace

ImportedModel importModel(std::string_view bytes, const std::string& file, const std::string& folder,
                          const LoadOptions& options, std::string_view identity)
{
    if (bytes.empty())
        throw Error(file + ": the file is empty");
    if (static_cast<uint64_t>(bytes.size()) > static_cast<uint64_t>(kMaxOnnxBytes))
        throw Error(
            file +
            ": the file is larger than 2 GiB, protobuf's limit for one ONNX message; save the weights as external data");
    reportProgress(options, 0.0, "parsing");
    Model m;
    m.info.file = file;
    if (identity.empty())
        identity = bytes;
    m.info.fileSize = static_cast<int64_t>(identity.size());
    m.info.sha256 = sha256Hex(identity);

    onnx::ModelProto mp;
    {
        google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                  static_cast<int>(bytes.size()));
        in.SetTotalBytesLimit(INT_MAX);
        in.SetRecursionLimit(200);
        if (!mp.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
            throw Error(file + ": not an ONNX model (the protobuf data is invalid or truncated)");
    }
    if (!mp.has_graph())
        throw Error(file + ": not an ONNX model (no graph)");
    if (mp.graph().node_size() == 0)
        throw Error(file + ": the graph has no nodes");
    if (options.cancel && options.cancel->load())
        throw Error(file + ": loading cancelled");

    m.info.producer = mp.producer_name() + (mp.producer_version().empty() ? "" : " " + mp.producer_version());
    m.info.graphName = mp.graph().name();
    for (const auto& kv : mp.metadata_props())
        if (kv.key() == "model_type")
            m.info.modelType = kv.value();
    m.hfCausalLm = mp.producer_name() == kHfConfigProducer;
    m.info.irVersion = mp.ir_version();
    for (const auto& op : mp.opset_import()) {
        const std::string d = op.domain() == "ai.onnx" ? std::string() : op.domain();
        m.info.opsets.emplace_back(d, op.version());
    }
    if (m.info.opsets.empty())
        m.info.opsets.emplace_back("", 1); // IR < 3 files have no opset_import; ONNX treats them as opset 1
    if (m.info.irVersion < 3 || m.info.irVersion > 10)
        m.warnings.push_back(file + ": IR version " + std::to_string(m.info.irVersion) +
                             " is outside the supported range 3-10; loading anyway");
    for (const auto& [d, v] : m.info.opsets)
        if (d.empty() && (v < 7 || v > 18))
            m.warnings.push_back(file + ": opset " + std::to_string(v) +
                                 " is outside the supported range 7-18; loading anyway");

    if (options.lora.method == PeftMethod::IA3)
        applyIa3(mp, options.lora, file);
    else if (options.lora.r > 0)
        applyLora(mp, options.lora, file);
    reportProgress(options, 0.2, "importing graph");
    auto graph = std::make_shared<ShapeGraph>();
    ImportContext ctx;
    ctx.folder = folder;
    ctx.cancel = options.cancel;
    importGraph(mp, file, ctx, m, *graph);
    m.info.externalDataMissing = ctx.externalMissing;
    m.info.hasWeights = ctx.storedWithData > 0 || ctx.storedCount == 0;
    if (ctx.externalMissing)
        m.warnings.push_back(
            file + ": external weight data is not present (architecture only); sizes come from dims and dtypes");

    for (const Node& n : m.nodes) {
        if (!n.domain.empty() && n.domain != "ai.onnx.ml" && n.domain != "ai.onnx.preview.training" &&
            n.domain != "com.microsoft") {
            m.warnings.push_back(file + ": node '" + (n.name.empty() ? n.op : n.name) + "': custom op " + n.domain +
                                 "::" + n.op + "; its output shapes come from the file's declarations if any");
        }
    }
    assignSymbols(m, ctx, mp, options, file);
    classifyTensors(m);
    assignModules(m);
    totals(m);
    if (options.cancel && options.cancel->load())
        throw Error(file + ": loading cancelled");
    return {std::move(m), std::move(graph)};
}

} // namespace detail
} // namespace headroom
