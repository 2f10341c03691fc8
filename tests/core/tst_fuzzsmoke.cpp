// ctest smoke run of the fuzz harness's entry function (CI builds with gcc, so no libFuzzer): a few hundred
// deterministic mutations of the corpus models go through the loader; any non-headroom::Error is a failure.
#include "../fuzz/fuzz_entry.cpp"

#include "headroom/import/synthetic.h"

#include <QtTest>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace {

std::string readAll(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<std::string> seeds()
{
    std::vector<std::string> out;
    for (const char* f : {"resnet18.onnx", "tiny_gpt.onnx", "bert_like.onnx", "lstm_tagger.onnx", "squeezenet1_1.onnx",
                          "mobilenet_v2.onnx", "resnet18.folded.onnx", "vgg16.onnx"}) {
        out.push_back(readAll(std::string(HEADROOM_TEST_DATA "/") + f));
    }
    out.push_back(headroom::makeSyntheticTransformer(2, 32, 4, 100));
    return out;
}

std::string mutate(const std::string& seed, std::mt19937_64& rng)
{
    std::string s = seed;
    std::uniform_int_distribution<int> kind(0, 4);
    const int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits && !s.empty(); ++e) {
        const size_t at = rng() % s.size();
        switch (kind(rng)) {
        case 0: s[at] = static_cast<char>(rng()); break;                                  // random byte
        case 1: s[at] = static_cast<char>(s[at] ^ (1 << (rng() % 8))); break;             // bit flip
        case 2: s.resize(at); break;                                                      // truncate
        case 3: s.insert(at, std::string(1 + rng() % 4, static_cast<char>(0xff))); break; // huge varints
        default: s.erase(at, 1 + rng() % 16); break;                                      // delete a run
        }
    }
    return s;
}

} // namespace

class TestFuzzSmoke : public QObject
{
    Q_OBJECT
private slots:
    void mutatedCorpus()
    {
        const std::vector<std::string> base = seeds();
        std::mt19937_64 rng(20240601);
        int runs = 0;
        for (int i = 0; i < 400; ++i) {
            const std::string& seed = base[size_t(i) % base.size()];
            const std::string input = mutate(seed, rng);
            try {
                headroomFuzzOne(reinterpret_cast<const uint8_t*>(input.data()), input.size());
            } catch (const std::exception& e) {
                QFAIL(qPrintable(QStringLiteral("input %1: %2").arg(i).arg(QString::fromStdString(e.what()))));
            }
            ++runs;
        }
        // The fuzzer's own findings, kept as regression inputs, run too.
        const std::filesystem::path regress(HEADROOM_SOURCE_DIR "/tests/fuzz/regressions");
        if (std::filesystem::is_directory(regress))
            for (const auto& f : std::filesystem::directory_iterator(regress)) {
                const std::string bytes = readAll(f.path().string());
                headroomFuzzOne(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
                ++runs;
            }
        QVERIFY(runs >= 400);
    }
};

QTEST_APPLESS_MAIN(TestFuzzSmoke)
#include "tst_fuzzsmoke.moc"
