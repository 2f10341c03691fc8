#pragma once
// The config.json families beyond the Llama-style decoders (issue 22 item 6): encoders (bert, roberta) and the
// decoders whose layers differ in more than a flag (phi, stablelm, gpt_neox, gpt_bigcode, falcon). Their fields
// are read from one table (hf_families.cpp), their graphs written by hf_encoders.cpp and hf_decoders.cpp.
#include "headroom/import/hfconfig.h"

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace headroom::detail {

bool isFamilyType(const std::string& modelType);
// Reads the family's config.json fields into `a`; throws Error("<file>: ...") naming the file and the field.
void parseFamilyConfig(const nlohmann::json& j, HfArch& a, const std::string& file);
// Llama-style decoders that differ by flags only (gemma3_text, olmo2): hfconfig.cpp reads their common fields,
// this sets the rest from hf_families.cpp's table.
bool isLlamaStyleType(const std::string& modelType);
void parseLlamaStyleFlags(const nlohmann::json& j, HfArch& a);
// The serialized ONNX graph of a family (a.family.layout != HfLayout::Llama).
std::string buildEncoderModel(const HfArch& a, const std::string& file);
std::string buildDecoderFamilyModel(const HfArch& a, const std::string& file);

} // namespace headroom::detail
