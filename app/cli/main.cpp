#include "headroom/headroom_config.h"
#include <cstdio>
int main() { std::printf("headroom-cli %s\n", HEADROOM_VERSION); return 0; }
