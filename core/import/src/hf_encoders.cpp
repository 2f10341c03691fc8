// BERT, RoBERTa and DeBERTa-v2/v3 as the published runs trained them: the HF Trainer runs of measured.jsonl
// (hf-bert-large-*) load AutoModelForSequenceClassification (transformers docs model_memory_anatomy.md /
// perf_train_gpu_one.md), so the graph is BertForSequenceClassification / RobertaForSequenceClassification
// (modeling_bert.py, modeling_roberta.py, DebertaV2ForSequenceClassification in modeling_deberta_v2.py) in training
// mode, eager attention: embeddings + LayerNorm + dropout, post-norm encoder layers, and the classification head on the
// first token.
#include "hf_builder.h"
#include "hf_families.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <filesystem>

namespace headroom::detail {
namespace {

// DeBERTa's relative positions (modeling_deberta_v2.py): rel_embeddings [2 span, H] through the encoder's
// LayerNorm once per forward, and the c2p / p2c gather indices clamp(+-(i - j) + span, 0, 2 span - 1), expanded
// (a view) to [B, heads, T, T]. Log buckets change the indices' values, not their sizes.
struct Relative
{
    std::string rel, c2pIndex, p2cIndex;
};

Relative relativeTables(Builder& b, const SeqShape& ss, const std::string& root)
{
    const HfArch& a = b.a;
    OnnxBuilder& g = b.g;
    const int64_t span = a.family.relativeSpan;
    const std::string E = root + ".encoder";
    const std::string S = "/" + Builder::dotsToPath(E);
    Relative r;
    // rel_embeddings.weight read whole, written as the lookup of all its rows: the importer counts a stored
    // tensor as a parameter by its consumer (classify.cpp), and a norm's data input is not one (2 span x H copy)
    const std::string rows2 = g.node("Range", S, {g.ints({0}, true), g.ints({2 * span}, true), g.ints({1}, true)});
    const std::string table = g.node("Gather", S + "/rel_embeddings",
                                     {g.weight(E + ".rel_embeddings.weight", {2 * span, a.hidden}), rows2});
    r.rel = b.layerNorm(table, E + ".LayerNorm", a.hidden);
    const std::string rows = g.node("Unsqueeze", S, {ss.positions, g.ints({1})});
    const std::string cols = g.node("Unsqueeze", S, {ss.positions, g.ints({0})});
    const std::string rel = g.node("Sub", S, {rows, cols});
    const std::string shape = g.node("Concat", S, {ss.batch, g.ints({a.heads}), ss.seq, ss.seq});
    g.attrInt("axis", 0);
    auto index = [&](const std::string& d) {
        const std::string c = g.node(
            "Clip", S, {g.node("Add", S, {d, g.ints({span}, true)}), g.ints({0}, true), g.ints({2 * span - 1}, true)});
        return g.node("Expand", S, {g.node("Unsqueeze", S, {c, g.ints({0, 1})}), shape});
    };
    r.c2pIndex = index(rel);
    r.p2cIndex = index(g.node("Neg", S, {rel}));
    return r;
}

// DisentangledSelfAttention, eager: content-to-content q k^T plus content-to-position (q against the keys of
// the relative embeddings, gathered by c2p_pos) and position-to-content (k against their queries, gathered by
// p2c_pos, transposed), each scaled by 1 / sqrt(3 head_dim); softmax, dropout, times v. share_att_key: the
// relative embeddings go through this layer's query_proj and key_proj, after pos_dropout.
std::string debertaAttention(Builder& b, const Relative& r, const std::string& x, const std::string& Q,
                             const std::string& QS)
{
    const HfArch& a = b.a;
    OnnxBuilder& g = b.g;
    auto proj = [&](const std::string& in, const char* name) {
        return b.heads(b.linear(in, Q + "." + name, a.hidden, a.hidden, true), QS, a.heads);
    };
    const std::string q = proj(x, "query_proj"), k = proj(x, "key_proj"), v = proj(x, "value_proj");
    const std::string rel = g.node("Unsqueeze", QS, {b.dropoutOf(r.rel, QS + "/pos_dropout"), g.ints({0})});
    const std::string posKey = proj(rel, "key_proj"), posQuery = proj(rel, "query_proj");
    const std::string scale = g.scalar(1.0 / std::sqrt(3.0 * static_cast<double>(a.headDim)));
    auto scores = [&](const std::string& left, const std::string& right) {
        const std::string t = g.node("Transpose", QS, {right});
        g.attrInts("perm", {0, 1, 3, 2});
        return g.node("MatMul", QS, {left, t});
    };
    std::string w = g.node("Mul", QS, {scores(q, k), scale});
    const std::string c2p = g.node("GatherElements", QS, {scores(q, posKey), r.c2pIndex});
    g.attrInt("axis", -1);
    std::string p2c = g.node("GatherElements", QS, {scores(k, posQuery), r.p2cIndex});
    g.attrInt("axis", -1);
    p2c = g.node("Transpose", QS, {p2c});
    g.attrInts("perm", {0, 1, 3, 2});
    w = g.node("Add", QS, {w, g.node("Mul", QS, {c2p, scale})});
    w = g.node("Add", QS, {w, g.node("Mul", QS, {p2c, scale})});
    w = g.node("Add", QS, {w, b.mask});
    w = g.node("Softmax", QS, {w});
    g.attrInt("axis", -1);
    w = b.dropoutOf(w, QS + "/dropout");
    const std::string o = g.node("Transpose", QS, {g.node("MatMul", QS, {w, v})});
    g.attrInts("perm", {0, 2, 1, 3});
    return g.node("Reshape", QS, {o, g.ints({0, 0, -1})});
}

// BertLayer: self-attention (query/key/value with biases, dropout on the probabilities), BertSelfOutput
// (dense, dropout, LayerNorm of the sum), BertIntermediate (dense, act), BertOutput (dense, dropout, LayerNorm).
std::string encoderLayer(Builder& b, const std::string& x, int64_t l, const std::string& root, const Relative& r)
{
    const HfArch& a = b.a;
    OnnxBuilder& g = b.g;
    const std::string L = root + ".encoder.layer." + std::to_string(l);
    const std::string S = "/" + Builder::dotsToPath(L);
    const std::string A = L + ".attention";
    const std::string AS = "/" + Builder::dotsToPath(A);
    const std::string Q = A + ".self";
    const std::string QS = AS + "/self";
    std::string o;
    if (a.family.layout == HfLayout::DebertaV2) {
        o = debertaAttention(b, r, x, Q, QS);
    } else {
        const std::string q = b.heads(b.linear(x, Q + ".query", a.hidden, a.hidden, true), QS, a.heads);
        const std::string k = b.heads(b.linear(x, Q + ".key", a.hidden, a.hidden, true), QS, a.heads);
        const std::string v = b.heads(b.linear(x, Q + ".value", a.hidden, a.hidden, true), QS, a.heads);
        o = b.attention(q, k, v, QS, 1.0 / std::sqrt(static_cast<double>(a.headDim)));
    }
    o = b.dropoutOf(b.linear(o, A + ".output.dense", a.hidden, a.hidden, true), AS + "/output/dropout");
    const std::string h = b.layerNorm(g.node("Add", AS + "/output", {o, x}), A + ".output.LayerNorm", a.hidden);
    const std::string i = b.activation(b.linear(h, L + ".intermediate.dense", a.hidden, a.intermediate, true),
                                       S + "/intermediate/intermediate_act_fn", a.family.act);
    const std::string y = b.dropoutOf(b.linear(i, L + ".output.dense", a.intermediate, a.hidden, true),
                                      S + "/output/dropout");
    return b.layerNorm(g.node("Add", S + "/output", {y, h}), L + ".output.LayerNorm", a.hidden);
}

// The classification head on the first token: BertPooler (dense + tanh), dropout, classifier; RoBERTa has no
// pooler (add_pooling_layer=False) and RobertaClassificationHead: dropout, dense, tanh, dropout, out_proj.
std::string head(Builder& b, const std::string& x, const std::string& root)
{
    const HfArch& a = b.a;
    OnnxBuilder& g = b.g;
    const bool roberta = a.family.layout == HfLayout::Roberta;
    if (a.family.layout == HfLayout::DebertaV2) {
        // ContextPooler (pooler_dropout 0, dense, pooler_hidden_act gelu), then StableDropout and the classifier
        const std::string first = g.node("Gather", "/pooler", {x, g.ints({0}, true)});
        g.attrInt("axis", 1);
        const std::string pooled = b.activation(b.linear(first, "pooler.dense", a.hidden, a.hidden, true), "/pooler",
                                                a.family.act);
        return b.linear(b.dropoutOf(pooled, "/dropout"), "classifier", a.hidden, a.family.labels, true);
    }
    const std::string first = g.node("Gather", roberta ? "/classifier" : "/" + root + "/pooler",
                                     {x, g.ints({0}, true)}); // hidden_states[:, 0]
    g.attrInt("axis", 1);
    if (roberta) {
        std::string h = b.dropoutOf(first, "/classifier/dropout");
        h = g.node("Tanh", "/classifier", {b.linear(h, "classifier.dense", a.hidden, a.hidden, true)});
        h = b.dropoutOf(h, "/classifier/dropout");
        return b.linear(h, "classifier.out_proj", a.hidden, a.family.labels, true);
    }
    const std::string pooled = g.node("Tanh", "/" + root + "/pooler/activation",
                                      {b.linear(first, root + ".pooler.dense", a.hidden, a.hidden, true)});
    // classifier_dropout None: hidden_dropout_prob
    return b.linear(b.dropoutOf(pooled, "/dropout"), "classifier", a.hidden, a.family.labels, true);
}

} // namespace

std::string buildEncoderModel(const HfArch& a, const std::string& file)
{
    OnnxBuilder g({.producer = std::string(kHfConfigProducer),
                   .opset = 18,
                   .weightsFile = "config.json.weights",
                   .namedConstantValues = true},
                  a.modelType + " (" + std::filesystem::path(file).filename().string() + ")");
    g.metadata("model_type", a.modelType);
    g.input("input_ids", onnx::TensorProto::INT64);
    Builder b{a, g, a.normEps, a.ropeTheta, a.dropout, {}, {}, {}};
    const bool roberta = a.family.layout == HfLayout::Roberta;
    const bool deberta = a.family.layout == HfLayout::DebertaV2;
    const std::string root = roberta ? "roberta" : deberta ? "deberta" : "bert";
    const SeqShape ss = seqShape(g);
    // No attention_mask given: get_extended_attention_mask's (1 - ones) * min, [B, 1, 1, T], added to the scores
    const std::string maskShape = g.node("Concat", "/" + root, {ss.batch, g.ints({1, 1}), ss.seq});
    g.attrInt("axis", 0);
    b.mask = g.node("Expand", "/" + root, {g.scalar(0.0), maskShape});

    const std::string E = root + ".embeddings";
    const std::string ES = "/" + root + "/embeddings";
    const std::string words = g.node("Gather", ES + "/word_embeddings",
                                     {g.weight(E + ".word_embeddings.weight", {a.vocab, a.hidden}), "input_ids"});
    std::string x = words;
    if (!deberta) { // DeBERTa: no absolute positions, no token types (position_biased_input false)
        // token_type_ids default to the zeros buffer; RoBERTa's positions start after padding_idx (1)
        const std::string zeros = g.node("Mul", ES, {"input_ids", g.ints({0}, true)});
        const std::string types = g.node(
            "Gather", ES + "/token_type_embeddings",
            {g.weight(E + ".token_type_embeddings.weight", {a.family.typeVocab, a.hidden}), zeros});
        const std::string ids = roberta ? g.node("Add", ES, {ss.positions, g.ints({2}, true)}) : ss.positions;
        const std::string pos = g.node("Gather", ES + "/position_embeddings",
                                       {g.weight(E + ".position_embeddings.weight", {a.positions, a.hidden}), ids});
        x = g.node("Add", ES, {g.node("Add", ES, {words, types}), pos});
    }
    x = b.dropoutOf(b.layerNorm(x, E + ".LayerNorm", a.hidden), ES + "/dropout");
    const Relative rel = deberta ? relativeTables(b, ss, root) : Relative{};
    for (int64_t l = 0; l < a.layers; ++l)
        x = encoderLayer(b, x, l, root, rel);
    g.outputRows(head(b, x, root), onnx::TensorProto::FLOAT, a.family.labels); // [batch, num_labels]
    return g.serialize();
}

} // namespace headroom::detail
