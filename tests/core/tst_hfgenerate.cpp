// Hugging Face generate()'s peak (core/serving/src/hf_generate.cpp, docs/SERVING.md "Hugging Face generate()"):
// every expected figure below is worked by hand from the rules in that section (the arithmetic is in the
// comments), not read back from the code.
//
// No published generate() figure fits these rules: the only one in shared/external/measured.jsonl
// (qwen-7b-inference-bf16-gen2048, Qwen-7B-Chat 16.99 GB) ran Qwen v1's remote modeling_qwen.py under
// transformers < 4.45 (no logits_to_keep, flash-attn 2) with the prompt length and the statistic unstated (rated
// B), and its config.json is not stored here; the litgpt rows run litgpt's own generate, not transformers'.
#include "headroom/serving/hf_generate.h"
#include "headroom/serving/serve_model.h"

#include <QTest>

#include <string>

using namespace headroom;

namespace {

std::string dataPath(const std::string& rel) { return std::string(HEADROOM_TEST_DATA) + "/" + rel; }

const char* kTiny = R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
  "num_key_value_heads": 4, "head_dim": 16, "vocab_size": 32000, "intermediate_size": 128,
  "max_position_embeddings": 4096, "tie_word_embeddings": false, "torch_dtype": "bfloat16"})";

// The tiny model with one sliding and one full layer (window 3).
const char* kTinySliding = R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
  "num_attention_heads": 4, "num_key_value_heads": 4, "head_dim": 16, "vocab_size": 32000, "intermediate_size": 128,
  "max_position_embeddings": 4096, "tie_word_embeddings": false, "sliding_window": 3,
  "layer_types": ["sliding_attention", "full_attention"]})";

GpuSpec gpu(int64_t capacity) { return GpuSpec{"test", capacity, 0, 0}; }

HfGenerateSettings settings(int64_t prompt, int64_t fresh, int64_t batch, HfCacheKind cache)
{
    HfGenerateSettings s;
    s.promptLen = prompt;
    s.newTokens = fresh;
    s.batch = batch;
    s.cache = cache;
    return s;
}

} // namespace

class TestHfGenerate : public QObject
{
    Q_OBJECT

private slots:
    void llama8b_data();
    void llama8b();
    void tinyLogitsDominate();
    void slidingLayers();
    void searches();
    void cannotTell();
};

void TestHfGenerate::llama8b_data()
{
    QTest::addColumn<int>("cache");
    QTest::addColumn<qint64>("kvPrefill");
    QTest::addColumn<qint64>("kvEnd");
    QTest::addColumn<qint64>("attention");
    QTest::addColumn<qint64>("mlp");
    QTest::addColumn<qint64>("decodeTransient");
    QTest::addColumn<qint64>("peak");
    // Llama-3.1-8B bf16, prompt 2048 + 512 new tokens, batch 8. Weights 8,030,261,248 params x 2 B =
    // 16,060,522,496 (not padded). KV: 32 layers x 2 x 8 heads x 128 x 2 B = 131,072 B per token. Widths (B per
    // position): h 8192, I 28,672, q 8192, k = v 2048, rope 2 x 128 x 2 = 512. T = 8 x 2048 = 16,384; base =
    // T x (8192 + 512 + 8192) = 276,824,064. MLP = base + T x (2 x 8192 + 3 x 28,672) = base + T x 102,400.
    //
    // dynamic: KV after the prefill 8 x 2048 x 131,072 = 2,147,483,648; at the end 8 x 2559 x 131,072 =
    // 2,683,305,984. Attention per position 8192 + max(4 x 8192, 2 x 8192 + 3 x 2048, 2 x 8192 + 128, 3 x 8192,
    // 3 x 8192) = 40,960. Decode: 8 x (2 x 8192 + 512 + 102,400) = 954,368 plus the cat's old K
    // 8 x 2048 x 2558 = 41,910,272. Peak at the prefill: 16,060,522,496 + 2,147,483,648 + 1,954,545,664.
    QTest::newRow("dynamic") << 0 << qint64{2147483648} << qint64{2683305984} << qint64{947912704} << qint64{1954545664}
                             << qint64{42864640} << qint64{20162551808};
    // static: max_cache_len 2560, KV 8 x 2560 x 131,072 = 2,684,354,560 throughout. Attention: rotary with the
    // fresh K, V (+4096): 8192 + 36,864 per position -> 1,015,021,568; sdpa with the mask (8 x 2048 x 2560 x 3 =
    // 125,829,120) and repeat_kv (2 x 8 x 2560 x 8192 = 335,544,320): base + T x (8192 + 16,384 + 128) + both =
    // 1,142,947,840. Decode: 954,368 + mask 8 x 2560 x 3 + repeat 335,544,320 = 336,560,128.
    QTest::newRow("static") << 1 << qint64{2684354560} << qint64{2684354560} << qint64{1142947840} << qint64{1954545664}
                            << qint64{336560128} << qint64{20699422720};
}

