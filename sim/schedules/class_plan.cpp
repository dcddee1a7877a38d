#include "sim/schedules/class_plan.hpp"

#include <stdexcept>

namespace tilesim {

void fold_onto_classes(Plan& plan, int classes) {
  if (classes < 1 || static_cast<int>(plan.programs.size()) < classes) {
    throw std::invalid_argument("a quotient plan keeps the programs of its classes");
  }
  plan.programs.resize(static_cast<std::size_t>(classes));
  plan.ranks = classes;
  for (RankProgram& program : plan.programs) {
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      Op& op = program.mutable_op(i);
      if (op.kind == OpKind::send || op.kind == OpKind::recv) op.peer %= classes;
    }
  }
}

void keep_class_programs(Plan& plan, int classes) {
  if (classes < 1 || static_cast<int>(plan.programs.size()) < classes ||
      plan.ranks % classes != 0) {
    throw std::invalid_argument("an offset quotient keeps the programs of classes dividing P");
  }
  plan.programs.resize(static_cast<std::size_t>(classes));
  plan.ranks = classes;
}

}  // namespace tilesim
