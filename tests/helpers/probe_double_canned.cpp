// Test double for headroom-probe: answers with a fixed "headroom.probe/1" result, echoing what it received
// in "message" so tests can check the plan crossed the pipe intact.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>
#include <string>

int main(int argc, char** argv)
{
    bool list = false;
    std::string args;
    for (int i = 1; i < argc; ++i) {
        list = list || std::strcmp(argv[i], "--list-devices") == 0;
        args += std::string(i > 1 ? " " : "") + argv[i];
    }
    const std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    std::string message;
    try {
        const auto plan = nlohmann::json::parse(input);
        message = "canned: " + plan.value("model", std::string()) + " batch " + std::to_string(plan.value("batch", 0)) +
                  ", " + std::to_string(plan.value("events", nlohmann::json::array()).size()) + " events, " +
                  std::to_string(plan.value("batch_plans", nlohmann::json::array()).size()) +
                  " batch plans; args: " + args;
    } catch (const nlohmann::json::exception&) {
        message = "canned: no plan; args: " + args;
    }
    std::fprintf(stderr, "progress 0.50 replaying caching\n");
    nlohmann::json r = {
        {"schema", "headroom.probe/1"},
        {"status", "ok"},
        {"message", message},
        {"device_name", "Canned GPU 24GB"},
        {"device_index", 0},
        {"device_count", 2},
        {"devices", {"Canned GPU 24GB", "Canned GPU 80GB"}},
        {"total_bytes", 25769803776LL},
        {"free_bytes", 25300000000LL},
        {"context_bytes", 314572800},
        {"context_method", "nvml"},
    };
    if (!list) {
        r["exact_peak"] = 6291456;
        r["caching_peak"] = 20971520;
        r["caching_segments"] = 1;
        r["used_after_event"] = {2097152, 6291456, 4194304, 0};
        r["reserved_after_event"] = {20971520, 20971520, 20971520, 20971520};
        r["peak_by_category"] = nlohmann::json::array(
            {nlohmann::json::array({"weights", 2097152}), nlohmann::json::array({"activations", 4194304})});
        r["cublas_workspace"] = 8519680;
        r["cudnn_workspace"] = -1;
        r["measured_max_batch"] = 192;
        r["batch_trials"] = {{{"batch", 128}, {"fits", true}, {"peak", 1000}},
                             {{"batch", 256}, {"fits", false}, {"peak", 0}}};
        r["oom"] = false;
        r["seconds"] = 0.25;
    }
    std::printf("%s\n", r.dump().c_str());
    return 0;
}
