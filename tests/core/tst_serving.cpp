// vLLM V1's startup plan (core/serving, docs/SERVING.md) against 40 real vLLM v0.19.0 startups on H100-80GB
// (tests/data/external/vllm-0.19-h100.csv, the llm-d planner's sweep; configs beside it, README.md there):
//  - weights per GPU within 3 %, KV-cache memory within 10 % (or 1 GiB);
//  - KV tokens and max concurrency from the logged block count, exact; blocks from the logged KV GiB within
//    the CSV's rounding (0.005 GiB);
//  - every failed startup called "does not start" with a reason;
// and hand-computed rows of the page formula (full attention, TP split and replication, sliding window, MLA,
// fp8 KV), the refusals, and parameter totals against the published ones. HEADROOM_SERVING_TABLE=1 prints the
// accuracy table of docs/SERVING.md.
#include "headroom/hardware/gpus.h"
#include "headroom/serving/serve_model.h"
#include "headroom/serving/vllm.h"

#include <QTest>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace headroom;

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

std::string dataPath(const std::string& rel) { return std::string(HEADROOM_TEST_DATA) + "/" + rel; }

std::vector<std::map<std::string, std::string>> csvRows(const std::string& rel)
{
    std::ifstream in(dataPath(rel));
    std::string line;
    std::vector<std::string> header;
    std::vector<std::map<std::string, std::string>> rows;
    while (std::getline(in, line)) {
        std::vector<std::string> cells;
        std::stringstream s(line);
        std::string cell;
        while (std::getline(s, cell, ','))
            cells.push_back(cell);
        if (line.ends_with(","))
            cells.emplace_back();
        if (header.empty()) {
            header = cells;
            continue;
        }
        std::map<std::string, std::string> row;
        for (size_t i = 0; i < header.size(); ++i)
            row[header[i]] = i < cells.size() ? cells[i] : "";
        rows.push_back(row);
    }
    return rows;
}

double num(const std::map<std::string, std::string>& r, const char* key)
{
    const std::string& v = r.at(key);
    return v.empty() ? std::nan("") : std::stod(v);
}

// The points this model cannot express, each with why (QEXPECT_FAIL by data tag).
const std::map<std::string, std::string> kExpectedFailures = {
    {"L2 CodeLlama-34b-hf tp2 failed",
     "another process held memory on cuda:1 (vLLM: \"Free memory on device cuda:1 (60.87/79.19 GiB) on startup is "
     "less than desired GPU memory utilization\"); not in the config: --gpu-free reproduces it (serving_refusals)"},
    {"L34 Kimi-Dev-72B tp4 failed", "the same free-memory failure on a shared GPU; a retry (L35) started"},
    {"L6 gemma-2-27b-it failed", "the CSV records no settings or reason for this log (the sweep's log was not parsed)"},
    {"L7 gemma-2-2b-it failed", "no settings or reason in the CSV; the same config started on retry (L8)"},
    {"L9 gemma-2-9b-it failed", "the CSV records no settings or reason for this log"},
    {"L10 gemma-3-12b-it failed", "no settings or reason in the CSV; the same config started on retry (L11)"},
    {"L12 gemma-3-27b-it failed", "the CSV records no settings or reason for this log"},
    {"L13 gemma-3-4b-it failed", "no settings or reason in the CSV; the same config started on retry (L14)"},
    {"L24 Llama-3.1-8B-Instruct tp1 failed",
     "data parallel 2 (dp2 in the log name): both engines on one GPU after the weights loaded; DP is not modelled"},
    {"L14 gemma-3-4b-it tp1 weights",
     "vLLM's gemma3 load is 0.58 GiB above the parameters (8.58 vs 8.00 GiB; gemma-3-12b the same +0.6 GiB): not "
     "explained by the config"},
};

std::string modelOfLog(const std::string& log)
{
    // google-gemma-2-27b-it--h100-80gb--... -> gemma-2-27b-it
    const auto end = log.find("--");
    std::string name = log.substr(0, end);
    return name.starts_with("google-") ? name.substr(7) : name;
}

VllmSettings settingsOf(const std::map<std::string, std::string>& r)
{
    VllmSettings s;
    s.version = VllmVersion::V0_19;
    s.gpuMemoryUtilization = num(r, "gpu_memory_utilization");
    s.maxModelLen = static_cast<int64_t>(num(r, "max_model_len"));
    s.tp = static_cast<int>(num(r, "tp"));
    s.pp = static_cast<int>(num(r, "pp"));
    s.kvCacheDtype = r.at("kv_cache_dtype") == "fp8" ? KvCacheDtype::Fp8 : KvCacheDtype::Auto;
    if (r.at("quantization") == "fp8")
        s.quantization = WeightFormat::Fp8; // runtime --quantization fp8
    else if (r.at("quantization") == "None" && r.at("dtype") == "torch.float32")
        s.quantization = WeightFormat::Fp32;
    else if (r.at("quantization") == "None" && r.at("dtype") == "torch.float16")
        s.quantization = WeightFormat::Fp16;
    return s;
}

