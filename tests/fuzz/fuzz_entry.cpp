// Shared by the libFuzzer harness (fuzz_loader.cpp) and the ctest smoke run (tests/core/tst_fuzzsmoke.cpp).
#include "fuzz_entry.h"

#include "headroom/base/error.h"
#include "headroom/load/loader.h"
#include "headroom/shapes/shapes.h"

#include <string_view>

int headroomFuzzOne(const uint8_t* data, size_t size)
{
    try {
        const headroom::Model m = headroom::loadModelFromBytes(
            std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.onnx");
        headroom::Bindings b = m.defaultBindings();
        (void)headroom::evaluateShapes(m, b);
        for (int64_t& v : b)
            v = v * 3 + 1; // a binding the fit never saw
        (void)headroom::evaluateShapes(m, b);
        for (size_t t = 0; t < m.tensors.size() && t < 64; ++t)
            (void)headroom::shapeString(m, static_cast<int>(t), nullptr);
    } catch (const headroom::Error&) {
    }
    return 0;
}
