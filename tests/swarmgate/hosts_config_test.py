"""The machine config (hosts.toml): defaults without a file, peers, and errors that name the file, the key
and the value."""
from __future__ import annotations

import pytest

from swarmgate.config import ConfigError
from swarmgate.hosts_config import load_hosts_config


def hosts(tmp_path, monkeypatch, text):
    p = tmp_path / "hosts.toml"
    p.write_text(text)
    monkeypatch.setenv("SWARMGATE_HOSTS_CONFIG", str(p))
    return p


def test_hosts_config_absent_means_switch_off(tmp_path):
    hc = load_hosts_config()
    assert hc.path is None and hc.peers == {}
    assert hc["across_machines"]["enabled"] is False


def test_hosts_config_peers(tmp_path, monkeypatch):
    hosts(tmp_path, monkeypatch, '[across_machines]\nenabled = true\n[peers.gpu2]\nhost = "10.0.0.2"\n'
                                 'port = 2222\nmax_cap = "64G"\n')
    hc = load_hosts_config()
    assert hc["across_machines"]["enabled"] is True
    peer = hc.peers["gpu2"]
    assert peer["host"] == "10.0.0.2" and peer["port"] == 2222 and peer["max_cap"] == 64 << 30
    assert peer["name"] == "gpu2" and peer["user"] == ""


@pytest.mark.parametrize("text, names", [
    ("[peers.a]\nport = 22\n", ["[peers.a] lacks `host`"]),
    ("[peers.a]\nhost = 'h'\nport = 70000\n", ["[peers.a] port", "70000", "<= 65535"]),
    ("[peers.a]\nhost = 'h'\nprot = 22\n", ["unknown key [peers.a] prot"]),
    ("[peers]\na = 1\n", ["[peers.a] must be a table"]),
    ("peers = 3\n", ["[peers] must hold one table per peer"]),
    ("[across_machines]\nenabled = 'yes'\n", ["[across_machines] enabled", "'yes'"]),
    ("[report]\nhost_budget_s = 0\n", ["[report] host_budget_s", ">= 0.1"]),
    ("[report]\nhost_budget_s = 'fast'\n", ["host_budget_s", "'fast'", "number"]),
    ("[nosuch]\n", ["unknown section [nosuch]"]),
    ("[dispatch]\nbackend = 'k8s'\n", ["[dispatch] backend", "'k8s'"]),
])
def test_bad_hosts_config(tmp_path, monkeypatch, text, names):
    p = hosts(tmp_path, monkeypatch, text)
    with pytest.raises(ConfigError) as e:
        load_hosts_config()
    assert str(e.value).startswith(str(p)), str(e.value)
    for n in names:
        assert n in str(e.value), (n, str(e.value))
