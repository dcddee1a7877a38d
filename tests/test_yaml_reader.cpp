#include <catch2/catch.hpp>

#include "sim/core/input_error.hpp"
#include "sim/core/yaml_reader.hpp"

using namespace tilesim;

namespace {
YamlMap parse(const char* text) { return YamlMap(YAML::Load(text), "x.yaml", ""); }
}  // namespace

TEST_CASE("unknown keys name the file, line and key path") {
  auto root = parse("a: 1\nattention:\n  seq_len: 1K\n  sequence: 3\n");
  auto att = root.map("attention");
  try {
    att.allow_only({"seq_len"});
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.file() == "x.yaml");
    CHECK(e.line() == 4);
    CHECK(e.key() == "attention.sequence");
  }
}

TEST_CASE("typed readers reject values in the wrong unit") {
  auto root = parse("bw: 450GB\nt: 2us\nn: 256K\n");
  CHECK_THROWS_AS(root.bandwidth_bytes_per_s("bw"), InputError);
  CHECK(root.time_s("t") == Approx(2e-6));
  CHECK(root.tokens("n") == 262144);
  try {
    root.bandwidth_bytes_per_s("bw");
  } catch (const InputError& e) {
    CHECK(e.line() == 1);
    CHECK(std::string(e.what()).find("450GB/s") != std::string::npos);
  }
}

TEST_CASE("missing keys and bad choices are errors") {
  auto root = parse("kind: rung\n");
  CHECK_THROWS_AS(root.string("name"), InputError);
  CHECK_THROWS_AS(root.choice("kind", {"ring", "mesh"}), InputError);
}

TEST_CASE("a repeated key is an error at its second line, naming the first") {
  try {
    parse("name: a\nschedule:\n  gpus: 8\n  kind: ring\n  gpus: 16\n").map("schedule");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.line() == 5);
    CHECK(e.key() == "schedule.gpus");
    CHECK(std::string(e.what()).find("already set at line 3") != std::string::npos);
  }
  CHECK_THROWS_AS(parse("name: a\nname: b\n"), InputError);
  // The same key in two sibling mappings of a list is not a repeat.
  CHECK_NOTHROW(parse("links:\n  - {a: 1}\n  - {a: 2}\n"));
}

TEST_CASE("a directory given as a YAML file is an error naming it") {
  try {
    load_yaml_file(TILESIM_SOURCE_DIR);
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.file() == TILESIM_SOURCE_DIR);
    CHECK(std::string(e.what()).find("is a directory") != std::string::npos);
  }
}
