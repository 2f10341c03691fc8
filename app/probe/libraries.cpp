#include "libraries.h"
#include "replay.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <initializer_list>

// The toolkit's headers give the exact prototypes; the libraries themselves are opened at run time, so the
// probe runs (without these measurements) where they are not installed.
#if __has_include(<cublas_v2.h>)
#include <cublas_v2.h>
#define HEADROOM_PROBE_CUBLAS 1
#else
#define HEADROOM_PROBE_CUBLAS 0
#endif
#if __has_include(<cudnn.h>)
#include <cudnn.h>
#define HEADROOM_PROBE_CUDNN 1
#else
#define HEADROOM_PROBE_CUDNN 0
#endif

namespace probe {

namespace {

void* openFirst(std::initializer_list<const char*> names)
{
    for (const char* n : names)
        if (void* h = dlopen(n, RTLD_NOW | RTLD_LOCAL))
            return h;
    return nullptr;
}

template <typename F> bool resolve(void* lib, const char* name, F& fn)
{
    fn = reinterpret_cast<F>(dlsym(lib, name));
    return fn != nullptr;
}

} // namespace

int64_t nvmlUsedBytes(const std::string& pciBusId)
{
    // NVML ships with the driver; its ABI for these four calls has been stable since driver 3xx.
    struct NvmlMemory
    {
        unsigned long long total, free, used;
    };
    using Init = int (*)();
    using ByPci = int (*)(const char*, void**);
    using MemInfo = int (*)(void*, NvmlMemory*);
    void* lib = openFirst({"libnvidia-ml.so.1", "libnvidia-ml.so"});
    if (!lib)
        return -1;
    Init init = nullptr, shutdown = nullptr;
    ByPci byPci = nullptr;
    MemInfo memInfo = nullptr;
    int64_t used = -1;
    if (resolve(lib, "nvmlInit_v2", init) && resolve(lib, "nvmlShutdown", shutdown) &&
        resolve(lib, "nvmlDeviceGetHandleByPciBusId_v2", byPci) && resolve(lib, "nvmlDeviceGetMemoryInfo", memInfo) &&
        init() == 0) {
        void* dev = nullptr;
        NvmlMemory m{};
        if (byPci(pciBusId.c_str(), &dev) == 0 && memInfo(dev, &m) == 0)
            used = static_cast<int64_t>(m.used);
        shutdown();
    }
    dlclose(lib);
    return used;
}

struct Libraries::Impl
{
    void* cublasLib = nullptr;
    void* cudnnLib = nullptr;
#if HEADROOM_PROBE_CUBLAS
    cublasHandle_t cublas = nullptr;
    decltype(&::cublasDestroy_v2) cublasDestroy = nullptr;
#endif
#if HEADROOM_PROBE_CUDNN
    cudnnHandle_t cudnn = nullptr;
    decltype(&::cudnnDestroy) cudnnDestroyFn = nullptr;
#endif

