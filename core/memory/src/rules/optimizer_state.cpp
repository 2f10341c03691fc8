// Optimizer state bytes per trainable parameter, docs/DESIGN.md's table. States are fp32 except under the
// pure 16-bit policies, where PyTorch creates them like the parameter (zeros_like): 2 bytes.
#include "engine/engine_internal.h"

#include <cmath>

namespace headroom {

double optimizerBytesPerParam(const Config& config) noexcept
{
    const bool pure16 = config.dtype == DtypePolicy::FP16 || config.dtype == DtypePolicy::BF16;
    const double scale = pure16 ? 0.5 : 1.0;
    switch (config.optimizer) {
    case Optimizer::SGD: return 0;
    case Optimizer::Momentum: return 4 * scale;
    case Optimizer::Adam:
    case Optimizer::AdamW: return 8 * scale;
    case Optimizer::Adagrad: return 4 * scale;
    case Optimizer::RMSprop: return (4 + (config.rmspropMomentum ? 4 : 0) + (config.rmspropCentered ? 4 : 0)) * scale;
    case Optimizer::Adadelta: return 8 * scale;
    case Optimizer::Lion: return 4 * scale;
    case Optimizer::LAMB: return 8 * scale;
    case Optimizer::Adam8bit:
    case Optimizer::PagedAdamW8bit:
        return 2; // two 8-bit moments; per tensor: see optimizerStateBytes
    // bitsandbytes Optimizer2State.init_state with optim_bits=32: state1/state2 are float32 whatever the
    // parameter's dtype (get_state_buffer(p, dtype=torch.float32)), unlike torch's zeros_like
    case Optimizer::PagedAdamW: return 8;
    case Optimizer::Adafactor: return 4 * scale; // unfactored tensors; matrices: see optimizerStateBytes
    case Optimizer::Custom: return config.customOptimizerBytes;
    }
    return 0;
}

int optimizerStateTensors(const Config& config) noexcept
{
    switch (config.optimizer) {
    case Optimizer::SGD: return 0;
    case Optimizer::Momentum: return 1; // sgd.py: momentum_buffer
    case Optimizer::Adam:               // adam.py / adamw.py: exp_avg, exp_avg_sq (amsgrad off)
    case Optimizer::AdamW: return 2;
    case Optimizer::Adagrad: return 1; // adagrad.py: sum
    case Optimizer::RMSprop:           // rmsprop.py: square_avg, momentum_buffer, grad_avg
        return 1 + (config.rmspropMomentum ? 1 : 0) + (config.rmspropCentered ? 1 : 0);
    case Optimizer::Adadelta: return 2; // adadelta.py: square_avg, acc_delta
    case Optimizer::Lion: return 1;     // exp_avg
    case Optimizer::LAMB: return 2;     // exp_avg, exp_avg_sq
    case Optimizer::Adam8bit:           // bitsandbytes Optimizer2State: state1, state2 (their absmax are
    case Optimizer::PagedAdamW8bit:     // small beside them)
    case Optimizer::PagedAdamW: return 2;
    case Optimizer::Adafactor: return 1; // exp_avg_sq (or its row and column factors)
    case Optimizer::Custom: return 1;
    }
    return 1;
}

int64_t dimsNumel(const std::vector<int64_t>& dims)
{
    int64_t numel = 1;
    for (int64_t d : dims)
        numel = checkedMul(numel, std::max<int64_t>(d, 0)).value_or(0);
    return numel;
}

int64_t optimizerStateBytes(const Config& config, const std::vector<int64_t>& dims)
{
    return optimizerStateBytes(config, dims, dimsNumel(dims));
}

int64_t optimizerStateBytes(const Config& config, const std::vector<int64_t>& dims, int64_t numel)
{
    if (config.optimizer == Optimizer::Adafactor && dims.size() >= 2) {
        // factored second moment: one row and one column accumulator per matrix (the last two dims;
        // leading dims are batched matrices), no first moment (beta1 = None, the default)
        const int64_t rows = dims[dims.size() - 2], cols = dims.back();
        const int64_t batch = rows * cols > 0 ? numel / (rows * cols) : 0;
        const double elem = optimizerBytesPerParam(config);
        return static_cast<int64_t>(std::llround(static_cast<double>(batch * (rows + cols)) * elem));
    }
    if (config.optimizer == Optimizer::PagedAdamW)
        return checkedMul(numel, 8).value_or(0);
    if (config.optimizer == Optimizer::Adam8bit || config.optimizer == Optimizer::PagedAdamW8bit) {
        // bitsandbytes optim/optimizer.py Optimizer2State.init_state: tensors under min_8bit_size (4096
        // elements) keep two fp32 moments; larger ones two uint8 moments plus an fp32 absmax per 256-value
        // block each (blockwise=True); the 256-entry quantization map is shared, not per tensor.
        if (numel < 4096)
            return checkedMul(numel, 8).value_or(0);
        const int64_t blocks = (numel + 255) / 256;
        return 2 * (numel + 4 * blocks);
    }
    return static_cast<int64_t>(std::llround(static_cast<double>(numel) * optimizerBytesPerParam(config)));
}

int64_t pagedOptimizerBytes(const Config& config, const std::vector<int64_t>& dims)
{
    // bitsandbytes optim/optimizer.py, Optimizer8bit.get_state_buffer: with is_paged, a state buffer of a
    // parameter with numel >= 1e5 comes from F.get_paged (cudaMallocManaged unified memory, registered with
    // GlobalOptimManager's page_mng and prefetched per step), not from PyTorch's caching allocator; smaller
    // ones are torch.zeros_like. Only state1/state2 are paged: the 8-bit absmax and the quantization maps
    // are ordinary torch.zeros tensors.
    return pagedOptimizerBytes(config, dimsNumel(dims));
}

int64_t pagedOptimizerBytes(const Config& config, int64_t numel)
{
    if (config.optimizer != Optimizer::PagedAdamW && config.optimizer != Optimizer::PagedAdamW8bit)
        return 0;
    if (numel < 100000)
        return 0;
    // Optimizer2State.init_state: uint8 moments only at numel >= min_8bit_size (4096), always true here
    const int64_t perMoment = config.optimizer == Optimizer::PagedAdamW ? 4 : 1;
    return 2 * checkedMul(numel, perMoment).value_or(0);
}

} // namespace headroom