void TestHfGenerate::llama8b()
{
    QFETCH(int, cache);
    QFETCH(qint64, kvPrefill);
    QFETCH(qint64, kvEnd);
    QFETCH(qint64, attention);
    QFETCH(qint64, mlp);
    QFETCH(qint64, decodeTransient);
    QFETCH(qint64, peak);
    const ServeModel m = loadServeModel(dataPath("external/meta-llama--Llama-3.1-8B-Instruct.json"));
    const GpuSpec h100{"H100", 85017493504, 831324160, 64 << 20};
    const HfGeneratePlan p = planHfGenerate(m, settings(2048, 512, 8, static_cast<HfCacheKind>(cache)), h100);
    QVERIFY(p.cannotTell.empty());
    QCOMPARE(qint64{p.weights}, qint64{16060522496});
    QCOMPARE(qint64{p.kvBytesPerToken}, qint64{131072});
    QCOMPARE(qint64{p.kvPrefill}, kvPrefill);
    QCOMPARE(qint64{p.kvEnd}, kvEnd);
    QCOMPARE(qint64{p.prefill.attention}, attention);
    QCOMPARE(qint64{p.prefill.mlp}, mlp);
    QCOMPARE(p.prefill.activation, p.prefill.mlp);
    QCOMPARE(qint64{p.decodeTransient}, decodeTransient);
    QCOMPARE(qint64{p.peak}, peak);
    QCOMPARE(p.peak, p.prefillPeak);
    QVERIFY(*p.fits);
    // per sequence the prefill adds 2048 x 131,072 + 2048 x (16,896 + 102,400) = 512,753,664 B (the MLP stays
    // the largest transient); the budget 85,017,493,504 - 831,324,160 - 67,108,864 - 16,060,522,496 =
    // 68,058,537,984 holds 132 (dynamic). Static: + 512 x 131,072 per sequence = 579,862,528 -> 117.
    QCOMPARE(qint64{p.maxBatch}, cache == 0 ? qint64{132} : qint64{117});
}

