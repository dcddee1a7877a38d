tilesim_test(test_job SOURCES test_job.cpp LIBS tilesim_job tilesim_schedules tilesim_model)

# The job key on the CLI: bad values exit 2 naming file, line (or the --set) and key.
set(job tests/data/cli/job-small.yaml)
tilesim_cli_test(job_indivisible 2
                 "job-indivisible\\.yaml:7: key 'job\\.gpus': a multiple of tp x schedule\\.gpus = 8 x 4 = 32.*got 48"
                 simulate tests/data/cli/job-indivisible.yaml)
tilesim_cli_test(job_tp_heads 2
                 "job-small\\.yaml \\(--set job\\.tp=3\\): key 'job\\.tp': a TP degree that divides attention\\.heads \\(32\\) and kv_heads \\(8\\)"
                 simulate ${job} --set job.tp=3)
tilesim_cli_test(job_tp_node 2
                 "key 'job\\.tp': a TP degree that divides the 8 GPUs per node.*got 16"
                 simulate ${job} --set attention.kv_heads=32 --set job.tp=16)
tilesim_cli_test(job_dp 2 "key 'job\\.dp': job\\.gpus / \\(tp x schedule\\.gpus\\) = 32 / \\(8 x 2\\) = 2.*got 3"
                 simulate ${job} --set job.dp=3)
tilesim_cli_test(job_unknown_key 2 "key 'job\\.pp': unknown key" simulate ${job} --set job.pp=2)
tilesim_cli_test(job_order 2 "key 'job\\.order'.*tp-cp-dp" simulate ${job} --set job.order=dp-tp)
# 16 ring groups of 2 ranks, each on 2 nodes of one leaf on its own rail: no link is shared,
# so the job is exactly as slow as one group alone (test_job has the closed forms).
tilesim_cli_test(job_simulate 0 "16 CP groups at once.*job slowdown +1\\.0000x.* 1 groups"
                 simulate ${job})
tilesim_cli_test(job_compare 0 "inside a job of 32 GPUs: 16 CP groups.*job slowdown"
                 compare ${job} --schedules ring,zigzag)
# Every group simulated (--no-symmetry): 16 x 14 ops over --max-ops 100. With whole groups as
# classes one group of 14 ops stands for the 16, and the same limit runs it.
tilesim_cli_test(job_too_many_ops 2 "job-small\\.yaml:7: key 'job\\.gpus': a job that fits: its 16 CP groups hold ~224 ops"
                 simulate ${job} --max-ops 100 --no-symmetry)
tilesim_cli_test(job_quotient_within_ops 0 "job symmetry +1 of the 16 groups simulated.*job slowdown +1\\.0000x"
                 simulate ${job} --max-ops 100)
tilesim_cli_test(job_tune 0 "each candidate inside a job of 32 GPUs: 16 CP groups.*job slowdown.*ring"
                 tune ${job} --top 3)
tilesim_cli_test(job_sweep_refused 2 "job-small\\.yaml:7: key 'job': no job key for `sweep`"
                 sweep ${job} --gpus 2)
# Each CP group computes heads / tp: 32 / 8 = 4 query heads and 8 / 8 = 1 KV head.
tilesim_cli_test(job_heads_split 0 "\"heads\": 4,.*\"kv_heads\": 1,.*\"job_gpus\": 32"
                 simulate ${job} --json --no-wall-clock)
# Whole CP groups as symmetry classes: byte-identical result JSON to every group simulated.
tilesim_test(test_job_symmetry SOURCES test_job_symmetry.cpp symmetry_fixture.cpp
             LIBS tilesim_job tilesim_model tilesim_scenario tilesim_verbs)
# --per-op of a job: every rank's op times, every group simulated (rank 31 is group 15's second).
tilesim_cli_test(job_per_op 0 "\"op_times\": \\[.*\"rank\": 31,.*\"job_gpus\": 32"
                 simulate ${job} --per-op --json --no-wall-clock)
# --full-check validates the group plan; the job still runs one group for the 16 (the same
# --max-ops limit that refuses every group passes).
tilesim_cli_test(job_full_check 0 "job symmetry +1 of the 16 groups simulated.*job slowdown +1\\.0000x"
                 simulate ${job} --full-check --max-ops 100)