void expectFail(const QString& tag)
{
    for (const auto& [key, why] : kExpectedFailures)
        if (tag.toStdString() == key)
            QEXPECT_FAIL("", why.c_str(), Continue);
}

// docs/SERVING.md's accuracy table, one line per row (HEADROOM_SERVING_TABLE=1).
void printRow(const std::map<std::string, std::string>& r, const VllmPlan& p)
{
    if (!std::getenv("HEADROOM_SERVING_TABLE"))
        return;
    const std::string variant = r.at("dtype").substr(6) + ", " + r.at("quantization") + ", KV " +
                                r.at("kv_cache_dtype");
    std::printf("| %s | %s | %s/%s | %s | %.2f | %.2f | %s | %.2f | %.2f | %.2f | %s | %s |\n", r.at("model").c_str(),
                variant.c_str(), r.at("tp").c_str(), r.at("pp").c_str(), r.at("max_model_len").c_str(),
                num(r, "weights_memory_gib"), static_cast<double>(p.weights) / kGiB,
                r.at("kv_cache_memory_gib").c_str(), static_cast<double>(p.kvCache) / kGiB, num(r, "max_concurrency"),
                p.maxConcurrency, r.at("status").c_str(), p.starts && *p.starts ? "starts" : "does not start");
}

ServeModel configFor(const std::string& model)
{
    std::string file = model;
    file.replace(file.find('/'), 1, "--");
    return loadServeModel(dataPath("external/" + file + ".json"));
}

ServeModel fromText(const std::string& json) { return parseServeModel(json, "config.json"); }

const char* kLlama8b = R"({"model_type":"llama","hidden_size":4096,"intermediate_size":14336,"num_hidden_layers":32,
  "num_attention_heads":32,"num_key_value_heads":8,"vocab_size":128256,"max_position_embeddings":131072,
  "torch_dtype":"bfloat16"})";

} // namespace

class TestServing : public QObject
{
    Q_OBJECT
private slots:
    void csvStartups_data();
    void csvStartups();
    void pageFormula_data();
    void pageFormula();
    void refusals_data();
    void refusals();
    void parameterTotals_data();
    void parameterTotals();
    void v011Startups_data();
    void v011Startups();
};

void TestServing::csvStartups_data()
{
    QTest::addColumn<int>("line");
    int line = 1;
    for (const auto& r : csvRows("external/vllm-0.19-h100.csv")) {
        ++line;
        const std::string model = r.at("model").empty() ? modelOfLog(r.at("log_file"))
                                                        : r.at("model").substr(r.at("model").find('/') + 1);
        std::string tag = "L" + std::to_string(line) + " " + model;
        if (!r.at("tp").empty())
            tag += " tp" + r.at("tp");
        if (r.at("status") != "ok")
            tag += " failed";
        QTest::newRow(tag.c_str()) << line;
    }
}

