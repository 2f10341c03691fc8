// libFuzzer harness for the ONNX loader: cmake --preset fuzz && cmake --build --preset fuzz --target fuzz_loader
//   build/fuzz/tests/fuzz/fuzz_loader -max_total_time=900 -rss_limit_mb=4096 CORPUS_DIR tests/data
#include "fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return headroomFuzzOne(data, size); }
