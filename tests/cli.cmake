# End-to-end checks of the tilesim CLI: exit codes and messages (tilesim_cli_test is
# defined in tests/CMakeLists.txt).

set(bad tests/data/cli)
# Bad input: exit 2 naming file, line and key.
tilesim_cli_test(malformed_yaml 2 "malformed\\.yaml:5: malformed YAML"
                 simulate ${bad}/malformed.yaml)
tilesim_cli_test(unknown_key 2 "unknown-key\\.yaml:5: key 'schedule\\.gpu_count': unknown key"
                 simulate ${bad}/unknown-key.yaml)
tilesim_cli_test(bad_unit 2
                 "bad-unit-topology\\.yaml:8: key 'node\\.links\\[0\\]\\.bandwidth': expected a bandwidth"
                 simulate ${bad}/bad-unit.yaml)
tilesim_cli_test(too_many_gpus 2 "too-many-gpus\\.yaml:5: key 'schedule\\.gpus': 16 GPUs requested.* has 8"
                 simulate ${bad}/too-many-gpus.yaml)
tilesim_cli_test(disconnected 2
                 "disconnected-topology\\.yaml:[0-9]+: key 'node\\.links': topology is disconnected: GPU n0\\.left0 cannot reach GPU n0\\.right0"
                 simulate ${bad}/disconnected.yaml)
tilesim_cli_test(zero_bandwidth 2
                 "zero-bandwidth-topology\\.yaml:8: key 'node\\.links\\[0\\]\\.bandwidth': expected a positive bandwidth"
                 simulate ${bad}/zero-bandwidth.yaml)
tilesim_cli_test(bad_set_value 2 "--set attention\\.seq_len=12q.*key 'attention\\.seq_len'"
                 simulate scenarios/ring-256k.yaml --set attention.seq_len=12q)
tilesim_cli_test(indivisible_tokens 2 "ring-256k\\.yaml:5: key 'attention\\.seq_len': seq_len 262144 is not divisible"
                 simulate scenarios/ring-256k.yaml --set schedule.gpus=3)
tilesim_cli_test(missing_file 2 "no-such\\.yaml: cannot open file" simulate no-such.yaml)
tilesim_cli_test(duplicate_key 2 "duplicate-key\\.yaml:4: key 'name': each key once; it is already set at line 2"
                 simulate ${bad}/duplicate-key.yaml)
tilesim_cli_test(directory_as_scenario 2 "tests/data/cli: is a directory; expected a YAML file"
                 simulate tests/data/cli)
tilesim_cli_test(set_error_names_the_override 2
                 "ring-256k\\.yaml \\(--set schedule\\.tile=\\[3,5\\]\\): key 'schedule\\.tile': tile \\[3, 5\\] has 15 ranks"
                 simulate scenarios/ring-256k.yaml --set schedule.kind=mesh --set schedule.tile=[3,5])
# 2G tokens on 8 GPUs takes longer than the simulator's ~104-day range of picoseconds.
tilesim_cli_test(beyond_simulated_range 2 "beyond the simulator's range.*check attention\\.seq_len"
                 simulate scenarios/ring-256k.yaml --set attention.seq_len=1000G)
tilesim_cli_test(timeline_beyond_range 2 "timeline passes the simulator's range"
                 simulate scenarios/ring-256k.yaml --set attention.seq_len=2G)
# A compute op alone past the range: its duration must be checked before the cast to int64.
tilesim_cli_test(compute_beyond_range 2 "timeline passes the simulator's range"
                 simulate scenarios/ring-256k.yaml --set attention.seq_len=4400M)
# A budget ring cannot meet is an error for simulate and a left-out candidate for tune.
tilesim_cli_test(budget_exceeded 2
                 "\\(--set schedule\\.memory_budget=1GiB\\): key 'schedule\\.memory_budget': a budget this plan fits in: the plan's simulated peak, 2\\.51 GiB"
                 simulate scenarios/ring-256k.yaml --set schedule.memory_budget=1GiB)
