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
tilesim_cli_test(validate_run_of_another_size 2
                 "run-of-1k\\.json: key 'seq_len': expected 2048.*the run has 1024 \\(a run of 'ring-cpu'\\)"
                 validate scenarios/cpu/ring-cpu.yaml --set schedule.gpus=2
                 --measured ${bad}/run-of-1k.json)
tilesim_cli_test(unknown_verb_option 2 "" simulate scenarios/ring-256k.yaml --frobnicate)

# The verbs work on the shipped files.
tilesim_cli_test(simulate_default 0 "makespan" simulate scenarios/ring-256k.yaml)
tilesim_cli_test(simulate_json 0 "\"makespan_s\"" simulate scenarios/ring-256k.yaml --json)
tilesim_cli_test(sweep_ring 0 "gpus.*tokens/GPU" sweep scenarios/ring-256k.yaml --gpus 4,8,16)
tilesim_cli_test(plan_dump 0 "rank 0 op 0: send KV\\[0\\] to rank 1 \\[group 0\\]"
                 plan scenarios/ring-256k.yaml --dump)
tilesim_cli_test(topo_cluster 0 "h100-cluster" topo topologies/h100-cluster.yaml --gpus 64)
tilesim_cli_test(topo_dot 0 "graph" topo topologies/dgx-h100.yaml --dot)
