#pragma once
#include "headroom/base/config.h"
#include "headroom/base/task.h"
#include "headroom/serving/hf_generate.h"
#include "headroom/serving/vllm.h"

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace headroom::cli {

// The command line of docs/DESIGN.md "Machine-readable output and the CLI", parsed but not yet bound to a model
// (symbol names are resolved after load).
struct Options
{
    std::string model;
    std::optional<int64_t> batch;
    std::vector<std::pair<std::string, int64_t>> set;
    Config config;                      // everything except symbols
    std::optional<std::string> gpuName; // --gpu
    std::optional<int64_t> capacity;    // --capacity
    int depth = 3;
    bool json = false, csv = false, timeline = false, maxBatch = false, probe = false, help = false, version = false;
    std::optional<std::string> pdf, netron, lang, probePath, probePlan;
    std::optional<std::string> compare;   // --compare FILE: a measurement to set beside the theory
    std::optional<std::string> maxSymbol; // --max SYMBOL: the largest value of that symbol that fits
    std::optional<std::string> vary;      // --vary SYMBOL: its value changes from step to step up to the one set
    std::optional<std::string> csvFile;   // --csv FILE: write the CSV there instead of stdout
    bool allNodes = false;                // --all-nodes: unfold shape computations, list graph nodes
    bool pdfAllNodes = false;             // --pdf-all-nodes: the PDF's per-node table
    bool table = false;                   // --table: the human table even when files are written
    int probeTimeout = 120;
    bool bench = false;
    int benchIterations = 1000;
    // --serve ENGINE: an inference-serving plan instead of the training figure (serve_options.cpp)
    std::optional<std::string> serve; // vllm or hf-generate
    std::optional<Task> task;         // --task: which question (task_options.cpp routes it to --mode / --serve)
    bool modeGiven = false;           // --mode was on the command line
    VllmSettings vllm;
    HfGenerateSettings hf;                // --serve hf-generate (its batch is --batch)
    std::optional<std::string> dtypeText; // --dtype as written (vLLM's --dtype under --serve)
    std::optional<Framework> framework;   // --framework: its preset, applied after parsing under the flags
    uint32_t presetUserSet = 0;           // PresetSwitch bits of the switches a flag set (they stay)
    std::vector<std::string> serveFlags;  // vLLM's flags given, for the check that --serve vllm is there
    std::vector<std::string> hfFlags;     // generate()'s flags given, for the check that --serve hf-generate is
};

// Throws UsageError (exit code 2) on bad usage.
struct UsageError
{
    std::string message;
};
Options parseOptions(int argc, char** argv);
// A serving flag (--tp, --max-model-len, ...): true when `flag` is one, its value read through `value`.
bool parseServeFlag(const std::string& flag, const std::function<std::string(const std::string&)>& value, Options& o);
void checkServeCombinations(const Options& o);
// --task: sets --mode or --serve as routeTask says for the model's kind; UsageError where a flag says otherwise.
void applyTask(Options& o);
// headroom-cli CONFIG.json --serve vllm|hf-generate: the plan per GPU, human or --json (serve_run.cpp).
int runServe(const Options& o);
std::string usage();
// Accepts plain bytes or a unit suffix: 24GiB, 24GB, 24G (= GiB), 512MiB.
std::optional<int64_t> parseBytes(const std::string& text);

} // namespace headroom::cli