tilesim_cli_test(budget_zero 2 "key 'schedule\\.memory_budget': a positive size"
                 simulate scenarios/ring-256k.yaml --set schedule.memory_budget=0)
tilesim_cli_test(tune_leaves_out_over_budget 0
                 "allgather_kv: schedule\\.memory_budget: the plan's simulated peak, 4\\.75 GiB per GPU, exceeds the budget of 3\\.00 GiB"
                 tune scenarios/ring-256k.yaml --memory-budget 3GiB)
tilesim_cli_test(tune_json_without_wall_clock 0 "\"sim_wall_s\": 0\\.0[^0-9]"
                 tune scenarios/ring-256k.yaml --json --no-wall-clock --set schedule.gpus=4)
tilesim_cli_test(compare_nothing_runs 2 "--schedules.*every one was left out.*mesh:3x5"
                 compare scenarios/ring-256k.yaml --schedules mesh:3x5)
# Every candidate over the budget: nothing to rank is an input error, as compare's.
tilesim_cli_test(tune_nothing_runs 2
                 "ring-256k\\.yaml:7: key 'schedule': at least one candidate that can run here; every one was left out:.*ring: schedule\\.memory_budget"
                 tune scenarios/ring-256k.yaml --memory-budget 1GiB)
# Candidates simulated but not among the --top fastest are listed, not dropped.
tilesim_cli_test(tune_outside_top 0 "simulated, not among the 1 fastest:"
                 tune scenarios/ring-256k.yaml --set schedule.gpus=8 --top 1 --exhaustive)
# A GPU count the sequence does not divide into: the scenario's input error (the ring's
# reference of the "vs ring" column threw it as an internal error), for compare and report.
tilesim_cli_test(compare_indivisible 2
                 "ring-256k\\.yaml:5: key 'attention\\.seq_len': seq_len 262144 is not divisible into 48"
                 compare scenarios/ring-256k.yaml --set schedule.gpus=48 --schedules ring)
tilesim_cli_test(topo_more_gpus_than_it_has 2 "dgx-h100\\.yaml: key '--gpus': at most 8 GPUs"
                 topo topologies/dgx-h100.yaml --gpus 16)
tilesim_cli_test(trace_into_missing_directory 2 "--trace: directory /nonexistent-dir does not exist"
                 simulate scenarios/ring-256k.yaml --trace /nonexistent-dir/t.json)
# Per-op times only when asked (docs/design-notes.md, streaming results).
tilesim_cli_test(simulate_per_op 0 "\"op_times\": \\[.*\"kind\": \"send\""
                 simulate scenarios/ring-256k.yaml --json --per-op --set schedule.gpus=2
                 --set attention.seq_len=8K)
tilesim_cli_test(negative_seed 2 "--seed: expected a non-negative integer"
                 run scenarios/ring-256k.yaml --seed -1)
tilesim_cli_test(validate_run_without_op_times 2
                 "run-without-op-times\\.json: key 'op_times': a time for every op of the plan but the frees; 10 have none"
                 validate scenarios/cpu/ring-cpu.yaml --set schedule.gpus=2 --set attention.seq_len=1K
                 --measured ${bad}/run-without-op-times.json)
tilesim_cli_test(profile_without_link_class 2
                 "h100\\.calib\\.yaml: key 'links\\.ethernet': costs for link class ethernet"
                 simulate ${bad}/ethernet.yaml)
tilesim_cli_test(published_source_not_structured 2
                 "plain-source\\.yaml:2: key 'source': expected \\{id: SOURCE-ID, cite:"
                 validate --published ${bad}/published-bad)
tilesim_cli_test(validate_measured_and_published 2 "--measured excludes --published"
                 validate scenarios/cpu/ring-cpu.yaml --measured ${bad}/run-of-1k.json
                 --published validation/)
tilesim_cli_test(validate_run_of_another_size 2
                 "run-of-1k\\.json: key 'seq_len': expected 2048.*the run has 1024 \\(a run of 'ring-cpu'\\)"
                 validate scenarios/cpu/ring-cpu.yaml --set schedule.gpus=2
                 --measured ${bad}/run-of-1k.json)
