#include "headroom/base/model_name.h"

#include <filesystem>
#include <system_error>

namespace headroom {
namespace {

std::string lower(std::string s)
{
    for (char& c : s)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    return s;
}

// huggingface_hub's cache folder for a model repo: "models--" + repo_id with '/' as "--" (file_download.py
// repo_folder_name); "" when `folder` is not one.
std::string cacheRepoId(const std::string& folder)
{
    const std::string prefix = "models--";
    if (folder.rfind(prefix, 0) != 0)
        return {};
    std::string id = folder.substr(prefix.size());
    if (const size_t dash = id.find("--"); dash != std::string::npos)
        id.replace(dash, 2, "/");
    return id;
}

} // namespace

std::string modelDisplayName(const std::string& path)
{
    namespace fs = std::filesystem;
    fs::path p(path);
    std::error_code ec;
    const bool folder = fs::is_directory(p, ec) || (!path.empty() && (path.back() == '/' || path.back() == '\\'));
    if (!folder && lower(p.filename().string()) != "config.json")
        return p.filename().string();
    fs::path dir = folder ? p : p.parent_path();
    if (!dir.empty() && dir.filename().empty()) // "folder/" or "/x/y/"
        dir = dir.parent_path();
    // "config.json" in the working directory, or ".", "..": the folder's own name
    if (dir.empty() || dir.filename() == "." || dir.filename() == "..")
        if (const fs::path real = fs::weakly_canonical(dir.empty() ? fs::path(".") : dir, ec); !ec)
            dir = real;
    // .../models--ORG--NAME/snapshots/REVISION
    if (dir.parent_path().filename() == "snapshots")
        if (std::string id = cacheRepoId(dir.parent_path().parent_path().filename().string()); !id.empty())
            return id;
    const std::string name = dir.filename().string();
    return !name.empty() && name != "." && name != ".." ? name : p.filename().string();
}

} // namespace headroom
