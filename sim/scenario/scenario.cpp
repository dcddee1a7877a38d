#include "sim/scenario/scenario.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "sim/core/input_error.hpp"
#include "sim/core/units.hpp"
#include "sim/core/yaml_reader.hpp"
#include "sim/scenario/document_lengths.hpp"
#include "sim/schedules/schedule.hpp"
#include "sim/schedules/schedule_kinds.hpp"

namespace tilesim {
namespace {

std::string resolve(const std::string& scenario_file, const std::string& relative) {
  std::filesystem::path p(relative);
  if (p.is_absolute()) return p.string();
  return (std::filesystem::path(scenario_file).parent_path() / p).lexically_normal().string();
}

// Applies one "a.b.c=value" override to the document.
void apply_override(YAML::Node root, const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw InputError("--set", 0, text, "expected key.path=value");
  }
  const std::string path = text.substr(0, eq);
  YAML::Node value;
  try {
    value = YAML::Load(text.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw InputError("--set", 0, path, fmt::format("value is not valid YAML: {}", e.msg));
  }
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    parts.push_back(path.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  // yaml-cpp nodes are handles: walking with operator[] on a copy edits root.
  std::vector<YAML::Node> chain{root};
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node child = chain.back()[parts[i]];
    if (!child.IsDefined() || child.IsNull()) {
      chain.back()[parts[i]] = YAML::Node(YAML::NodeType::Map);
      child = chain.back()[parts[i]];
    }
    if (!child.IsMap()) {
      throw InputError("--set", 0, path, fmt::format("'{}' is not a mapping", parts[i]));
    }
    chain.push_back(child);
  }
  chain.back()[parts.back()] = value;
}

DType read_dtype(const YamlMap& m, const char* key = "dtype") {
  const std::string d = m.choice(key, {"bf16", "fp16", "fp32"});
  if (d == "bf16") return DType::bf16;
  if (d == "fp16") return DType::fp16;
  return DType::fp32;
}

PassSelection read_pass(const YamlMap& m) {
  const std::string p = m.choice("pass", {"forward", "backward", "both"});
  if (p == "forward") return PassSelection::forward;
  if (p == "backward") return PassSelection::backward;
  return PassSelection::both;
}

int positive_int(const YamlMap& m, std::string_view key) {
  const auto v = m.integer(key);
  if (v < 1 || v > 1'000'000) m.fail(key, "expected a positive integer");
  return static_cast<int>(v);
}

// --- attention.mask, attention.window, attention.documents (attention_mask.hpp) -------------

std::vector<std::int64_t> read_document_list(const YamlMap& att, std::int64_t seq_len) {
  const YAML::Node list = att.node("documents");
  std::vector<std::int64_t> lengths;
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    const std::string key = fmt::format("{}[{}]", att.key_path("documents"), i);
    const std::optional<std::int64_t> len =
        item.IsScalar() ? parse_tokens(item.Scalar()) : std::nullopt;
    if (!len || *len < 1) {
      throw InputError(att.file(), line_of(item), key, "expected a document length such as 4K");
    }
    lengths.push_back(*len);
    sum += *len;
  }
  if (sum != seq_len) {
    att.fail("documents",
             fmt::format("document lengths sum to {} tokens, seq_len is {}", sum, seq_len));
  }
  return lengths;
}

std::vector<std::int64_t> read_document_distribution(const YamlMap& att, std::int64_t seq_len) {
  const YamlMap docs = att.map("documents");
  docs.allow_only({"distribution", "seed"});
  const std::string csv = resolve(att.file(), docs.string("distribution"));
  const std::int64_t seed = docs.integer("seed");
  if (seed < 0) docs.fail("seed", "expected a seed >= 0");
  return sample_packed_lengths(read_length_distribution(csv), seq_len,
                               static_cast<std::uint64_t>(seed));
}

// `mask` names the mask; `causal: true|false` is the older shorthand for causal | full. Both
// may be given only when they agree.
AttentionMask read_mask(const YamlMap& att, std::int64_t seq_len) {
  if (!att.has("mask")) {
    for (const char* key : {"window", "documents"}) {
      if (att.has(key)) att.fail(key, fmt::format("'{}' needs attention.mask", key));
    }
    AttentionMask m;
    m.kind = att.boolean("causal") ? AttentionMaskKind::causal : AttentionMaskKind::full;
    return m;
  }
  const std::string kind = att.choice("mask", {"full", "causal", "sliding_window", "documents"});
  AttentionMask m;
  if (kind == "causal") m.kind = AttentionMaskKind::causal;
  if (kind == "sliding_window") m.kind = AttentionMaskKind::sliding_window;
  if (kind == "documents") m.kind = AttentionMaskKind::documents;
  if (att.has("causal") && att.boolean("causal") != m.hides_future()) {
    att.fail("causal",
             fmt::format("causal: {} contradicts mask: {} (a {} mask is {}causal)",
                         att.boolean("causal"), kind, kind, m.hides_future() ? "" : "not "));
  }
  if (att.has("window") && m.kind != AttentionMaskKind::sliding_window) {
    att.fail("window", "window is only for mask: sliding_window");
  }
  if (att.has("documents") && m.kind != AttentionMaskKind::documents) {
    att.fail("documents", "documents is only for mask: documents");
  }
  if (m.kind == AttentionMaskKind::sliding_window) {
    m.window_tokens = att.tokens("window");
    if (m.window_tokens < 1) att.fail("window", "expected a window of at least 1 token");
  }
  if (m.kind == AttentionMaskKind::documents) {
    const YAML::Node node = att.node("documents");
    if (!node.IsSequence() && !node.IsMap()) {
      att.fail("documents", "expected a list of lengths or {distribution: FILE.csv, seed: N}");
    }
    const std::vector<std::int64_t> lengths = node.IsSequence()
                                                  ? read_document_list(att, seq_len)
                                                  : read_document_distribution(att, seq_len);
    m.document_starts = documents_mask(lengths).document_starts;
  }
  return m;
}

constexpr int kMaxGpus = 65536;

// Keys that only some kinds take; giving one to another kind is an error
// rather than silently ignored.
void require_kind(const YamlMap& m, std::string_view key, const std::string& kind,
                  std::initializer_list<std::string_view> kinds) {
  if (!m.has(key)) return;
  if (std::find(kinds.begin(), kinds.end(), kind) != kinds.end()) return;
  std::string list;
  for (auto k : kinds) list += fmt::format("{}{}", list.empty() ? "" : ", ", k);
  m.fail(key, fmt::format("applies to schedule kind {} only, not '{}'", list, kind));
}

ScheduleSpec read_schedule(const YamlMap& m) {
  ScheduleSpec spec;
  const std::string kind = m.string("kind");
  if (std::find_if(std::begin(kScheduleKinds), std::end(kScheduleKinds),
                   [&](const char* k) { return kind == k; }) == std::end(kScheduleKinds)) {
    std::string list;
    for (const char* k : kScheduleKinds) list += fmt::format("{}{}", list.empty() ? "" : ", ", k);
    m.fail("kind", fmt::format("expected one of {}, got '{}'", list, kind));
  }
  spec.kind = kind;
  spec.gpus = positive_int(m, "gpus");
  // The plans grow as P^2 ops (ring) and the shipped clusters reach 4096 GPUs.
  if (spec.gpus > kMaxGpus) m.fail("gpus", fmt::format("expected at most {} GPUs", kMaxGpus));
  require_kind(m, "tile", kind, {"mesh"});
  require_kind(m, "placement", kind, {"mesh"});
  require_kind(m, "ulysses", kind, {"usp"});
  require_kind(m, "inner", kind, {"double_ring"});
  // balance: layout (the default) fits every kind; work is built for ring and allgather_kv.
  if (m.has("balance") && m.choice("balance", {"layout", "work"}) == "work") {
    require_kind(m, "balance", kind, {"ring", "allgather_kv"});
    spec.balance = TokenBalance::work;
  }
  if (m.has("tile")) {
    const YAML::Node tile = m.node("tile");
    if (tile.IsScalar() && tile.Scalar() == "auto") {
      spec.tile_choice = MeshTileChoice::fastest;
    } else if (tile.IsScalar() && tile.Scalar() == "min-bytes") {
      spec.tile_choice = MeshTileChoice::min_bytes;
    } else if (tile.IsSequence() && tile.size() == 2) {
      for (std::size_t i = 0; i < 2; ++i) {
        const auto v = tile[i].IsScalar() ? parse_tokens(tile[i].Scalar()) : std::nullopt;
        if (!v || *v < 1 || *v > spec.gpus) {
          m.fail("tile", fmt::format("expected [a, b] with a * b = gpus ({}), auto or min-bytes",
                                     spec.gpus));
        }
        (i == 0 ? spec.tile_a : spec.tile_b) = static_cast<int>(*v);
      }
    } else {
      m.fail("tile", "expected [a, b], auto or min-bytes");
    }
  } else if (kind == "mesh") {
    spec.tile_choice = MeshTileChoice::fastest;  // no tile means auto
  }
  if (m.has("placement")) {
    spec.placement = m.choice("placement", {"node-major", "q-group-major", "kv-group-major"});
  }
  if (m.has("ulysses")) spec.ulysses_degree = positive_int(m, "ulysses");
  if (m.has("inner")) spec.inner_ring = positive_int(m, "inner");
  if (m.has("correction")) {
    const std::string correction = m.choice("correction", {"separate", "eager", "fused"});
    spec.correction = correction == "separate" ? Correction::separate
                      : correction == "eager"  ? Correction::eager
                                               : Correction::fused;
  }
  // Read where it is used (symmetric_plan.hpp); checked here with the other keys.
  if (m.has("symmetry")) (void)m.choice("symmetry", {"auto", "exact", "roles", "off"});
  if (m.has("memory_budget")) {
    spec.memory_budget_bytes = m.bytes("memory_budget");
    // 0 would read as "no budget": say so by leaving the key out instead.
    if (!(spec.memory_budget_bytes > 0)) {
      m.fail("memory_budget", "a positive size such as 60GiB (leave the key out for no budget)");
    }
  }
  return spec;
}

// The `job` key; splits the attention heads among the job's TP ranks.
JobSpec read_job(const YamlMap& m, AttentionShape& attention) {
  m.allow_only({"gpus", "tp", "dp", "order"});
  JobSpec job;
  job.gpus = positive_int(m, "gpus");
  if (job.gpus > kMaxGpus) m.fail("gpus", fmt::format("expected at most {} GPUs", kMaxGpus));
  job.tp = m.has("tp") ? positive_int(m, "tp") : 1;
  if (m.has("dp")) job.dp = positive_int(m, "dp");
  if (m.has("order")) {
    job.order = m.choice("order", {"tp-cp-dp", "tp-dp-cp"}) == "tp-cp-dp" ? JobOrder::tp_cp_dp
                                                                          : JobOrder::tp_dp_cp;
  }
  if (attention.heads % job.tp != 0 || attention.kv_heads % job.tp != 0) {
    m.fail("tp", fmt::format("a TP degree that divides attention.heads ({}) and kv_heads ({}): "
                             "each CP group computes heads / tp of them, got tp {}",
                             attention.heads, attention.kv_heads, job.tp));
  }
  job.model_heads = attention.heads;
  job.model_kv_heads = attention.kv_heads;
  attention.heads /= job.tp;
  attention.kv_heads /= job.tp;
  return job;
}

// Reads the scenario document with the overrides applied; load_scenario maps its errors.
Scenario read_scenario(YAML::Node doc, const std::string& path,
                       const std::vector<std::string>& overrides);

// A document given as text (the Python package's dicts), read as if it were the file `path`.
YAML::Node load_yaml_text(const std::string& text, const std::string& path) {
  try {
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw InputError(path, e.mark.line + 1, "", fmt::format("malformed YAML: {}", e.msg));
  }
}

// Names an error by the --set override that caused it, when one did.
template <typename Read>
Scenario with_override_names(const std::string& path, const std::vector<std::string>& overrides,
                             Read read);

}  // namespace