tilesim_cli_test(unknown_verb_option 2 "" simulate scenarios/ring-256k.yaml --frobnicate)

# The verbs work on the shipped files.
tilesim_cli_test(simulate_default 0 "makespan" simulate scenarios/ring-256k.yaml)
tilesim_cli_test(simulate_json 0 "\"makespan_s\"" simulate scenarios/ring-256k.yaml --json)
tilesim_cli_test(sweep_ring 0 "gpus.*tokens/GPU" sweep scenarios/ring-256k.yaml --gpus 4,8,16)
# fp32 attention: the bytes follow the dtype, the profile's compute rates are 16-bit kernels'.
tilesim_cli_test(fp32_attention_warned 0 "warning: .*attention\\.dtype fp32 is costed at the profile's compute rates"
                 simulate scenarios/ring-256k.yaml --set attention.dtype=fp32)
# An empty or bad entry of --gpus is an error naming it, not skipped (8,,16 ran 8 and 16).
tilesim_cli_test(sweep_gpus_empty_entry 2 "--gpus: expected GPU counts .*; entry 2 is empty"
                 sweep scenarios/ring-256k.yaml --gpus 8,,16)
tilesim_cli_test(report_gpus_bad_entry 2 "--gpus: expected GPU counts .*; entry 3 is '0'"
                 report scenarios/ring-256k.yaml -o ${CMAKE_CURRENT_BINARY_DIR}/unwritten.html
                 --gpus 2,4,0)
tilesim_cli_test(plan_dump 0 "rank 0 op 0: send KV\\[0\\] to rank 1 \\[group 0\\]"
                 plan scenarios/ring-256k.yaml --dump)
tilesim_cli_test(topo_cluster 0 "h100-cluster" topo topologies/h100-cluster.yaml --gpus 64)
tilesim_cli_test(topo_dot 0 "graph" topo topologies/dgx-h100.yaml --dot)
tilesim_cli_test(bad_tile_word 2 "mesh-1m-256\\.yaml \\(--set schedule\\.tile=fast\\): key 'schedule\\.tile': expected \\[a, b\\], auto or min-bytes"
                 simulate scenarios/mesh-1m-256.yaml --set schedule.tile=fast)

# --kernels cudnn|own: cuDNN is the cuda backend's; checked before any MPI or GPU work.
tilesim_cli_test(kernels_cudnn_on_cpu 2
                 "--kernels cudnn: the cpu backend runs its CPU kernels; cuDNN needs --backend cuda"
                 run scenarios/ring-256k.yaml --kernels cudnn)
tilesim_cli_test(calibrate_kernels_cudnn_on_cpu 2
                 "--kernels cudnn: the cpu backend runs its CPU kernels; cuDNN needs --backend cuda"
                 calibrate --out ${CMAKE_BINARY_DIR}/never-written.calib.yaml --kernels cudnn)
tilesim_cli_test(kernels_unknown 2 "--kernels: fast not in" run scenarios/ring-256k.yaml
                 --backend cuda --kernels fast)
if(NOT TILESIM_HAVE_CUDNN)
  tilesim_cli_test(kernels_cudnn_not_built 2
                   "--kernels cudnn: this tilesim was built without the cuDNN kernels.*install-deps"
                   run scenarios/ring-256k.yaml --backend cuda --kernels cudnn)
endif()

# The implementation-style keys (docs/schedules.md): bad values name their key.
tilesim_cli_test(bad_correction 2
                 "key 'schedule\\.correction': expected one of separate, eager, fused, got 'lazy'"
                 simulate scenarios/ring-256k.yaml --set schedule.correction=lazy)
tilesim_cli_test(bad_partial_dtype 2
                 "key 'attention\\.partial_dtype': expected one of bf16, fp16, fp32, got 'fp8'"
                 simulate scenarios/ring-256k.yaml --set attention.partial_dtype=fp8)

