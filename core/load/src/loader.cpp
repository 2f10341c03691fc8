// loadModel / loadModelFromBytes: import, then shapes, then the layer tree.
#include "headroom/load/loader.h"

#include "headroom/base/error.h"
#include "headroom/import/hfconfig.h"
#include "headroom/shapes/shape_fit.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <utility>

namespace headroom {
namespace detail {
namespace {

Model load(std::string_view bytes, const std::string& file, const std::string& folder, const LoadOptions& options,
           std::string_view identity = {})
{
    ImportedModel imported = importModel(bytes, file, folder, options, identity);
    Model& m = imported.model;
    reportProgress(options, 0.4, "inferring shapes");
    fitShapes(m, std::move(imported.graph));
    reportProgress(options, 0.9, "building layer tree");
    buildLayerTree(m);
    reportProgress(options, 1.0, "done");
    return std::move(imported.model);
}

} // namespace
} // namespace detail

Model loadModel(const std::string& path, const LoadOptions& options)
{
    std::error_code ec;
    const std::filesystem::path p(path);
    if (!std::filesystem::exists(p, ec))
        throw Error(path + ": no such file");
    if (isHfConfigPath(path)) { // a Hugging Face config.json (or its folder): the architecture it describes
        std::string text;
        const std::string graph = buildHfModelFromPath(path, &text);
        Model m = detail::load(graph, path, {}, options, text);
        for (std::string& w : m.warnings)
            if (w.find("external weight data is not present") != std::string::npos)
                w = path +
                    ": built from a Hugging Face config.json (architecture only, no weights); sizes come from its hyper-parameters";
        return m;
    }
    if (std::filesystem::is_directory(p, ec))
        throw Error(path + ": is a folder, not an ONNX file");
    const auto size = std::filesystem::file_size(p, ec);
    if (ec)
        throw Error(path + ": cannot read the file (" + ec.message() + ")");
    if (size > static_cast<uintmax_t>(detail::kMaxOnnxBytes))
        throw Error(path + ": the file is " + std::to_string(size / (1024 * 1024)) +
                    " MiB, larger than protobuf's 2 GiB limit for one ONNX message; save the weights as external data");
    std::ifstream f(p, std::ios::binary);
    if (!f)
        throw Error(path + ": cannot open the file");
    std::string bytes(size, '\0');
    f.read(bytes.data(), static_cast<std::streamsize>(size));
    if (static_cast<uintmax_t>(f.gcount()) != size)
        throw Error(path + ": cannot read the file");
    const std::string folder = p.has_parent_path() ? p.parent_path().string() : std::string(".");
    return detail::load(bytes, path, folder, options);
}

Model loadModelFromBytes(std::string_view bytes, const std::string& displayName, const LoadOptions& options)
{
    return detail::load(bytes, displayName, {}, options);
}

LoraVariantSource peftDefaultLoraVariant(const std::string& path, const LoadOptions& options)
{
    struct Cache
    {
        std::once_flag once;
        LoraVariant variant;
    };
    auto cache = std::make_shared<Cache>();
    LoadOptions o;
    o.symbolValues = options.symbolValues; // no progress or cancel: the first load's callbacks are gone by then
    o.lora.r = 8;                          // peft LoraConfig(): r=8, lora_alpha=8, lora_dropout=0.0, the
    o.lora.alpha = 8;                      // model type's default target_modules (targets empty)
    return [cache, path, o]() {
        std::call_once(cache->once, [&] {
            try {
                cache->variant.model = std::make_shared<const Model>(loadModel(path, o));
                cache->variant.spec = o.lora;
            } catch (const Error&) {
                // No PEFT default for the model type. A Hugging Face config (the MoE types PEFT does not list)
                // gets PEFT's own "all-linear" shorthand, what the QLoRA paper and the MoE recipes give: every
                // Linear but the output layer (3D experts are parameters, not Linear: PEFT adapts them only
                // through target_parameters). An ONNX file without a default (a CNN, no model_type) has no
                // LoRA step, as before.
                if (isHfConfigPath(path)) {
                    LoadOptions all = o;
                    all.lora.targets = {"all-linear"};
                    try {
                        cache->variant.model = std::make_shared<const Model>(loadModel(path, all));
                        cache->variant.spec = all.lora;
                    } catch (const Error&) {
                    }
                }
            }
        });
        return cache->variant;
    };
}

} // namespace headroom
