#pragma once
// Runs a child process with a deadline: what runProbe needs, and nothing Qt. Private to core.
#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace headroom::detail {

struct ProcessOutcome
{
    bool started = false; // posix_spawn succeeded (exec failures show up as exit code 127)
    int spawnErrno = 0;   // when !started
    bool exited = false;  // normal exit: exitCode valid
    int exitCode = -1;
    int signal = 0;         // terminated by this signal (not ours)
    bool timedOut = false;  // we killed it at the deadline
    bool cancelled = false; // we killed it because *cancel became true
    std::string out, err;   // everything it wrote (err: up to 64 KiB, the tail)
};

struct ProcessSpec
{
    std::string program;           // path to an executable
    std::vector<std::string> args; // argv[1..]
    std::string input;             // written to its stdin, then stdin is closed
    std::chrono::milliseconds limit{60000};
    const std::atomic<bool>* cancel = nullptr;
    std::function<void(std::string_view line)> onErrLine; // each complete stderr line, as it arrives
};

// Never throws. SIGKILLs the child (its whole process group) at the deadline or on cancel and always reaps it.
ProcessOutcome runProcess(const ProcessSpec& spec);

} // namespace headroom::detail