# Found by fuzz_regress_case: a `set:` entry that is a map, not a key.path=value string.
tilesim_cli_test(regress_set_entry_not_a_string 2 "set-entry-is-a-map\\.yaml:[0-9]+: key 'set': expected a list of key\\.path=value strings"
                 regress fuzz/regressions/regress_case)

# Masks (attention.mask, window, documents): bad input exits 2 naming file, line and key.
set(mask_scn ${PROJECT_SOURCE_DIR}/scenarios/ring-256k.yaml)
tilesim_cli_test(mask_contradicts_causal 2
  "ring-256k\\.yaml:6: key 'attention\\.causal': causal: false contradicts mask: sliding_window"
  plan ${mask_scn} --set attention.mask=sliding_window --set attention.window=4K)
tilesim_cli_test(mask_documents_sum 2
  "key 'attention\\.documents': document lengths sum to 12288 tokens, seq_len is 262144"
  plan ${mask_scn} --set attention.causal=true --set attention.mask=documents
  --set "attention.documents=[4K,8K]")
tilesim_cli_test(mask_window_needs_mask 2 "key 'attention\\.window': 'window' needs attention\\.mask"
  plan ${mask_scn} --set attention.window=4K)
tilesim_cli_test(mask_bad_length_bins 2
  "bad-lengths\\.csv:3: key 'max_tokens': expected max_tokens >= min_tokens"
  plan ${mask_scn} --set attention.causal=true --set attention.mask=documents
  "--set" "attention.documents={distribution: ../tests/data/cli/bad-lengths.csv, seed: 1}")
# A sequence the layout cannot split is the scenario's key on every path, exit 2: the lazy plan
# (causal zigzag beyond 256 GPUs, sim/scenario/lazy_plan.hpp) and the windowed symmetric ring
# (the full mask) build their chunks as they start, outside build_plan's naming of the key.
tilesim_cli_test(simulate_lazy_bad_seq_len 2
  "key 'attention\\.seq_len': seq_len 1048576 is not divisible into 1536 zigzag blocks for 768 GPUs"
  simulate scenarios/ring-256k.yaml --set attention.seq_len=1M --set schedule.gpus=768
  --set schedule.kind=zigzag --set attention.causal=true)
tilesim_cli_test(simulate_windowed_bad_seq_len 2
  "key 'attention\\.seq_len': seq_len 1048576 is not divisible into 1536 zigzag blocks for 768 GPUs"
  simulate scenarios/ring-256k.yaml --set attention.seq_len=1M --set schedule.gpus=768
  --set schedule.kind=zigzag)
# schedule.symmetry: roles (sim/model/rank_roles.hpp): where it cannot apply (a causal mask; a
# single PCIe node, which no block of whole nodes short of all ranks divides) the run is auto's
# and says so; where it runs the JSON marks it approximate (4096 GPUs: the block before the
# first pod crossing). auto takes it there too (the exact quotient would have 1024 classes),
# with a warning.
# Ulysses whose heads do not divide over its degree is the input's error, not a plan too big
# for the machine (the guard used to answer first: 826 GiB at 4096 GPUs).
tilesim_cli_test(simulate_ulysses_heads_indivisible 2
  "scenarios/ring-256k\\.yaml:5: key 'attention\\.heads': ulysses: heads 32 are not divisible by the Ulysses degree 4096"
  simulate scenarios/ring-256k.yaml --set attention.seq_len=1M --set schedule.kind=ulysses
  --set schedule.gpus=4096)
# So is pass-Q's backward, which no implementation defines (the guard answered first at 4096
# GPUs: 28 GiB).
tilesim_cli_test(simulate_pass_q_backward_refused 2
  "key 'attention\\.pass': schedule 'pass_q' builds the forward pass only"
  simulate scenarios/ring-256k.yaml --set attention.seq_len=1M --set schedule.kind=pass_q
  --set schedule.gpus=4096 --set attention.pass=both)
tilesim_cli_test(simulate_roles_window 0
  "warning: schedule\\.symmetry: roles not applied \\(roles needs the full mask"
  simulate scenarios/ring-256k.yaml --set schedule.gpus=64 --set schedule.symmetry=roles
  --set attention.causal=true --set attention.mask=sliding_window --set attention.window=4K)
