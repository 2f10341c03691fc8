// Writes the ViT-B/16-shaped export of tests/core/vit_fixture.h to a file, for the CLI checks
// (tests/cli/test_pdf.sh) and the screenshots: `write_vit_fixture OUT.onnx`.
#include "../core/vit_fixture.h"

#include <cstdio>
#include <fstream>

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: write_vit_fixture OUT.onnx\n");
        return 2;
    }
    std::ofstream out(argv[1], std::ios::binary | std::ios::trunc);
    out << fixture::vitB16().bytes();
    out.close();
    if (!out) {
        std::fprintf(stderr, "write_vit_fixture: %s: cannot write\n", argv[1]);
        return 1;
    }
    return 0;
}