// A small model: the vocabulary's logits outweigh every layer transient, and the peak is the last step.
void TestHfGenerate::tinyLogitsDominate()
{
    const ServeModel m = parseServeModel(kTiny, "tiny.json");
    const HfGeneratePlan p = planHfGenerate(m, settings(4, 2, 1, HfCacheKind::Dynamic), gpu(int64_t{1} << 30));
    // params: 2 x (4 x 64 x 64 + 3 x 64 x 128 + 128) + 2 x 32,000 x 64 + 64 = 4,178,240 -> 8,356,480 B
    QCOMPARE(qint64{p.weights}, qint64{8356480});
    QCOMPARE(qint64{p.kvBytesPerToken}, qint64{512}); // 2 layers x 2 x 4 x 16 x 2 B
    QCOMPARE(qint64{p.kvPrefill}, qint64{2048});
    QCOMPARE(qint64{p.kvEnd}, qint64{2560}); // 4 + 2 - 1 positions
    // base 4 x (128 + 64 + 128) = 1280; attention 1280 + 4 x (128 + 640) = 4352; MLP 1280 + 4 x 1024 = 5376;
    // norm 1280 + 4 x (128 + 512) = 3840; logits max(4 x 128 + 32,000 x 2, 32,000 x 6) = 192,000
    QCOMPARE(qint64{p.prefill.attention}, qint64{4352});
    QCOMPARE(qint64{p.prefill.mlp}, qint64{5376});
    QCOMPARE(qint64{p.prefill.norm}, qint64{3840});
    QCOMPARE(qint64{p.prefill.logits}, qint64{192000});
    QCOMPARE(qint64{p.prefill.activation}, qint64{192000});
    QCOMPARE(qint64{p.prefillPeak}, qint64{8356480 + 2048 + 192000});
    QCOMPARE(qint64{p.decodeTransient}, qint64{192000});
    QCOMPARE(qint64{p.peak}, qint64{8356480 + 2560 + 192000});
}

void TestHfGenerate::slidingLayers()
{
    const ServeModel m = parseServeModel(kTinySliding, "sliding.json");
    // per layer and token 2 x 4 x 16 x 2 = 256 B
    const HfGeneratePlan dyn = planHfGenerate(m, settings(4, 4, 1, HfCacheKind::Dynamic), gpu(int64_t{1} << 30));
    QCOMPARE(qint64{dyn.kvPrefill}, qint64{2 * 4 * 256}); // the sliding layer's view keeps the prompt's storage
    QCOMPARE(qint64{dyn.kvEnd}, qint64{(7 + 3) * 256});   // full 7 positions, sliding min(3, 7)
    const HfGeneratePlan st = planHfGenerate(m, settings(4, 4, 1, HfCacheKind::Static), gpu(int64_t{1} << 30));
    QCOMPARE(qint64{st.kvEnd}, qint64{(8 + 3) * 256}); // max_cache_len 8, the sliding layer's min(3, 8)
}

void TestHfGenerate::searches()
{
    const ServeModel m = parseServeModel(kTiny, "tiny.json");
    // peak(B) at prompt 4 + 2: the decode step's 8,356,480 + B x (2560 + 192,000) = 8,356,480 + 194,560 B
    const int64_t ten = 8356480 + 194560 * 10;
    QCOMPARE(qint64{planHfGenerate(m, settings(4, 2, 1, HfCacheKind::Dynamic), gpu(ten)).maxBatch}, qint64{10});
    QCOMPARE(qint64{planHfGenerate(m, settings(4, 2, 1, HfCacheKind::Dynamic), gpu(ten - 1)).maxBatch}, qint64{9});
    // batch 1, the same budget 1,945,600: long prompts peak at the prefill's MLP, 512 P + 1344 P = 1856 P
    // -> P <= 1048 (1856 x 1049 = 1,946,944 > 1,945,600)
    QCOMPARE(qint64{planHfGenerate(m, settings(4, 2, 1, HfCacheKind::Dynamic), gpu(ten)).longestPrompt}, qint64{1048});
    QVERIFY(!*planHfGenerate(m, settings(1049, 2, 1, HfCacheKind::Dynamic), gpu(ten)).fits);
    QVERIFY(*planHfGenerate(m, settings(1048, 2, 1, HfCacheKind::Dynamic), gpu(ten)).fits);
}

void TestHfGenerate::cannotTell()
{
    const ServeModel m = parseServeModel(R"({"hidden_size": 64})", "partial.json");
    const HfGeneratePlan p = planHfGenerate(m, HfGenerateSettings{}, gpu(int64_t{1} << 30));
    QVERIFY(!p.fits);
    QVERIFY(!p.cannotTell.empty());
    QVERIFY(hfGenerateSummary(p).starts_with("cannot tell"));
}

QTEST_GUILESS_MAIN(TestHfGenerate)
#include "tst_hfgenerate.moc"
