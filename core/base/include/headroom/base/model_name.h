#pragma once
// The name a model is shown by (window title, File field, Serving header, PDF title and footer). A checkpoint's
// config is always called config.json, so its file name tells Qwen3 from Mixtral no better than "config.json":
// the folder names the model, and in the Hugging Face cache (models--ORG--NAME/snapshots/REVISION/) the repo id
// does. Any other file is named by its file name, as before.
#include <string>

namespace headroom {

std::string modelDisplayName(const std::string& path);

} // namespace headroom
