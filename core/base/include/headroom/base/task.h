#pragma once
// The question the user asks (docs/USER_GUIDE.md "Tasks"): train a model, fine-tune it, generate with it, serve
// it. The window's task switch and headroom-cli --task name the same four, and this table says which engine
// answers each for the kind of model opened, or why none does, so both surfaces route a task the same way.
#include "headroom/base/config.h"

#include <optional>
#include <string_view>

namespace headroom {

enum class Task : uint8_t { Train, FineTune, Generate, Serve };

// What answers a task: the training engine (Mode::Train), the forward pass alone (Mode::Infer), Hugging Face
// generate()'s plan, vLLM's startup plan; None with a reason when the model cannot answer it.
enum class TaskEngine : uint8_t { Training, Inference, HfGenerate, Vllm, None };

struct TaskRoute
{
    TaskEngine engine = TaskEngine::None;
    std::string_view refusal; // why not, when engine is None: one line for the user
};

// A Hugging Face config.json (or a checkpoint folder) has a serving plan; an ONNX graph is only a graph: it
// generates as one forward pass at the batch and sizes set, and no serving engine reads it.
TaskRoute routeTask(Task task, bool hfConfig) noexcept;
// The task whose engine runs a configuration (the CLI's flags before --task existed, the GUI's saved settings).
Task taskOf(const Config& config) noexcept;
// Every task in the order the switch shows them.
inline constexpr Task kTasks[] = {Task::Train, Task::FineTune, Task::Generate, Task::Serve};

std::string_view toString(Task task) noexcept; // "train", "finetune", "generate", "serve"
std::optional<Task> parseTask(std::string_view text) noexcept;

} // namespace headroom
