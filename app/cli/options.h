#pragma once
#include "headroom/base/config.h"

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
    std::optional<std::string> csvFile;   // --csv FILE: write the CSV there instead of stdout
    bool allNodes = false;                // --all-nodes: unfold shape computations, list graph nodes
    bool pdfAllNodes = false;             // --pdf-all-nodes: the PDF's per-node table
    bool table = false;                   // --table: the human table even when files are written
    int probeTimeout = 120;
    bool bench = false;
    int benchIterations = 1000;
};

// Throws UsageError (exit code 2) on bad usage.
struct UsageError
{
    std::string message;
};
Options parseOptions(int argc, char** argv);
std::string usage();
// Accepts plain bytes or a unit suffix: 24GiB, 24GB, 24G (= GiB), 512MiB.
std::optional<int64_t> parseBytes(const std::string& text);

} // namespace headroom::cli