tilesim_cli_test(simulate_roles_one_node 0
  "warning: schedule\\.symmetry: roles not applied \\(no block of consecutive ranks short of all 8 that is whole nodes"
  simulate scenarios/ring-256k.yaml --set topology=../topologies/pcie-8gpu.yaml
  --set schedule.symmetry=roles)
tilesim_cli_test(simulate_roles_4096 0
  "\"exact\": false,[ \n]+\"roles\": {[ \n]+\"first_rank\": 1016,"
  simulate scenarios/ring-256k.yaml --set attention.seq_len=1M --set schedule.gpus=4096
  --set schedule.symmetry=roles --json --no-wall-clock)
tilesim_cli_test(simulate_auto_roles_4096 0
  "warning: schedule\\.symmetry: auto simulated the approximate role quotient"
  simulate scenarios/ring-256k.yaml --set attention.seq_len=1M --set schedule.gpus=4096
  --no-wall-clock)
# Causal zigzag beyond 256 GPUs: auto takes the work-block quotient (symmetric_plan.hpp), and the
# summary and a warning say it is approximate and which block's work stands for every block's
# (zigzag's heaviest end block at 4096 GPUs, 1M tokens, is ranks 0..7: its one-query-chunk calls
# cost more than the two-query-chunk ones at 128-token chunks).
tilesim_cli_test(simulate_auto_work_block_4096 0
  "simulation .*APPROXIMATE, role quotient.*causal work: ranks 0\\.\\.7's programs stand for every block's"
  simulate scenarios/ring-256k.yaml --set attention.seq_len=1M --set schedule.gpus=4096
  --set schedule.kind=zigzag --set attention.causal=true --no-wall-clock)
# The causal contiguous ring beyond 256 GPUs takes it too (its heaviest block, ranks 4088..4095),
# and its compute balance is every rank's, not the block's: rank r's queries meet
# n^2 r + n (n + 1) / 2 pairs over chunks of n = 256 tokens, so max/mean is
# (4095 n^2 + n (n + 1) / 2) / (2047.5 n^2 + n (n + 1) / 2) = 1.99975490593442 (by hand).
tilesim_cli_test(simulate_auto_work_block_ring_4096 0
  "\"compute_balance\": 1\\.99975490593442.*\"work_block\": \\{\n *\"first_rank\": 4088"
  simulate scenarios/ring-256k.yaml --set attention.seq_len=1M --set schedule.gpus=4096
  --set attention.causal=true --json --no-wall-clock)
# A simulated peak above the device's memory (h100.calib.yaml compute.memory: 80GB) is a warning.
tilesim_cli_test(peak_over_device_memory 0
                 "the simulated peak, 10\\.03 TiB per GPU, exceeds the device's memory \\(74\\.51 GiB"
                 simulate scenarios/ring-256k.yaml --set attention.seq_len=1G)
# All-gather KV under a window keeps grouped send/recv of the chunks each rank reads, which
# sends a chunk once per receiving GPU across nodes where NCCL's ring sends it once per node
# (docs/schedules.md, All-gather KV): simulate, compare and tune say so.
tilesim_cli_test(allgather_kv_cross_node_warned 0 "warning: schedule\\.kind allgather_kv: under this mask the KV all-gather and the dKV reduce-scatter are costed as grouped send/recv.*up to 8x"
                 simulate scenarios/window-1m-64.yaml --set schedule.kind=allgather_kv)
tilesim_cli_test(allgather_kv_cross_node_warned_compare 0 "allgather_kv: schedule\\.kind allgather_kv: under this mask the KV all-gather"
                 compare scenarios/window-1m-64.yaml --schedules ring,allgather_kv)
tilesim_cli_test(allgather_kv_cross_node_warned_tune 0 "warnings:\n(.*\n)*  allgather_kv: schedule\\.kind allgather_kv: under this mask"
                 tune scenarios/window-1m-64.yaml --top 30)
