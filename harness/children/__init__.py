"""Child processes: the one place that starts, follows and stops them, and the warm pool of job workers.

launcher.py starts a child (environment, session, exit lines, stderr tail, group kill, exit with the
parent); worker_pool.py keeps `harness.jobs.worker --serve` children warm. What a child runs is jobs/.
"""
