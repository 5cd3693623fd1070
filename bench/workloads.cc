#include "workloads.h"

#include <algorithm>
#include <cstdio>

namespace bench {
namespace {

uint64_t numel(const std::vector<uint64_t> &shape) {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

// Lays the tensors out back to back in one arena (offsets 64-aligned, as in
// the file) and fills it from a fixed-seed generator.
Workload finish(std::string name, std::vector<TensorSpec> tensors, bool few_values) {
  uint64_t off = 0;
  for (auto &t : tensors) {
    t.bytes = numel(t.shape) * 4;
    t.offset = off;
    off += (t.bytes + 63) / 64 * 64;
  }
  Workload w;
  w.name = std::move(name);
  w.tensors = std::move(tensors);
  w.arena = Buffer(off, false);
  auto *f = reinterpret_cast<float *>(w.arena.data());
  uint64_t x = 0x9E3779B97F4A7C15ull;
  float table[300];
  for (int i = 0; i < 300; ++i) table[i] = static_cast<float>(i - 150) * 0.0137f;
  for (uint64_t i = 0; i < off / 4; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    f[i] = few_values ? table[(x >> 11) % 300] : static_cast<float>((x >> 40) & 0xFFFFFF) * (1.0f / 8388608.0f) - 1.0f;
  }
  return w;
}

}  // namespace

Workload make_large(int scale) {
  std::vector<TensorSpec> t;
  for (int i = 0; i < 4 * scale; ++i) t.push_back({"layer" + std::to_string(i) + ".weight", {4096, 4096}});
  return finish(scale == 1 ? "large" : "large_1g", std::move(t), false);
}

Workload make_large_zstd(int scale) {
  Workload w = make_large(scale);
  std::vector<TensorSpec> t = w.tensors;
  return finish(scale == 1 ? "large_zstd" : "large_zstd_1g", std::move(t), true);
}

Workload make_mixed(int scale) {
  // A 4-layer transformer: embeddings, per layer q/k/v/o and MLP up/down
  // (weights and biases) and two norms (weight and bias), a final norm.
  const uint64_t d = scale == 1 ? 1024 : 2048, vocab = scale == 1 ? 16330 : 32660, ff = 4 * d;
  std::vector<TensorSpec> t;
  t.push_back({"model.embed_tokens.weight", {vocab, d}});
  for (int l = 0; l < 4; ++l) {
    std::string p = "model.layers." + std::to_string(l) + ".";
    for (const char *proj : {"q_proj", "k_proj", "v_proj", "o_proj"}) {
      t.push_back({p + "self_attn." + proj + ".weight", {d, d}});
      t.push_back({p + "self_attn." + proj + ".bias", {d}});
    }
    t.push_back({p + "mlp.up_proj.weight", {ff, d}});
    t.push_back({p + "mlp.up_proj.bias", {ff}});
    t.push_back({p + "mlp.down_proj.weight", {d, ff}});
    t.push_back({p + "mlp.down_proj.bias", {d}});
    for (const char *norm : {"input_layernorm", "post_attention_layernorm"}) {
      t.push_back({p + norm + ".weight", {d}});
      t.push_back({p + norm + ".bias", {d}});
    }
  }
  t.push_back({"model.norm.weight", {d}});
  t.push_back({"model.norm.bias", {d}});
  return finish(scale == 1 ? "mixed" : "mixed_1g", std::move(t), false);
}

Workload make_small(int scale) {
  const int n = 26214 * scale;
  std::vector<TensorSpec> t;
  t.reserve(n + 1);
  char name[32];
  for (int i = 0; i < n; ++i) {
    std::snprintf(name, sizeof name, "t%06d", i);
    t.push_back({name, {40, 64}});
  }
  t.push_back({"tail", {static_cast<uint64_t>(1024 * scale)}});
  return finish(scale == 1 ? "small" : "small_1g", std::move(t), false);
}

Workload make_many(size_t n) {
  std::vector<TensorSpec> t;
  t.reserve(n);
  char name[32];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(name, sizeof name, "tensor_%06zu", i);
    t.push_back({name, {4}});
  }
  return finish("many" + std::to_string(n / 1000) + "k", std::move(t), false);
}

void write_zt(const Workload &w, const std::string &path, const WriteSettings &s) {
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = s.sync;
  wo.encoding = s.encoding;
  wo.digest = s.digest;
  wo.zstd_level = s.zstd_level;
  wo.threads = s.threads;
  wo.format = s.format;
  wo.canonical = s.canonical;
  wo.alignment = s.alignment;
  zt_writer *wr = nullptr;
  check(zt_writer_create(path.c_str(), &wo, &wr), "zt_writer_create");
  for (size_t i = 0; i < w.tensors.size(); ++i) {
    const auto &t = w.tensors[s.reversed ? w.tensors.size() - 1 - i : i];
    const uint8_t *p = w.arena.data() + t.offset;
    if (!s.stream_piece) {
      check(zt_writer_add_dense(wr, t.name.data(), t.name.size(), ZT_F32, t.shape.data(), t.shape.size(), p, t.bytes,
                                nullptr),
            "zt_writer_add_dense");
      continue;
    }
    check(zt_writer_begin_object(wr, t.name.data(), t.name.size(), nullptr, t.shape.data(), t.shape.size()),
          "zt_writer_begin_object");
    check(zt_write_blob_begin(wr, t.name.data(), t.name.size(), "data", ZT_F32, nullptr), "zt_write_blob_begin");
    for (uint64_t done = 0; done < t.bytes; done += s.stream_piece)
      check(zt_write_blob_append(wr, p + done, std::min<uint64_t>(s.stream_piece, t.bytes - done)),
            "zt_write_blob_append");
    check(zt_write_blob_end(wr), "zt_write_blob_end");
  }
  check(zt_writer_finish(wr), "zt_writer_finish");
}

void write_shape_list(const Workload &w, const std::string &path) {
  FILE *f = std::fopen(path.c_str(), "w");
  if (!f) die("cannot write " + path);
  for (const auto &t : w.tensors) {
    std::fprintf(f, "%s", t.name.c_str());
    for (uint64_t d : t.shape) std::fprintf(f, " %llu", static_cast<unsigned long long>(d));
    std::fprintf(f, "\n");
  }
  std::fclose(f);
}

}  // namespace bench
