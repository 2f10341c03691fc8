// headroom-cli CONFIG.json --serve vllm|hf-generate: vLLM's startup plan or generate()'s peak on each GPU named by
// --gpu (comma-separated; default the H100), one summary line each, or one JSON object with a `serving` entry per
// GPU.
#include "options.h"

#include "headroom/hardware/gpus.h"
#include "headroom/serving/serving_json.h"

#include <iostream>

namespace headroom::cli {
namespace {

std::vector<GpuSpec> servingGpus(const Options& o)
{
    if (o.capacity)
        return {customGpu(*o.capacity)};
    std::vector<GpuSpec> gpus;
    const std::string names = o.gpuName.value_or("H100");
    size_t start = 0;
    while (start <= names.size()) {
        const size_t comma = std::min(names.find(',', start), names.size());
        const std::string name = names.substr(start, comma - start);
        const auto g = findGpu(name);
        if (!g)
            throw UsageError{"--gpu: unknown GPU '" + name + "' (see --gpu list; or use --capacity BYTES)"};
        gpus.push_back(*g);
        start = comma + 1;
    }
    return gpus;
}

// --dtype under --serve: the served 16- or 32-bit type (Auto when not given).
WeightFormat servedDtype(const Options& o)
{
    if (!o.dtypeText)
        return WeightFormat::Auto;
    const auto f = parseWeightFormat(*o.dtypeText);
    if (!f || (*f != WeightFormat::Bf16 && *f != WeightFormat::Fp16 && *f != WeightFormat::Fp32))
        throw UsageError{"--dtype under --serve: expected bfloat16, float16 or float32, got '" + *o.dtypeText + "'"};
    return *f;
}

} // namespace

int runServe(const Options& o)
{
    const ServeModel model = loadServeModel(o.model);
    VllmSettings settings = o.vllm;
    if (settings.quantization == WeightFormat::Auto)
        settings.quantization = servedDtype(o);
    HfGenerateSettings hf = o.hf;
    hf.dtype = servedDtype(o);
    if (o.batch)
        hf.batch = *o.batch;
    const bool isHf = *o.serve == "hf-generate";
    nlohmann::json serving = nlohmann::json::array();
    for (const GpuSpec& gpu : servingGpus(o)) {
        if (isHf) {
            const HfGeneratePlan plan = planHfGenerate(model, hf, gpu);
            if (o.json)
                serving.push_back(toJson(plan));
            else
                std::cout << hfGenerateSummary(plan) << "\n";
            continue;
        }
        const VllmPlan plan = planVllm(model, settings, gpu);
        if (o.json)
            serving.push_back(toJson(plan));
        else
            std::cout << vllmSummary(plan) << "\n";
    }
    if (o.json)
        std::cout << nlohmann::json{{"schema", "headroom.serving/1"}, {"model", model.file}, {"serving", serving}}.dump(
                         2)
                  << "\n";
    return 0;
}

} // namespace headroom::cli
