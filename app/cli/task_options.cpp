// --task train|finetune|generate|serve: the window's task switch on the command line. routeTask (core/base) says
// which engine answers the task for the model's kind; this sets the flags that run it and refuses flags that ask
// another question, so `--task X` and the window's task X print the same report.
#include "options.h"

#include "headroom/import/hfconfig.h"

namespace headroom::cli {

void applyTask(Options& o)
{
    if (!o.task)
        return;
    const std::string task = "--task " + std::string(toString(*o.task));
    const TaskRoute route = routeTask(*o.task, !o.model.empty() && isHfConfigPath(o.model));
    const FineTune& ft = o.config.finetune;
    const bool adapters = ft.lora.active() || ft.quant != Quant::None;
    auto servesWith = [&](const char* engine) {
        if (o.serve && *o.serve != engine)
            throw UsageError{task + " runs --serve " + engine + ", not --serve " + *o.serve};
        if (o.modeGiven)
            throw UsageError{task + " plans " + engine +
                             "; --mode is for train, finetune and generate on an ONNX "
                             "graph"};
        o.serve = engine;
    };
    switch (route.engine) {
    case TaskEngine::None: throw UsageError{task + ": " + o.model + ": " + std::string(route.refusal)};
    case TaskEngine::Training:
        if (o.serve)
            throw UsageError{task + " reports the training step; --serve is --task generate's or serve's"};
        if (o.modeGiven && o.config.mode != Mode::Train)
            throw UsageError{task + " trains; --mode infer is --task generate's"};
        if (*o.task == Task::Train && adapters)
            throw UsageError{task + " trains every weight; --lora, --ia3 and --quant are --task finetune's"};
        o.config.mode = Mode::Train;
        break;
    case TaskEngine::Inference:
        if (o.serve)
            throw UsageError{task + " on an ONNX graph is its forward pass; --serve needs a config.json"};
        if (o.modeGiven && o.config.mode != Mode::Infer)
            throw UsageError{task + " runs the forward pass; --mode train is --task train's"};
        o.config.mode = Mode::Infer;
        break;
    case TaskEngine::HfGenerate: servesWith("hf-generate"); break;
    case TaskEngine::Vllm: servesWith("vllm"); break;
    }
}

} // namespace headroom::cli
