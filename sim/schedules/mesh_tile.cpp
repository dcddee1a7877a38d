#include "sim/schedules/mesh_tile.hpp"

namespace tilesim {

std::vector<MeshTile> mesh_tiles(int ranks) {
  std::vector<MeshTile> tiles;
  for (int a = 1; a <= ranks; ++a) {
    if (ranks % a == 0) tiles.push_back(MeshTile{a, ranks / a});
  }
  return tiles;
}

}  // namespace tilesim