void TestServing::csvStartups()
{
    QFETCH(int, line);
    const auto r = csvRows("external/vllm-0.19-h100.csv").at(static_cast<size_t>(line - 2));
    const QString tag = QString::fromLatin1(QTest::currentDataTag());
    const GpuSpec h100 = *findGpu("h100");
    if (r.at("model").empty()) { // no settings recorded: nothing to predict
        expectFail(tag);
        QVERIFY2(false, "no settings in the CSV");
        return;
    }
    const VllmPlan p = planVllm(configFor(r.at("model")), settingsOf(r), h100);
    printRow(r, p);
    QVERIFY2(p.starts.has_value(), p.reason.c_str());
    if (r.at("status") != "ok") {
        expectFail(tag);
        QVERIFY2(!*p.starts && !p.reason.empty(), "vLLM refused this startup; the plan says it starts");
        return;
    }
    QVERIFY2(*p.starts, p.reason.c_str());
    // Weights: the logging rank is not recorded, so under PP the nearest stage is compared.
    const double w = num(r, "weights_memory_gib") * kGiB, kv = num(r, "kv_cache_memory_gib") * kGiB;
    double wErr = 1e9, kvErr = 1e18;
    for (const VllmRank& rank : p.ranks) {
        wErr = std::min(wErr, std::abs(static_cast<double>(rank.weights) - w) / w);
        kvErr = std::min(kvErr, std::abs(static_cast<double>(rank.kvCache) - kv));
    }
    expectFail(tag + " weights");
    QVERIFY2(wErr <= 0.03, qPrintable(QStringLiteral("weights off by %1 %").arg(wErr * 100, 0, 'f', 1)));
    QVERIFY2(kvErr <= std::max(0.10 * kv, kGiB),
             qPrintable(QStringLiteral("KV cache off by %1 GiB").arg(kvErr / kGiB, 0, 'f', 2)));
    // From the logged blocks: tokens (num_blocks // groups * block_size) and concurrency, exact.
    const auto blocks = static_cast<int64_t>(num(r, "kv_cache_blocks"));
    QCOMPARE(blocks / p.groups * p.settings.blockSize, static_cast<int64_t>(num(r, "kv_cache_tokens")));
    QCOMPARE(std::round(static_cast<double>(blocks) / static_cast<double>(p.blocksPerRequest) * 100) / 100,
             num(r, "max_concurrency"));
    // From the logged KV GiB (2 decimals, the logging rank: single stage only): blocks to within the rounding.
    if (p.settings.pp == 1) {
        const double perBlock = static_cast<double>(p.pageBytes * p.groupSize);
        const double slack = std::ceil(0.005 * kGiB / perBlock) + 1;
        QVERIFY2(std::abs(std::floor(kv / perBlock) - static_cast<double>(blocks)) <= slack,
                 qPrintable(
                     QStringLiteral("blocks from KV bytes %1, logged %2").arg(std::floor(kv / perBlock)).arg(blocks)));
    }
}

void TestServing::pageFormula_data()
{
    // page = 2 * block_size * kv_heads_per_rank * head_size * dtype (MLA: block_size * 576 * dtype, unsplit)
    QTest::addColumn<QString>("config");
    QTest::addColumn<int>("tp");
    QTest::addColumn<bool>("fp8");
    QTest::addColumn<qint64>("page");
    QTest::addColumn<qint64>("groups");
    QTest::addColumn<qint64>("groupSize");
    QTest::addColumn<qint64>("blocksPerRequest"); // at max_model_len 8192, 8192 batched tokens
    QTest::addColumn<qint64>("bytesPerToken");
    const QString llama = dataPath("external/meta-llama--Llama-3.1-8B-Instruct.json").c_str();
    QTest::newRow("full bf16: 2*16*8*128*2") << llama << 1 << false << 65536LL << 1LL << 32LL << 512LL << 131072LL;
    QTest::newRow("full fp8 KV: 1 byte") << llama << 1 << true << 32768LL << 1LL << 32LL << 512LL << 65536LL;
    QTest::newRow("TP 4: 2 KV heads per rank") << llama << 4 << false << 16384LL << 1LL << 32LL << 512LL << 32768LL;
    QTest::newRow("TP 16 > 8 KV heads: replicated, 1 per rank")
        << llama << 16 << false << 8192LL << 1LL << 32LL << 512LL << 16384LL;
    const QString dsv2 = dataPath("external/deepseek-ai--DeepSeek-V2-Lite-Chat.json").c_str();
    QTest::newRow("MLA: 16*(512+64)*2") << dsv2 << 1 << false << 18432LL << 1LL << 27LL << 512LL << 31104LL;
    QTest::newRow("MLA TP 2: not split") << dsv2 << 2 << false << 18432LL << 1LL << 27LL << 512LL << 31104LL;
    QTest::newRow("MLA fp8 KV") << dsv2 << 1 << true << 9216LL << 1LL << 27LL << 512LL << 15552LL;
    // gemma-2: 13 sliding + 13 full -> 2 groups of 13; sliding cdiv(min(4095+8192, 8192),16)+1 = 513
    const QString g2 = dataPath("external/google--gemma-2-2b-it.json").c_str();
    QTest::newRow("sliding gemma-2: 512+513") << g2 << 1 << false << 65536LL << 2LL << 13LL << 1025LL << 106496LL;
    // gemma-3-4b: 5 full + 29 sliding -> groups of 5: 1 + 6 (one padded); 512 + 6*513
    const QString g3 = dataPath("external/google--gemma-3-4b-it.json").c_str();
    QTest::newRow("sliding gemma-3: 7 groups of 5") << g3 << 1 << false << 65536LL << 7LL << 5LL << 3590LL << 139264LL;
}

