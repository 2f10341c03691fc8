// routeTask's table: one row per task, the engine for a graph and for a Hugging Face config.
#include "headroom/base/task.h"

namespace headroom {
namespace {

struct TaskRow
{
    Task task;
    std::string_view name;
    TaskEngine graph;  // an ONNX file
    TaskEngine config; // a config.json or checkpoint folder
};

// Generate on a graph is its forward pass (nothing kept for backward, no KV cache the graph does not hold);
// on a config it is generate()'s prefill and decode steps (core/serving/hf_generate).
constexpr TaskRow kRows[] = {
    {Task::Train, "train", TaskEngine::Training, TaskEngine::Training},
    {Task::FineTune, "finetune", TaskEngine::Training, TaskEngine::Training},
    {Task::Generate, "generate", TaskEngine::Inference, TaskEngine::HfGenerate},
    {Task::Serve, "serve", TaskEngine::None, TaskEngine::Vllm},
};

constexpr std::string_view kServeNeedsConfig =
    "serving needs a Hugging Face config.json or checkpoint folder: vLLM plans its startup from the config, and an "
    "ONNX graph has none";

const TaskRow& row(Task task) noexcept
{
    for (const TaskRow& r : kRows)
        if (r.task == task)
            return r;
    return kRows[0];
}

} // namespace

TaskRoute routeTask(Task task, bool hfConfig) noexcept
{
    const TaskEngine engine = hfConfig ? row(task).config : row(task).graph;
    return {engine, engine == TaskEngine::None ? kServeNeedsConfig : std::string_view()};
}

Task taskOf(const Config& config) noexcept
{
    if (config.mode == Mode::Infer)
        return Task::Generate;
    const FineTune& ft = config.finetune;
    return ft.lora.active() || ft.quant != Quant::None ? Task::FineTune : Task::Train;
}

std::string_view toString(Task task) noexcept { return row(task).name; }

std::optional<Task> parseTask(std::string_view text) noexcept
{
    for (const TaskRow& r : kRows)
        if (r.name == text)
            return r.task;
    if (text == "fine-tune")
        return Task::FineTune;
    return std::nullopt;
}

} // namespace headroom
