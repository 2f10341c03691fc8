// Test double for headroom-probe on a machine without a GPU or driver: one line, exit code 3.
#include <cstdio>

int main()
{
    std::fprintf(stderr, "no CUDA device found\n");
    return 3;
}
