// Evaluating a verb's independent items (sweep points, tune candidates) and collecting their
// results in item order, so that how they were spread (here, or across the ranks of an MPI job:
// runtime/mpi/job_item_map.hpp) cannot change the output.
//
// A result is text (one JSON document) so that it can travel between processes as bytes.
// An item that fails does not throw where it runs (a throwing rank would leave the others
// waiting): guarded_item turns the failure into an error document, and unwrap_item rethrows it
// where the results are read, as the same exception type with the same message. The first
// failing item in item order wins, as in a serial loop. Interrupted (sim/core/interrupt.hpp)
// is not an item's failure: it propagates, and map_serially checks for it between items.
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tilesim {

using ItemFn = std::function<std::string(std::size_t item)>;
// Called after each item with (items done, items in total) by the process that prints.
using ProgressFn = std::function<void(std::size_t done, std::size_t total)>;
// Returns the n results, in item order, on the process that prints; an empty vector on the
// others (the other ranks of an MPI job).
using ItemMap =
    std::function<std::vector<std::string>(std::size_t n, const ItemFn&, const ProgressFn&)>;

std::vector<std::string> map_serially(std::size_t n, const ItemFn& item,
                                      const ProgressFn& progress);

// {"value": body()} or {"error": {...}} for an InputError, SimulatedRangeError or other
// std::exception thrown by body.
std::string guarded_item(const std::function<nlohmann::ordered_json()>& body);
// The value of a guarded_item result; rethrows its error.
nlohmann::ordered_json unwrap_item(const std::string& result);

}  // namespace tilesim
