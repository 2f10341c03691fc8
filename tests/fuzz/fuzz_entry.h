#pragma once
#include <cstddef>
#include <cstdint>

// One fuzz input through the loader and the shape fast path. Returns 0; a headroom::Error is the expected
// answer to bad bytes, anything else escaping (or a sanitizer report) is a bug.
int headroomFuzzOne(const uint8_t* data, size_t size);
