// Test double for headroom-probe: exits 0 but writes something that is not a probe result.
#include <cstdio>

int main()
{
    std::printf("this is not JSON {\n");
    return 0;
}
