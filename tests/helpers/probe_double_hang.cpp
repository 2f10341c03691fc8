// Test double for headroom-probe: reports progress, then never finishes (ignores its own --time-limit and
// SIGTERM), so only the caller's deadline stops it.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <thread>

int main()
{
    std::signal(SIGTERM, SIG_IGN);
    std::fprintf(stderr, "progress 0.05 replaying exact\n");
    std::fflush(stderr);
    for (;;)
        std::this_thread::sleep_for(std::chrono::seconds(1));
}
