// Test double for headroom-probe: reads the plan, reports progress, then crashes (SIGABRT).
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <string>

int main()
{
    const std::string plan((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    std::fprintf(stderr, "progress 0.10 replaying exact\n");
    std::fflush(stderr);
    std::abort();
}