void TestServing::pageFormula()
{
    QFETCH(QString, config);
    QFETCH(int, tp);
    QFETCH(bool, fp8);
    VllmSettings s;
    s.tp = tp;
    s.maxModelLen = 8192;
    s.kvCacheDtype = fp8 ? KvCacheDtype::Fp8 : KvCacheDtype::Auto;
    ServeModel m = loadServeModel(config.toStdString());
    m.heads = 16 * 4; // let any TP here divide the heads: the page does not depend on them
    const VllmPlan p = planVllm(m, s, customGpu(int64_t{1} << 40));
    QVERIFY2(p.starts && *p.starts, p.reason.c_str());
    QTEST(static_cast<qint64>(p.pageBytes), "page");
    QTEST(static_cast<qint64>(p.groups), "groups");
    QTEST(static_cast<qint64>(p.groupSize), "groupSize");
    QTEST(static_cast<qint64>(p.blocksPerRequest), "blocksPerRequest");
    QTEST(static_cast<qint64>(p.kvBytesPerToken), "bytesPerToken");
}

void TestServing::refusals_data()
{
    QTest::addColumn<QString>("config");
    QTest::addColumn<int>("tp");
    QTest::addColumn<qint64>("maxModelLen");
    QTest::addColumn<qint64>("capacity");
    QTest::addColumn<qint64>("freeAtStart");
    QTest::addColumn<QString>("reason");
    QTest::addColumn<qint64>("longest");
    const qint64 g = qint64{1} << 30;
    QTest::newRow("heads not divisible by TP")
        << kLlama8b << 3 << 8192LL << 80 * g << -1LL << "must be divisible by tensor parallel size (3)" << -1LL;
    QTest::newRow("beyond max_position_embeddings")
        << kLlama8b << 1 << 200000LL << 80 * g << -1LL << "greater than the derived max_model_len" << -1LL;
    QTest::newRow("free memory at start")
        << kLlama8b << 1 << 8192LL << 80 * g << 60 * g << "Free memory on device" << -1LL;
    QTest::newRow("weights over the device")
        << kLlama8b << 1 << 8192LL << 12 * g << -1LL << "CUDA out of memory" << -1LL;
    QTest::newRow("no memory for cache blocks")
        << kLlama8b << 1 << 8192LL << 18 * g << -1LL << "No available memory for the cache blocks" << -1LL;
    // 24 GiB x 0.9 = 23,192,823,398 B - W 8,030,261,248 x 2 - A 499,069,747 (sampler 3.8 x 4 x 256 seqs x 128,256;
    // a 24 GiB card gets 2048 batched tokens / 256 seqs) - NT 268,435,456 - CUDA graphs 981,400,012 (0.45 GiB +
    // 32 x 0.0145 GiB, subtracted in 0.21) = 5,383,395,687 B of KV = 41,072 tokens of 128 KiB (2,567 blocks);
    // one request of 131,072 tokens needs 16 GiB.
    QTest::newRow("one request does not fit")
        << kLlama8b << 1 << 131072LL << 24 * g << -1LL
        << "To serve at least one request with the models's max seq len (131072)" << 41072LL;
}

void TestServing::refusals()
{
    QFETCH(QString, config);
    QFETCH(int, tp);
    QFETCH(qint64, maxModelLen);
    QFETCH(qint64, capacity);
    QFETCH(qint64, freeAtStart);
    QFETCH(QString, reason);
    QFETCH(qint64, longest);
    VllmSettings s;
    s.tp = tp;
    s.maxModelLen = maxModelLen;
    if (freeAtStart > 0)
        s.freeAtStart = freeAtStart;
    const VllmPlan p = planVllm(fromText(config.toStdString()), s, customGpu(capacity));
    QVERIFY(p.starts.has_value());
    QVERIFY(!*p.starts);
    QVERIFY2(p.reason.find(reason.toStdString()) != std::string::npos, p.reason.c_str());
    QVERIFY(!p.fix.empty());
    if (longest > 0) {
        QVERIFY(p.maxModelLenThatStarts.has_value());
        QCOMPARE(*p.maxModelLenThatStarts, longest);
    }
}

