"""The machine config: ~/.config/swarmgate/hosts.toml (peers, the cross-machine switch, dispatch).

Its schema lives here and only here, checked as the repository config is (swarmgate.config's value
checks and messages). Only the host tools, doctor and the hook's host report read it: it is kept out
of swarmgate.config, which every hook call loads.
"""
from __future__ import annotations

from swarmgate import lean_os as os
from swarmgate.config import (
    ConfigError, Key, _bool, _choice, _fmt, _int, _num, _size, _str, _strlist, _where, parse_toml,
)
from swarmgate.sizes import parse_size
from swarmgate.state_paths import machine_config_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


PEER_KEYS: dict[str, Key] = {
    "host": Key(None, _str(), "address or name ssh connects to"),
    "port": Key(22, _int(1, 65535), "ssh port"),
    "user": Key("", _str(False), "ssh user (empty: ssh's default)"),
    "identity": Key("", _str(False), "ssh private key file"),
    "ssh_options": Key([], _strlist, "extra `-o` options for ssh"),
    "work_root": Key("/var/tmp/swarmgate-runs", _str(), "where run trees go on the peer"),
    "python": Key("python3", _str(), "python on the peer (runs the collector)"),
    "runner": Key("run-with-memory-cap", _str(), "the peer's run-with-memory-cap command"),
    "max_cap": Key(None, _size, "the largest memory cap a run may have on the peer"),
    "redact": Key([], _strlist, "private host names and addresses replaced in the peer's output"),
    "state_dir": Key("", _str(False), "SWARMGATE_STATE_DIR on the peer"),
    "transport": Key("ssh", _choice("ssh", "local"),
                     "ssh, or local: the peer side runs on this machine in another directory (self-tests)"),
}

HOSTS_SCHEMA: dict[str, dict[str, Key]] = {
    "across_machines": {
        "enabled": Key(False, _bool, "the cross-machine switch: off means nothing is sent to a peer"),
    },
    "toolchain": {
        "commands": Key(["python3 -VV"], _strlist, "version commands compared line by line with the peer"),
    },
    "dispatch": {
        "pending_seconds": Key(30, _int(0), "how long a placement counts against its host before the runner books it"),
        "long_job_seconds": Key(7200, _int(1), "jobs expected longer need a long-job declaration or two machines"),
        "gpu_margin_mib": Key(1024, _int(0), "GPU memory kept free on every card"),
        "backend": Key("local", _choice("local", "slurm"), "where host-dispatch places jobs beyond two machines"),
    },
    "report": {
        "host_budget_s": Key(12.0, _num(0.1), "time to read one host"),
        "total_budget_s": Key(25.0, _num(0.1), "time to read every host"),
    },
    "quiesce": {
        "services": Key([], _strlist, "names of the whitelisted GPU services (never reported by name)"),
        "stop": Key([], _strlist, "commands that stop them"),
        "check": Key([], _strlist, "commands that exit 0 once they are stopped"),
        "process_names": Key([], _strlist, "process names of their compute processes on the GPUs"),
    },
    "slurm": {
        "partition": Key("", _str(False), "partition to submit to"),
        "time_limit": Key("01:00:00", _str(), "default time limit"),
    },
}


class HostsConfig:
    __slots__ = ("data", "peers", "path")

    def __init__(self, data: dict[str, Any], peers: dict[str, dict[str, Any]], path: str | None = None) -> None:
        self.data = data
        self.peers = peers
        self.path = path

    def __getitem__(self, section: str) -> Any:
        return self.data[section]


def validate_hosts(raw: dict[str, Any], path: str | None = None) -> HostsConfig:
    where = _where(path)
    data: dict[str, Any] = {}
    for section, keys in HOSTS_SCHEMA.items():
        data[section] = {n: (parse_size(k.default) if k.check is _size and k.default is not None else k.default)
                         for n, k in keys.items()}
    peers: dict[str, dict[str, Any]] = {}
    for section, table in raw.items():
        if section == "peers":
            if not isinstance(table, dict):
                raise ConfigError(f"{where}: [peers] must hold one table per peer ([peers.NAME])")
            for pname, ptable in table.items():
                if not isinstance(ptable, dict):
                    raise ConfigError(f"{where}: [peers.{pname}] must be a table")
                peer = {n: k.default for n, k in PEER_KEYS.items()}
                for n, v in ptable.items():
                    key = PEER_KEYS.get(n)
                    if key is None:
                        raise ConfigError(f"{where}: unknown key [peers.{pname}] {n} (known: {', '.join(PEER_KEYS)})")
                    try:
                        peer[n] = key.check(v)
                    except ValueError as e:
                        raise ConfigError(f"{where}: [peers.{pname}] {n} = {_fmt(v)}: {e}") from None
                if not peer["host"]:
                    raise ConfigError(f"{where}: [peers.{pname}] lacks `host`")
                peer["name"] = pname
                peers[pname] = peer
            continue
        if section not in HOSTS_SCHEMA:
            raise ConfigError(f"{where}: unknown section [{section}] "
                              f"(known: {', '.join(sorted([*HOSTS_SCHEMA, 'peers']))})")
        if not isinstance(table, dict):
            raise ConfigError(f"{where}: [{section}] must be a table")
        for n, v in table.items():
            key = HOSTS_SCHEMA[section].get(n)
            if key is None:
                raise ConfigError(f"{where}: unknown key [{section}] {n} (known: {', '.join(HOSTS_SCHEMA[section])})")
            try:
                data[section][n] = key.check(v)
            except ValueError as e:
                raise ConfigError(f"{where}: [{section}] {n} = {_fmt(v)}: {e}") from None
    return HostsConfig(data, peers, path)


def load_hosts_config(path: str | None = None) -> HostsConfig:
    """The machine-level hosts config (defaults: this host only, switch off)."""
    path = str(path) if path else str(machine_config_path())
    if not os.path.exists(path):
        return validate_hosts({}, None)
    return validate_hosts(parse_toml(path), path)
