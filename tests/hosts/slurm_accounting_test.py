"""Parsing Slurm's figures (pure; the live part is in slurm_backend_test.py)."""
from swarmgate.hosts import slurm_accounting as A


def test_parse_rss_and_elapsed():
    assert A.parse_rss("107136K") == 107136 * 1024
    assert A.parse_rss("1.5G") == int(1.5 * 2**30) and A.parse_rss("512") == 512 and A.parse_rss("") is None
    assert A.parse_rss("n/a") is None
    assert A.parse_elapsed("00:00:05") == 5 and A.parse_elapsed("1-02:03:04") == 93784
    assert A.parse_elapsed("03:04") == 184 and A.parse_elapsed("Unknown") is None and A.parse_elapsed("") is None


def test_max_rss_over_steps():
    assert A.max_rss("107136K|1.0\n2048K|1.batch\n") == 107136 * 1024
    assert A.max_rss("") is None and A.max_rss("|1.0\n") is None


def test_job_runtime_from_scontrol_fields():
    assert A.job_runtime({"RunTime": "00:01:05"}) == 65 and A.job_runtime({}) is None