    void measureCublas(const headroom::ProbePlan& plan, WorkspaceMeasure& m);
    void measureCudnn(const headroom::ProbePlan& plan, WorkspaceMeasure& m);
};

Libraries::Libraries() : d(std::make_unique<Impl>()) {}

Libraries::~Libraries()
{
#if HEADROOM_PROBE_CUBLAS
    if (d->cublas && d->cublasDestroy)
        d->cublasDestroy(d->cublas);
#endif
#if HEADROOM_PROBE_CUDNN
    if (d->cudnn && d->cudnnDestroyFn)
        d->cudnnDestroyFn(d->cudnn);
#endif
    // The libraries stay loaded: unloading cuBLAS/cuDNN at exit races their own atexit handlers.
}

WorkspaceMeasure Libraries::measure(const headroom::ProbePlan& plan)
{
    WorkspaceMeasure m;
    d->measureCublas(plan, m);
    d->measureCudnn(plan, m);
    return m;
}

void Libraries::Impl::measureCublas([[maybe_unused]] const headroom::ProbePlan& plan, WorkspaceMeasure& m)
{
#if HEADROOM_PROBE_CUBLAS
    cublasLib = openFirst({"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"});
    if (!cublasLib) {
        m.warnings.emplace_back("cuBLAS not found: its workspace is not measured");
        return;
    }
    decltype(&::cublasCreate_v2) create = nullptr;
    // Spelled out: C++ sees an overload (cudaDataType vs cublasDataType_t) that decltype cannot pick.
    using GemmFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                      const void*, cudaDataType, int, long long, const void*, cudaDataType, int,
                                      long long, const void*, void*, cudaDataType, int, long long, int,
                                      cublasComputeType_t, cublasGemmAlgo_t);
    GemmFn gemm = nullptr;
    if (!resolve(cublasLib, "cublasCreate_v2", create) || !resolve(cublasLib, "cublasDestroy_v2", cublasDestroy) ||
        !resolve(cublasLib, "cublasGemmStridedBatchedEx", gemm)) {
        m.warnings.emplace_back("cuBLAS lacks the expected functions: its workspace is not measured");
        return;
    }
    const int64_t before = deviceUsed();
    if (create(&cublas) != CUBLAS_STATUS_SUCCESS) {
        cublas = nullptr;
        m.warnings.emplace_back("cublasCreate failed: its workspace is not measured");
        return;
    }
    m.cublasHandle = std::max<int64_t>(0, deviceUsed() - before);

