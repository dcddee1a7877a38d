// Item results survive the trip as text: values exactly, errors as the same exception.
#include <catch2/catch.hpp>
#include <csignal>

#include "sim/core/input_error.hpp"
#include "sim/core/interrupt.hpp"
#include "sim/core/units.hpp"
#include "sim/verbs/item_map.hpp"

namespace tilesim {
namespace {

TEST_CASE("a guarded item's double comes back bit for bit") {
  const double x = 0.1 + 0.2;  // 0.30000000000000004: needs 17 significant digits
  const nlohmann::ordered_json v =
      unwrap_item(guarded_item([&] { return nlohmann::ordered_json(x); }));
  CHECK(v.get<double>() == x);
}

TEST_CASE("a guarded item's InputError is rethrown with file, line, key and message") {
  const std::string r = guarded_item([]() -> nlohmann::ordered_json {
    throw InputError("s.yaml", 5, "schedule.gpus", "a power of two");
  });
  try {
    unwrap_item(r);
    FAIL("no exception");
  } catch (const InputError& e) {
    CHECK(e.file() == "s.yaml");
    CHECK(e.line() == 5);
    CHECK(e.key() == "schedule.gpus");
    CHECK(std::string(e.what()) ==
          InputError("s.yaml", 5, "schedule.gpus", "a power of two").what());
  }
  CHECK_THROWS_AS(unwrap_item(guarded_item(
                      []() -> nlohmann::ordered_json { throw SimulatedRangeError("too long"); })),
                  SimulatedRangeError);
}

TEST_CASE("a stop request is not an item's failure: Interrupted leaves guarded_item") {
  CHECK_THROWS_AS(guarded_item([]() -> nlohmann::ordered_json { throw Interrupted(SIGINT); }),
                  Interrupted);
}

TEST_CASE("map_serially returns results in item order and reports progress") {
  std::vector<std::pair<std::size_t, std::size_t>> seen;
  const std::vector<std::string> r = map_serially(
      3, [](std::size_t i) { return std::to_string(i * i); },
      [&](std::size_t done, std::size_t total) { seen.emplace_back(done, total); });
  CHECK(r == std::vector<std::string>{"0", "1", "4"});
  CHECK(seen == std::vector<std::pair<std::size_t, std::size_t>>{{1, 3}, {2, 3}, {3, 3}});
}

}  // namespace
}  // namespace tilesim
