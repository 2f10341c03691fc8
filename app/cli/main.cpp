// headroom-cli: will this model fit on my GPU, and where does the memory go?
#include "options.h"
#include "pdfexport.h"
#include "table.h"

#include "headroom/base/error.h"
#include "headroom/base/format.h"
#include "headroom/hardware/gpus.h"
#include "headroom/headroom_config.h"
#include "headroom/load/loader.h"
#include "headroom/memory/finetune_summary.h"
#include "headroom/probe/measurement.h"
#include "headroom/probe/probe_protocol.h"
#include "headroom/report/report.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

using namespace headroom;

namespace {

constexpr int kExitOk = 0, kExitFile = 1, kExitUsage = 2;

void listGpus()
{
    std::printf("%s\n", kGpuCapacitySource);
    for (const GpuSpec& g : gpuPresets())
        std::printf("%-26s %12s  (context %s, workspace %s)\n", g.name.c_str(), formatBytes(g.capacity).c_str(),
                    formatBytes(g.context).c_str(), formatBytes(g.workspace).c_str());
}

// Binds --batch/--set to the model's symbols; unknown names are usage errors that list what exists.
Bindings bindSymbols(const Model& model, const cli::Options& o)
{
    Bindings values = model.defaultBindings();
    std::string names;
    for (const Symbol& s : model.symbols)
        names += (names.empty() ? "" : ", ") + s.name;
    if (o.batch) {
        if (model.batchSymbol < 0)
            throw cli::UsageError{model.info.file + ": --batch given but the model has no batch dimension (symbols: " +
                                  (names.empty() ? "none" : names) + ")"};
        values[static_cast<size_t>(model.batchSymbol)] = *o.batch;
    }
    for (const auto& [name, value] : o.set) {
        const int i = model.symbolIndex(name);
        if (i < 0)
            throw cli::UsageError{model.info.file + ": no symbol named '" + name +
                                  "' (symbols: " + (names.empty() ? "none" : names) + ")"};
        values[static_cast<size_t>(i)] = value;
    }
    return values;
}

GpuSpec chooseGpu(const cli::Options& o)
{
    if (o.capacity)
        return customGpu(*o.capacity);
    const std::string name = o.gpuName.value_or("RTX 4090");
    if (auto g = findGpu(name))
        return *g;
    std::string all;
    for (const GpuSpec& g : gpuPresets())
        all += (all.empty() ? "" : ", ") + g.name;
    throw cli::UsageError{"--gpu: unknown GPU '" + name + "' (presets: " + all + "; or use --capacity BYTES)"};
}

bool writeFile(const std::string& path, const std::string& text, std::string& error)
{
    // Write beside the target and rename, so a failed write never leaves a partial file.
    const std::string tmp = path + ".part";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        if (!f) {
            error = path + ": cannot write: " + std::strerror(errno);
            return false;
        }
        f << text;
        f.flush();
        if (!f) {
            error = path + ": write failed: " + std::strerror(errno);
            std::remove(tmp.c_str());
            return false;
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        error = path + ": cannot write: " + std::strerror(errno);
        std::remove(tmp.c_str());
        return false;
    }
    return true;
}

// --bench
int runBench(const Model& model, const Config& config, const cli::Options& o)
{
    // Re-evaluation cost of this configuration: what every slider tick pays. The plan is built once, as
    // the GUI keeps it across ticks (issue 16: buildPlan does not run on a tick).
    const EnginePlan plan = makePlan(model, config);
    std::vector<double> us;
    us.reserve(static_cast<size_t>(o.benchIterations));
    for (int i = 0; i < o.benchIterations; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        const Evaluation e = evaluate(plan, config);
        const auto t1 = std::chrono::steady_clock::now();
        if (e.memory.peak < 0)
            return kExitFile;
        us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    std::sort(us.begin(), us.end());
    std::printf("%s: evaluate() x%d: median %.1f us, p90 %.1f us, max %.1f us\n", o.model.c_str(), o.benchIterations,
                us[us.size() / 2], us[us.size() * 9 / 10], us.back());
    return kExitOk;
}

// The human report: the table, then the lines only some configurations have.
void printHuman(const Model& model, const Config& config, const Report& report, const cli::Options& o,
                const std::optional<nlohmann::json>& compare)
{
    std::cout << cli::humanReport(model, report, o.depth, o.allNodes);
    if (config.finetune.lora.active() || config.finetune.quant != Quant::None) {
        const FineTuneSummary f = summarizeFineTune(model, config, report.evaluation);
        if (f.method == "inference")
            std::cout << "Inference: " << f.trainableParams + f.frozenParams << " parameters";
        else
            std::cout << "Fine-tuning: " << f.method << ", " << f.trainableParams << " trainable of "
                      << f.trainableParams + f.frozenParams << " parameters; frozen base "
                      << formatBytes(f.frozenBytes);
        if (config.finetune.quant != Quant::None)
            std::cout << " (" << toString(config.finetune.quant) << " weights " << formatBytes(f.quantizedBytes)
                      << ", largest dequantized weight " << formatBytes(f.dequantTransientBytes) << ")";
        std::cout << "\n";
    }
    if (report.evaluation.memory.pagedOptimizer > 0)
        std::cout << "Paged optimizer state: " << formatBytes(report.evaluation.memory.pagedOptimizer)
                  << " in CUDA unified memory, beside the peak (evictable to host memory)\n";
    if (config.offloadActivations && report.evaluation.memory.offloadedActivations > 0)
        std::cout << "Offloaded activations: " << formatBytes(report.evaluation.memory.offloadedActivations)
                  << " in pinned host memory, beside the peak (torchtune's OffloadActivations)\n";
    if (o.maxBatch)
        std::cout << "Max batch on " << report.fit.gpu << ": "
                  << (report.fit.maxBatch == kUnknownMax ? std::string("cannot tell")
                                                         : std::to_string(report.fit.maxBatch))
                  << "\n";
    if (report.probe)
        std::cout << "Probe: " << report.probe->dump() << "\n";
    if (compare)
        std::cout << cli::compareTable(*compare);
}

// Long on purpose: the CLI's whole flow in the order it happens (options, load, evaluate, searches, each output,
// exit code); every step is a call or a few lines, and that order is what a reader comes here for.
int run(int argc, char** argv)
{
    const cli::Options o = cli::parseOptions(argc, argv);
    if (o.help) {
        std::fputs(cli::usage().c_str(), stdout);
        return kExitOk;
    }
    if (o.version) {
        std::printf("headroom-cli %s (%s)\n", HEADROOM_VERSION,
                    HEADROOM_HAVE_CUDA ? "with CUDA probe" : "built without CUDA");
        return kExitOk;
    }
    if (o.gpuName && *o.gpuName == "list") {
        listGpus();
        return kExitOk;
    }
    if (o.serve)
        return cli::runServe(o);
    Config config = o.config;
    config.gpu = chooseGpu(o);

    LoadOptions load;
    if (o.batch)
        load.symbolValues.emplace_back("batch", *o.batch);
    for (const auto& s : o.set)
        load.symbolValues.push_back(s);
    load.lora = config.finetune.lora;
    if (load.lora.active())
        for (const std::string& p : adapterFreezePatterns(load.lora))
            config.freeze.push_back(p);
    const Model model = loadModel(o.model, load);
    config.symbols = bindSymbols(model, o);
    if (o.vary) {
        config.varySymbol = model.symbolIndex(*o.vary);
        if (config.varySymbol < 0) {
            std::string names;
            for (const Symbol& s : model.symbols)
                names += (names.empty() ? "" : ", ") + s.name;
            throw cli::UsageError{model.info.file + ": --vary: no symbol named '" + *o.vary +
                                  "' (symbols: " + (names.empty() ? "none" : names) + ")"};
        }
    }

    if (o.bench)
        return runBench(model, config, o);

    ReportOptions ro;
    ro.timeline = o.timeline;
    if (config.mode == Mode::Train && !config.finetune.lora.active())
        ro.loraVariant = peftDefaultLoraVariant(o.model, load); // loaded only if the fit plan asks
    if (o.maxSymbol) {
        ro.maxSymbol = model.symbolIndex(*o.maxSymbol);
        if (ro.maxSymbol < 0) {
            std::string names;
            for (const Symbol& s : model.symbols)
                names += (names.empty() ? "" : ", ") + s.name;
            throw cli::UsageError{model.info.file + ": --max: no symbol named '" + *o.maxSymbol +
                                  "' (symbols: " + (names.empty() ? "none" : names) + ")"};
        }
    }
    Report report = buildReport(model, config, ro);

    // Commands that write files say one line per file; the table comes only when asked (--table) or when
    // nothing was written.
    std::vector<std::string> written;
    if (o.probe || o.probePlan) {
        const int64_t batch = model.batchSymbol >= 0 ? config.symbols[static_cast<size_t>(model.batchSymbol)] : 1;
        const std::vector<int64_t> batches = model.batchSymbol >= 0 ? bisectionBatches(report.fit.maxBatch, batch)
                                                                    : std::vector<int64_t>{};
        const ProbePlan plan = makeProbePlan(model, config, batches);
        if (o.probePlan) {
            // The GPU machine may have neither ONNX nor Qt: write the plan here, replay it there.
            std::string error;
            if (!writeFile(*o.probePlan, toJson(plan).dump() + "\n", error))
                throw Error(error);
            written.push_back("probe plan (" + std::to_string(plan.events.size()) + " events, " +
                              std::to_string(plan.batchPlans.size()) + " batch sizes) -> " + *o.probePlan);
        }
        if (o.probe) {
            const ProbeResult result = runProbe(plan, o.probePath.value_or(""), o.probeTimeout);
            report.probe = toJson(result);
            if (result.status != ProbeResult::Status::Ok)
                std::fprintf(stderr, "headroom-cli: probe: %s\n", result.message.c_str());
        }
    }

    std::optional<nlohmann::json> compare;
    if (o.compare) {
        MeasurementKey key;
        key.model = std::filesystem::path(o.model).stem().string();
        key.batch = model.batchSymbol >= 0 ? config.symbols[static_cast<size_t>(model.batchSymbol)] : 1;
        if (const int s = model.symbolIndex("seq"); s >= 0)
            key.seq = config.symbols[static_cast<size_t>(s)];
        key.config = config;
        compare = compareJson(loadMeasurement(*o.compare, key), report.evaluation.memory);
    }

    if (o.netron) {
        std::string error;
        if (!writeFile(*o.netron, toNetronAttachment(model, report).dump(1) + "\n", error))
            throw Error(error);
        written.push_back("Netron attachment (" + std::to_string(model.nodes.size()) + " nodes) -> " + *o.netron);
    }
    if (o.csvFile) {
        std::string error;
        if (!writeFile(*o.csvFile, toCsv(model, report), error))
            throw Error(error);
        written.push_back("CSV layer table (" + std::to_string(model.nodes.size()) + " rows) -> " + *o.csvFile);
    }
    if (o.pdf) {
        if (auto error = cli::exportPdf(*o.pdf, model, report, o.lang, argc, argv, o.depth, o.pdfAllNodes))
            throw Error(*error);
        written.push_back(std::string("PDF report") + (o.pdfAllNodes ? " (every node)" : "") + " -> " + *o.pdf);
    }
    // With --json or --csv on stdout, stdout stays machine-readable: the lines go to stderr.
    for (const std::string& w : written)
        (o.json || o.csv ? std::cerr : std::cout) << "wrote " << w << "\n";

    if (o.json) {
        nlohmann::json j = toJson(model, report, ro);
        if (compare)
            j["compare"] = *compare;
        std::cout << j.dump(1) << "\n";
    } else if (o.csv) {
        std::cout << toCsv(model, report);
    } else if (written.empty() || o.table || o.maxBatch || report.probe) {
        printHuman(model, config, report, o, compare);
    }
    return kExitOk;
}

} // namespace

int main(int argc, char** argv)
{
    try {
        return run(argc, argv);
    } catch (const cli::UsageError& e) {
        std::fprintf(stderr, "headroom-cli: %s\n", e.message.c_str());
        return kExitUsage;
    } catch (const Error& e) {
        std::fprintf(stderr, "headroom-cli: %s\n", e.what());
        return kExitFile;
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "headroom-cli: out of memory\n");
        return kExitFile;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "headroom-cli: %s\n", e.what());
        return kExitFile;
    }
}