    // The largest GEMMs by work (at most 8); with none in the plan, one small GEMM so the library sets up.
    std::vector<headroom::ProbePlan::Gemm> gemms = plan.gemms;
    std::sort(gemms.begin(), gemms.end(), [](const auto& a, const auto& b) {
        return static_cast<double>(a.m) * static_cast<double>(a.n) * static_cast<double>(a.k) *
                   static_cast<double>(a.batch) >
               static_cast<double>(b.m) * static_cast<double>(b.n) * static_cast<double>(b.k) *
                   static_cast<double>(b.batch);
    });
    if (gemms.size() > 8)
        gemms.resize(8);
    if (gemms.empty())
        gemms.push_back({64, 64, 64, 1});
    const cudaDataType type = plan.dtype == "fp16" ? CUDA_R_16F : plan.dtype == "bf16" ? CUDA_R_16BF : CUDA_R_32F;
    const int64_t elt = type == CUDA_R_32F ? 4 : 2;
    size_t freeBytes = 0, totalBytes = 0;
    cudaMemGetInfo(&freeBytes, &totalBytes);
    for (const auto& g : gemms) {
        if (g.m > INT_MAX || g.n > INT_MAX || g.k > INT_MAX || g.batch > INT_MAX)
            continue;
        const int64_t a = g.m * g.k, b = g.k * g.n, c = g.m * g.n;
        const int64_t bytes = (a + b + c) * g.batch * elt;
        if (bytes <= 0 || bytes > static_cast<int64_t>(freeBytes / 4)) {
            m.warnings.push_back("GEMM " + std::to_string(g.m) + "x" + std::to_string(g.n) + "x" + std::to_string(g.k) +
                                 " skipped: operands too large");
            continue;
        }
        void* buf = nullptr;
        if (cudaMalloc(&buf, static_cast<size_t>(bytes)) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        cudaMemset(buf, 0, static_cast<size_t>(bytes));
        char* base = static_cast<char*>(buf);
        const float alpha = 1.0F, beta = 0.0F;
        // Row-major C[m,n] = A[m,k] B[k,n] is column-major C^T = B^T A^T.
        const cublasStatus_t st = gemm(cublas, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(g.n), static_cast<int>(g.m),
                                       static_cast<int>(g.k), &alpha, base + a * g.batch * elt, type,
                                       static_cast<int>(g.n), b, base, type, static_cast<int>(g.k), a, &beta,
                                       base + (a + b) * g.batch * elt, type, static_cast<int>(g.n), c,
                                       static_cast<int>(g.batch), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        cudaDeviceSynchronize();
        cudaFree(buf);
        if (st != CUBLAS_STATUS_SUCCESS)
            m.warnings.push_back("cuBLAS GEMM failed with status " + std::to_string(static_cast<int>(st)));
    }
    cudaGetLastError();
    m.cublasWorkspace = std::max<int64_t>(0, deviceUsed() - before);
#else
    m.warnings.emplace_back("built without cuBLAS headers: its workspace is not measured");
#endif
}

// Long on purpose: most lines resolve cuDNN's entry points one by one (dlopen, no link dependency) before the
// single descriptor set-up and workspace query they serve.
void Libraries::Impl::measureCudnn([[maybe_unused]] const headroom::ProbePlan& plan, WorkspaceMeasure& m)
{
#if HEADROOM_PROBE_CUDNN
    cudnnLib = openFirst({"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so"});
    if (!cudnnLib) {
        m.warnings.emplace_back("cuDNN not found: its workspace is not measured");
        return;
    }
#define HEADROOM_CUDNN_FN(name)                                                                                        \
    decltype(&::name) name##Fn = nullptr;                                                                              \
    ok = ok && resolve(cudnnLib, #name, name##Fn)
    bool ok = true;
    HEADROOM_CUDNN_FN(cudnnCreate);
    HEADROOM_CUDNN_FN(cudnnCreateTensorDescriptor);
    HEADROOM_CUDNN_FN(cudnnSetTensor4dDescriptor);
    HEADROOM_CUDNN_FN(cudnnDestroyTensorDescriptor);
    HEADROOM_CUDNN_FN(cudnnCreateFilterDescriptor);
    HEADROOM_CUDNN_FN(cudnnSetFilter4dDescriptor);
    HEADROOM_CUDNN_FN(cudnnDestroyFilterDescriptor);
    HEADROOM_CUDNN_FN(cudnnCreateConvolutionDescriptor);
    HEADROOM_CUDNN_FN(cudnnSetConvolution2dDescriptor);
    HEADROOM_CUDNN_FN(cudnnSetConvolutionGroupCount);
    HEADROOM_CUDNN_FN(cudnnSetConvolutionMathType);
    HEADROOM_CUDNN_FN(cudnnGetConvolution2dForwardOutputDim);
    HEADROOM_CUDNN_FN(cudnnDestroyConvolutionDescriptor);
    HEADROOM_CUDNN_FN(cudnnGetConvolutionForwardAlgorithm_v7);
    HEADROOM_CUDNN_FN(cudnnGetConvolutionBackwardDataAlgorithm_v7);
    HEADROOM_CUDNN_FN(cudnnGetConvolutionBackwardFilterAlgorithm_v7);
#undef HEADROOM_CUDNN_FN
    ok = ok && resolve(cudnnLib, "cudnnDestroy", cudnnDestroyFn);
    if (!ok) {
        m.warnings.emplace_back("cuDNN lacks the expected functions: its workspace is not measured");
        return;
    }
    const int64_t before = deviceUsed();
    if (cudnnCreateFn(&cudnn) != CUDNN_STATUS_SUCCESS) {
        cudnn = nullptr;
        m.warnings.emplace_back("cudnnCreate failed: its workspace is not measured");
        return;
    }
    m.cudnnHandle = std::max<int64_t>(0, deviceUsed() - before);
    m.cudnnWorkspace = 0;
    const cudnnDataType_t type = plan.dtype == "fp16"   ? CUDNN_DATA_HALF
                                 : plan.dtype == "bf16" ? CUDNN_DATA_BFLOAT16
                                                        : CUDNN_DATA_FLOAT;
    cudnnTensorDescriptor_t x = nullptr, y = nullptr;
    cudnnFilterDescriptor_t w = nullptr;
    cudnnConvolutionDescriptor_t conv = nullptr;
    cudnnCreateTensorDescriptorFn(&x);
    cudnnCreateTensorDescriptorFn(&y);
    cudnnCreateFilterDescriptorFn(&w);
    cudnnCreateConvolutionDescriptorFn(&conv);
    int failed = 0;
    auto fits = [](int64_t v) { return v > 0 && v <= INT_MAX; };
    for (const auto& c : plan.convs) {
        if (!fits(c.n) || !fits(c.c) || !fits(c.h) || !fits(c.w) || !fits(c.k) || !fits(c.groups) || c.c % c.groups) {
            ++failed;
            continue;
        }
        int on = 0, oc = 0, oh = 0, ow = 0;
        if (cudnnSetTensor4dDescriptorFn(x, CUDNN_TENSOR_NCHW, type, static_cast<int>(c.n), static_cast<int>(c.c),
                                         static_cast<int>(c.h), static_cast<int>(c.w)) != CUDNN_STATUS_SUCCESS ||
            cudnnSetFilter4dDescriptorFn(w, type, CUDNN_TENSOR_NCHW, static_cast<int>(c.k),
                                         static_cast<int>(c.c / c.groups), static_cast<int>(c.r),
                                         static_cast<int>(c.s)) != CUDNN_STATUS_SUCCESS ||
            cudnnSetConvolution2dDescriptorFn(conv, static_cast<int>(c.padH), static_cast<int>(c.padW),
                                              static_cast<int>(c.strideH), static_cast<int>(c.strideW),
                                              static_cast<int>(c.dilationH), static_cast<int>(c.dilationW),
                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT) != CUDNN_STATUS_SUCCESS ||
            cudnnSetConvolutionGroupCountFn(conv, static_cast<int>(c.groups)) != CUDNN_STATUS_SUCCESS ||
            cudnnSetConvolutionMathTypeFn(conv, type == CUDNN_DATA_FLOAT ? CUDNN_DEFAULT_MATH : CUDNN_TENSOR_OP_MATH) !=
                CUDNN_STATUS_SUCCESS ||
            cudnnGetConvolution2dForwardOutputDimFn(conv, x, w, &on, &oc, &oh, &ow) != CUDNN_STATUS_SUCCESS ||
            cudnnSetTensor4dDescriptorFn(y, CUDNN_TENSOR_NCHW, type, on, oc, oh, ow) != CUDNN_STATUS_SUCCESS) {
            ++failed;
            continue;
        }
        // The heuristics' first working choice is what frameworks run without benchmarking.
        int n = 0;
        cudnnConvolutionFwdAlgoPerf_t fwd[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        if (cudnnGetConvolutionForwardAlgorithm_v7Fn(cudnn, x, w, conv, y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, fwd) ==
            CUDNN_STATUS_SUCCESS)
            for (int i = 0; i < n; ++i)
                if (fwd[i].status == CUDNN_STATUS_SUCCESS) {
                    m.cudnnWorkspace = std::max(m.cudnnWorkspace, static_cast<int64_t>(fwd[i].memory));
                    break;
                }
        if (plan.train) { // backward kernels only run in training
            cudnnConvolutionBwdDataAlgoPerf_t bd[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
            if (cudnnGetConvolutionBackwardDataAlgorithm_v7Fn(
                    cudnn, w, y, conv, x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &n, bd) == CUDNN_STATUS_SUCCESS)
                for (int i = 0; i < n; ++i)
                    if (bd[i].status == CUDNN_STATUS_SUCCESS) {
                        m.cudnnWorkspace = std::max(m.cudnnWorkspace, static_cast<int64_t>(bd[i].memory));
                        break;
                    }
            cudnnConvolutionBwdFilterAlgoPerf_t bf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
            if (cudnnGetConvolutionBackwardFilterAlgorithm_v7Fn(
                    cudnn, x, y, conv, w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &n, bf) == CUDNN_STATUS_SUCCESS)
                for (int i = 0; i < n; ++i)
                    if (bf[i].status == CUDNN_STATUS_SUCCESS) {
                        m.cudnnWorkspace = std::max(m.cudnnWorkspace, static_cast<int64_t>(bf[i].memory));
                        break;
                    }
        }
    }
    cudnnDestroyConvolutionDescriptorFn(conv);
    cudnnDestroyFilterDescriptorFn(w);
    cudnnDestroyTensorDescriptorFn(y);
    cudnnDestroyTensorDescriptorFn(x);
    if (failed > 0)
        m.warnings.push_back(std::to_string(failed) + " convolution shapes could not be described to cuDNN");
#else
    m.warnings.emplace_back("built without cuDNN headers: its workspace is not measured");
#endif
}

} // namespace probe
