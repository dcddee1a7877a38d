#include "sim/verbs/item_map.hpp"

#include <stdexcept>

#include "sim/core/input_error.hpp"
#include "sim/core/interrupt.hpp"
#include "sim/core/units.hpp"

namespace tilesim {

std::vector<std::string> map_serially(std::size_t n, const ItemFn& item,
                                      const ProgressFn& progress) {
  std::vector<std::string> results;
  results.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    throw_if_interrupted();
    results.push_back(item(i));
    if (progress) progress(i + 1, n);
  }
  return results;
}

std::string guarded_item(const std::function<nlohmann::ordered_json()>& body) {
  nlohmann::ordered_json doc;
  try {
    doc["value"] = body();
  } catch (const Interrupted&) {
    throw;  // a stop request ends the whole verb, not one item
  } catch (const InputError& e) {
    doc["error"] = {{"kind", "input"},
                    {"file", e.file()},
                    {"line", e.line()},
                    {"key", e.key()},
                    {"expected", e.expected()}};
  } catch (const SimulatedRangeError& e) {
    doc["error"] = {{"kind", "range"}, {"what", e.what()}};
  } catch (const std::exception& e) {
    doc["error"] = {{"kind", "internal"}, {"what", e.what()}};
  }
  return doc.dump();
}

nlohmann::ordered_json unwrap_item(const std::string& result) {
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(result);
  if (!doc.contains("error")) return std::move(doc["value"]);
  const auto& e = doc["error"];
  const std::string kind = e["kind"];
  if (kind == "input") {
    throw InputError(e["file"], e["line"], e["key"], e["expected"]);
  }
  if (kind == "range") throw SimulatedRangeError(e["what"].get<std::string>());
  throw std::runtime_error(e["what"].get<std::string>());
}

}  // namespace tilesim
