// A written profile loads back with the same values; the optional `cores` key is checked.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/calibration/profile_writer.hpp"
#include "sim/core/input_error.hpp"
#include "sim/model/calibration_profile.hpp"

using namespace tilesim;

namespace {

std::string temp_file(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path.string();
}

}  // namespace

TEST_CASE("calibration: a written profile loads back to 1e-5") {
  CalibrationProfile p;
  p.gpu = "CPU-host";
  p.peak_flops = 12.345678e9;
  p.launch_overhead_s = 61.5e-6;
  p.merge_bytes_per_s = 3.21e9;
  p.comm_slowdown = 0.137;
  p.comm_slowdown_min_bytes = 32768;
  p.compute_cores = 1.93;
  p.device_memory_bytes = 80e9;
  p.causal_efficiency.points = {{128, 0.61}, {1024, 0.83}};
  p.forward[64].points = {{128, 0.52}, {512, 0.97}, {1024, 1.0}};
  p.backward[64].points = {{128, 0.3}, {1024, 0.41}};
  p.occupancy = OccupancyModel{132, 2, 64, 1024};
  LinkCost& shm = p.links[static_cast<std::size_t>(LinkClass::nvlink)];
  shm = LinkCost{1.0, 23.4e-6, 5.67e9, true};
  std::ostringstream text;
  calibration::write_profile(text, p, "test header\nsecond line", LinkClass::nvlink);
  const CalibrationProfile q = load_calibration(temp_file("tilesim-profile-io.yaml", text.str()));
  CHECK(q.gpu == "CPU-host");
  CHECK(q.peak_flops == Approx(p.peak_flops).epsilon(1e-5));
  CHECK(q.launch_overhead_s == Approx(p.launch_overhead_s).epsilon(1e-5));
  CHECK(q.merge_bytes_per_s == Approx(p.merge_bytes_per_s).epsilon(1e-5));
  CHECK(q.comm_slowdown == Approx(0.137));
  CHECK(q.comm_slowdown_min_bytes == 32768);
  CHECK(q.compute_cores == Approx(1.93));
  CHECK(q.device_memory_bytes == 80e9);
  CHECK(q.occupancy.sms == 132);
  CHECK(q.occupancy.ctas_per_sm == 2);
  CHECK(q.occupancy.cta_tokens == 64);
  CHECK(q.occupancy.reference_ctas == 1024);
  CHECK(q.causal_efficiency.at(1024) == Approx(0.83));
  CHECK(q.efficiency(Pass::fwd, 64, 512) == Approx(0.97));
  CHECK(q.efficiency(Pass::bwd, 64, 1024) == Approx(0.41));
  for (LinkClass cls : {LinkClass::nvlink, LinkClass::pcie, LinkClass::upi, LinkClass::ib}) {
    INFO(to_string(cls));
    CHECK(q.link(cls).alpha_s == Approx(23.4e-6).epsilon(1e-5));
    CHECK(q.link(cls).flow_cap_bytes_per_s == Approx(5.67e9).epsilon(1e-5));
  }
  CHECK_FALSE(q.link(LinkClass::ethernet).defined);
}

TEST_CASE("calibration: a non-positive cores value names file, line and key") {
  std::ostringstream text;
  CalibrationProfile p;
  p.gpu = "x";
  p.peak_flops = 1e9;
  p.merge_bytes_per_s = 1e9;
  p.compute_cores = 2;
  p.causal_efficiency.points = {{1, 1.0}};
  p.forward[64].points = {{128, 1.0}};
  p.backward[64].points = {{128, 1.0}};
  p.links[0].defined = true;
  calibration::write_profile(text, p, "", LinkClass::nvlink);
  std::string yaml = text.str();
  yaml.replace(yaml.find("cores: 2"), 8, "cores: 0");
  const std::string path = temp_file("tilesim-bad-cores.yaml", yaml);
  try {
    load_calibration(path);
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.key() == "compute.cores");
    CHECK(e.line() == 7);
    CHECK(e.file() == path);
  }
}