int Scenario::line_of_key(const std::string& key_path) const {
  YAML::Node node = document;
  int line = tilesim::line_of(document);
  std::size_t start = 0;
  while (node.IsMap()) {
    const auto dot = key_path.find('.', start);
    YAML::Node child = node[key_path.substr(start, dot - start)];
    if (!child) break;
    node = child;
    line = tilesim::line_of(node);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return line;
}

std::string default_calibration_path(const std::string& topology_path,
                                     const std::string& gpu_model) {
  std::string stem = gpu_model.substr(0, gpu_model.find('-'));
  std::transform(stem.begin(), stem.end(), stem.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return (std::filesystem::path(topology_path).parent_path() / (stem + ".calib.yaml"))
      .lexically_normal()
      .string();
}

namespace {

// The last --set that set `key_path` or a parent of it, if any.
const std::string* override_of(const std::vector<std::string>& overrides,
                               const std::string& key_path) {
  const std::string* found = nullptr;
  for (const auto& o : overrides) {
    const std::string key = o.substr(0, o.find('='));
    if (key_path == key || key_path.rfind(key + ".", 0) == 0) found = &o;
  }
  return found;
}

}  // namespace

InputError Scenario::error_at(const std::string& key_path, const std::string& expected) const {
  // A value that came from --set has no line in the file: name the override.
  if (const std::string* o = override_of(overrides, key_path)) {
    return InputError(fmt::format("{} (--set {})", file, *o), 0, key_path, expected);
  }
  return InputError(file, line_of_key(key_path), key_path, expected);
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  return with_override_names(path, overrides,
                             [&] { return read_scenario(load_yaml_file(path), path, overrides); });
}

Scenario load_scenario_text(const std::string& text, const std::string& path,
                            const std::vector<std::string>& overrides) {
  return with_override_names(
      path, overrides, [&] { return read_scenario(load_yaml_text(text, path), path, overrides); });
}

namespace {

template <typename Read>
Scenario with_override_names(const std::string& path, const std::vector<std::string>& overrides,
                             Read read) {
  try {
    return read();
  } catch (const InputError& e) {
    if (const std::string* o = override_of(overrides, e.key())) {
      throw InputError(fmt::format("{} (--set {})", path, *o), 0, e.key(), e.expected());
    }
    throw;
  }
}

Scenario read_scenario(YAML::Node doc, const std::string& path,
                       const std::vector<std::string>& overrides) {
  if (!doc.IsMap()) throw InputError(path, line_of(doc), "", "expected a scenario mapping");
  for (const auto& o : overrides) apply_override(doc, o);
  const YamlMap root(doc, path, "");
  root.allow_only({"name", "topology", "attention", "schedule", "calibration", "job"});

  Scenario s;
  s.file = path;
  s.overrides = overrides;
  s.name = root.string("name");
  s.topology_path = resolve(path, root.string("topology"));
  if (root.has("calibration")) s.calibration_path = resolve(path, root.string("calibration"));

  const YamlMap att = root.map("attention");
  att.allow_only({"seq_len", "batch", "heads", "kv_heads", "head_dim", "v_head_dim", "dtype",
                  "partial_dtype", "output_dtype", "causal", "pass", "mask", "window",
                  "documents"});
  AttentionShape& a = s.attention;
  a.seq_len = att.tokens("seq_len");
  if (a.seq_len < 1) att.fail("seq_len", "expected at least 1 token");
  a.batch = positive_int(att, "batch");
  a.heads = positive_int(att, "heads");
  a.kv_heads = att.has("kv_heads") ? positive_int(att, "kv_heads") : a.heads;
  a.head_dim = positive_int(att, "head_dim");
  // MLA (DeepSeek-V3): q/k head dim 192, v head dim 128; unset, V has head_dim.
  if (att.has("v_head_dim")) a.v_head_dim = positive_int(att, "v_head_dim");
  a.dtype = read_dtype(att);
  if (att.has("partial_dtype")) a.partial_dtype = read_dtype(att, "partial_dtype");
  if (att.has("output_dtype")) a.output_dtype = read_dtype(att, "output_dtype");
  a.set_mask(read_mask(att, a.seq_len));
  a.pass = read_pass(att);
  if (a.heads % a.kv_heads != 0) {
    att.fail("kv_heads", fmt::format("kv_heads {} must divide heads {}", a.kv_heads, a.heads));
  }

  const YamlMap sched = root.map("schedule");
  sched.allow_only({"kind", "gpus", "tile", "placement", "ulysses", "inner", "memory_budget",
                    "correction", "balance", "symmetry"});
  s.schedule = read_schedule(sched);
  if (root.has("job")) s.job = read_job(root.map("job"), s.attention);
  s.document = doc;
  // A shape the kind cannot take (heads that do not split over the Ulysses degree, a backward
  // of pass-Q) is the input's error, named before a guard sizes a plan that could never be
  // built (Ulysses on 4096 GPUs with 32 heads was refused for its 826 GiB, pass-Q's backward
  // there for its 28 GiB).
  try {
    check_kind_fits_shape(s.attention, s.schedule);
  } catch (const ScheduleError& e) {
    throw s.error_at(e.key(), e.what());
  }
  return s;
}

}  // namespace

}  // namespace tilesim
