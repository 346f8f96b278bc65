"""Spreading a bench run (or an optimisation) over several GPUs: one worker per local GPU, or Ray tasks.

Why a folder of its own: the one-GPU path (suite/bench.py) stays as it was; this layer sits above it
(commands -> distribute -> bench -> harness) and only decides where each unit of work runs:
- groups.py     the unit of work: a (problem, shape, dtype) with all its implementations
- local_gpus.py the local GPUs (--gpus), one pinned worker process per GPU, jobs from one queue, one retry
- spread.py     bench over local GPUs: records streamed to the one run file
- merge.py      the driver side: failure records for lost work, which run file a record belongs to
- ray_backend.py the same groups as Ray tasks (one GPU each), for --ray ADDRESS | local
- optimize.py   ksuite optimize --gpus: one problem's loop per GPU at a time
"""
