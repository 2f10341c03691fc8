#pragma once
// The libraries the probe uses only when present (dlopen, never linked): NVML for the context size, cuBLAS
// and cuDNN for their handles and workspace. A missing library is a warning, never a failure.
#include "headroom/probe/probe_protocol.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace probe {

// Device bytes in use as NVML sees them, before any CUDA context exists. -1 when NVML is absent.
int64_t nvmlUsedBytes(const std::string& pciBusId);

struct WorkspaceMeasure
{
    int64_t cublasHandle = -1, cublasWorkspace = -1;
    int64_t cudnnHandle = -1, cudnnWorkspace = -1;
    std::vector<std::string> warnings;
};

// Creates a cuBLAS and a cuDNN handle (kept until destruction, like a framework keeps them), runs the plan's
// largest GEMMs and asks cuDNN for its preferred algorithms' workspace on the plan's convolutions.
class Libraries
{
public:
    Libraries();
    ~Libraries();
    Libraries(const Libraries&) = delete;
    Libraries& operator=(const Libraries&) = delete;
    WorkspaceMeasure measure(const headroom::ProbePlan& plan);

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

} // namespace probe