void TestServing::parameterTotals_data()
{
    // Published totals (model cards / safetensors metadata on the Hugging Face Hub)
    QTest::addColumn<QString>("file");
    QTest::addColumn<double>("published");
    QTest::newRow("Llama-3.1-8B") << "meta-llama--Llama-3.1-8B-Instruct" << 8'030'261'248.0;
    QTest::newRow("Qwen2.5-7B") << "Qwen--Qwen2.5-7B-Instruct" << 7'615'616'512.0;
    QTest::newRow("Qwen3-8B") << "Qwen--Qwen3-8B" << 8'190'735'360.0;
    QTest::newRow("CodeLlama-7b") << "codellama--CodeLlama-7b-hf" << 6'738'546'688.0;
    QTest::newRow("CodeLlama-34b") << "codellama--CodeLlama-34b-hf" << 33'743'970'304.0;
    QTest::newRow("DeepSeek-V2-Lite") << "deepseek-ai--DeepSeek-V2-Lite-Chat" << 15'706'484'224.0;
    QTest::newRow("Mixtral-8x7B") << "mistralai--Mixtral-8x7B-Instruct-v0.1" << 46'702'792'704.0;
    QTest::newRow("phi-4") << "microsoft--phi-4" << 14'659'507'200.0;
    QTest::newRow("gemma-2-2b") << "google--gemma-2-2b-it" << 2'614'341'888.0;
    QTest::newRow("Kimi-Dev-72B (Qwen2.5-72B)") << "moonshotai--Kimi-Dev-72B" << 72'706'203'648.0;
    QTest::newRow("granite-3.1-2b") << "ibm-granite--granite-3.1-2b-instruct" << 2'533'531'648.0;
}

void TestServing::parameterTotals()
{
    QFETCH(QString, file);
    QFETCH(double, published);
    const auto n = static_cast<double>(
        servingParameterCount(loadServeModel(dataPath("external/" + file.toStdString() + ".json"))));
    QVERIFY2(std::abs(n - published) / published < 0.005,
             qPrintable(QStringLiteral("%1 vs %2").arg(n, 0, 'f', 0).arg(published, 0, 'f', 0)));
}

// vLLM 0.11.0 on one H100 against the llm-d planner's logs (measured.jsonl ld-*: max_model_len 16000, block 128,
// utilization 0.9, the batch defaults): the profile peak of the sorting sampler (activation.cpp) within 3 %, the
// weights within 3 % and the KV cache within 10 % or 1 GiB. ld-mistral-small-3.2-24b is kept aside: its 2.12 GiB
// is less than its sampler's sort alone (4.8 GiB at 1024 requests), so that run's sampler or batch settings were
// not the defaults, and the record does not say which.
void TestServing::v011Startups_data()
{
    QTest::addColumn<QString>("config");
    QTest::addColumn<double>("weights");
    QTest::addColumn<double>("activation");
    QTest::addColumn<double>("kvCache");
    QTest::newRow("ld-gpt-oss-20b") << "moe/gpt-oss-20b.config.json" << 13.47 << 7.38 << 50.28;
    QTest::newRow("ld-llama-3.1-8b") << "external/meta-llama--Llama-3.1-8B-Instruct.json" << 14.99 << 4.76 << 51.38;
    QTest::newRow("ld-qwen3-32b-tp1") << "" << 61.03 << 5.64 << 4.45;
}

void TestServing::v011Startups()
{
    QFETCH(QString, config);
    QFETCH(double, weights);
    QFETCH(double, activation);
    QFETCH(double, kvCache);
    // Qwen/Qwen3-32B's config.json (the fields the plan reads)
    const char* qwen3_32b =
        R"({"model_type":"qwen3","hidden_size":5120,"intermediate_size":25600,"num_hidden_layers":64,
      "num_attention_heads":64,"num_key_value_heads":8,"head_dim":128,"vocab_size":151936,
      "max_position_embeddings":40960,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})";
    const ServeModel m = config.isEmpty() ? fromText(qwen3_32b) : loadServeModel(dataPath(config.toStdString()));
    VllmSettings s;
    s.version = VllmVersion::V0_11;
    s.maxModelLen = 16000;
    s.blockSize = 128;
    s.gpuMemoryUtilization = 0.9;
    const VllmPlan p = planVllm(m, s, *findGpu("h100"));
    QVERIFY(p.starts && *p.starts);
    const double w = static_cast<double>(p.weights) / kGiB, a = static_cast<double>(p.activationPeak) / kGiB,
                 kv = static_cast<double>(p.kvCache) / kGiB;
    qInfo("weights %.2f GiB (measured %.2f), activation %.2f (%.2f), KV cache %.2f (%.2f)", w, weights, a, activation,
          kv, kvCache);
    QVERIFY(std::abs(w / weights - 1) <= 0.03);
    QVERIFY(std::abs(a / activation - 1) <= 0.03);
    QVERIFY(std::abs(kv - kvCache) <= std::max(1.0, 0.10 * kvCache));
}

QTEST_GUILESS_MAIN(TestServing)
#include "tst_serving.moc"
