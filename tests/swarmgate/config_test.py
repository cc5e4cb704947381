"""Config validation: every error names the file, the key and the value."""
from __future__ import annotations

import os
import tomllib

import pytest

from swarmgate.config import SCHEMA, ConfigError, defaults, find_repo, load_config, validate
from swarmgate.install import templates_dir


def write_cfg(repo, text):
    d = repo / ".claude"
    d.mkdir(exist_ok=True)
    (d / "swarmgate.toml").write_text(text)
    return d / "swarmgate.toml"


def test_no_config_gives_the_defaults(repo):
    cfg = load_config(str(repo))
    assert cfg.path is None
    assert cfg["threads"]["heavy_default"] == "auto"   # this machine's cores less one (host_defaults)
    assert cfg["memory"]["margin"] == "auto"   # swarmgate/host_defaults.py sizes it from the machine
    assert cfg.guard_mode("G01") == "on"


def test_shipped_template_loads_and_equals_the_schema_defaults():
    path = os.path.join(templates_dir(), "swarmgate.toml")
    with open(path, "rb") as f:
        raw = tomllib.load(f)
    shipped = validate(raw, path)
    defaults_ = validate({})
    # the template's [write] rows are a starting point for the shipped agent types; the rest are defaults
    assert {k: v for k, v in shipped.items() if k != "write"} == {k: v for k, v in defaults_.items() if k != "write"}
    assert shipped["write"]["main"] == defaults_["write"]["main"]
    shipped_types = sorted(n[:-3] for n in os.listdir(os.path.join(templates_dir(), "agents")) if n.endswith(".md"))
    assert len(shipped_types) >= 12
    for t in shipped_types:
        assert t in shipped["write"] or t == "rescanner", f"shipped agent type {t} has no [write] row"
    # every section of the schema is shown in the template, so users find the keys
    missing = set(SCHEMA) - set(raw)
    assert not missing, (f"add the sections {sorted(missing)} (keys at their defaults, commented) "
                         "to rules/swarmgate.toml")


def test_values_are_read_and_normalised(repo):
    write_cfg(repo, '[threads]\nheavy_default = 8\n[memory]\ntotal = "6G"\n[guards]\nB30 = "warn"\n'
                    '[write]\nimplementer = ["src/**"]\n')
    cfg = load_config(str(repo))
    assert cfg["threads"]["heavy_default"] == 8
    assert cfg["memory"]["total"] == 6 << 30
    assert cfg.guard_mode("B30") == "warn"
    assert cfg["write"]["implementer"] == ["src/**"] and cfg["write"]["main"] == ["**"]


def test_agents_keys_take_auto_or_a_value(repo):
    write_cfg(repo, "[agents]\nmemory_cap = '1.5G'\ncpu_max = 2\n")
    cfg = load_config(str(repo))
    assert cfg["agents"] == {"memory_cap": 1536 * 1024 * 1024, "cpu_max": 2.0}
    write_cfg(repo, "[agents]\nmemory_cap = 'auto'\ncpu_max = 'auto'\n")
    assert load_config(str(repo))["agents"] == {"memory_cap": "auto", "cpu_max": "auto"}


@pytest.mark.parametrize("text, names", [
    ("[nosuch]\nx = 1\n", ["unknown section [nosuch]"]),
    ("[threads]\nheavy_defualt = 3\n", ["unknown key [threads] heavy_defualt", "heavy_default"]),
    ("[threads]\nheavy_default = 'many'\n", ["[threads] heavy_default", "'many'", "integer"]),
    ("[threads]\nheavy_default = 0\n", ["[threads] heavy_default", "0", ">= 1"]),
    ("[threads]\nheavy_default = true\n", ["heavy_default", "True", "integer"]),
    ("[gate]\ncommon = 'yes'\n", ["[gate] common", "'yes'", "true or false"]),
    ("[dispatch]\nheavy_line = ''\n", ["[dispatch] heavy_line", "non-empty string"]),
    ("[dispatch]\nheavy_line = 5\n", ["[dispatch] heavy_line", "5", "string"]),
    ("[dispatch]\ndenied_types = 'general-purpose'\n", ["[dispatch] denied_types", "list of non-empty strings"]),
    ("[dispatch]\ndenied_types = ['a', 3]\n", ["denied_types", "list of non-empty strings"]),
    ("[bash]\nunverifiable = 'allow'\n", ["[bash] unverifiable", "'allow'", "'exec', 'deny', 'ask'"]),
    ("[memory]\nmargin = 'lots'\n", ["[memory] margin", "'lots'", "not a size"]),
    ("[memory]\nmargin = -1\n", ["[memory] margin", "negative"]),
    ("[guards]\nB01 = 'maybe'\n", ["[guards] B01", "'maybe'", "'on', 'off', 'warn'"]),
    ("[write]\nimplementer = 'src/**'\n", ["[write] implementer", "list"]),
    ("[agents]\nmemory_cap = 'half'\n", ["[agents] memory_cap", "'half'", "auto"]),
    ("[agents]\nmemory_cap = true\n", ["[agents] memory_cap", "auto"]),
    ("[agents]\ncpu_max = 0\n", ["[agents] cpu_max", "0", "number of CPUs"]),
    ("[agents]\ncpu_max = '2'\n", ["[agents] cpu_max", "'2'", "number of CPUs"]),
    ("[agents]\nswap = 1\n", ["unknown key [agents] swap", "cpu_max", "memory_cap"]),
    ("threads = 3\n", ["[threads] must be a table"]),
    ("[threads\n", ["not valid TOML"]),
])
def test_bad_config_names_file_key_and_value(repo, text, names):
    path = write_cfg(repo, text)
    with pytest.raises(ConfigError) as e:
        load_config(str(repo))
    msg = str(e.value)
    assert msg.startswith(str(path)), msg
    assert "\n" not in msg
    for n in names:
        assert n in msg, (n, msg)


@pytest.mark.parametrize("stages, names", [
    ("[gate]\nstages = 'unit'\n", ["[[gate.stages]] must be an array of tables"]),
    ("[[gate.stages]]\ncommand = 'pytest'\n", ["#1 lacks `name`"]),
    ("[[gate.stages]]\nname = 'u'\n", ["#1 lacks `command`"]),
    ("[[gate.stages]]\nname = 'u'\ncommand = 'x'\nnope = 1\n", ["unknown key [[gate.stages]] #1 nope"]),
    ("[[gate.stages]]\nname = 'u'\ncommand = 'x'\nheavy = 'no'\n", ["#1 heavy", "'no'"]),
    ("[[gate.stages]]\nname = 'u'\ncommand = 'x'\ncap = 'big'\n", ["#1 cap", "'big'"]),
    ("[[gate.stages]]\nname = 'u'\ncommand = 'x'\n[[gate.stages]]\nname = 'u'\ncommand = 'y'\n",
     ["name 'u' is used twice"]),
])
def test_bad_stages(repo, stages, names):
    path = write_cfg(repo, stages)
    with pytest.raises(ConfigError) as e:
        load_config(str(repo))
    assert str(path) in str(e.value)
    for n in names:
        assert n in str(e.value)


def test_good_stages_get_defaults(repo):
    write_cfg(repo, "[[gate.stages]]\nname = 'unit'\ncommand = 'pytest -q'\n[[gate.stages]]\n"
                    "name = 'full'\ncommand = 'cargo test --workspace'\nheavy = true\ncap = '2G'\n")
    stages = load_config(str(repo))["gate"]["stages"]
    assert [s["name"] for s in stages] == ["unit", "full"]
    assert stages[0]["inputs"] == ["**"] and stages[0]["heavy"] is False
    assert stages[1]["cap"] == 2 << 30


def test_find_repo_prefers_the_config_then_git(tmp_path, monkeypatch, repo):
    sub = repo / "a" / "b"
    sub.mkdir(parents=True)
    assert find_repo(str(sub)) == str(repo)
    write_cfg(repo / "a", "")
    assert find_repo(str(sub)) == str(repo / "a")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(repo))
    assert find_repo(str(sub)) == str(repo)


def test_defaults_is_a_valid_config():
    assert defaults()["dispatch"]["max_concurrent"] == 5


def test_every_load_reads_the_file_itself(repo):
    cfg = write_cfg(repo, "[threads]\nheavy_default = 8\n")
    assert load_config(str(repo))["threads"]["heavy_default"] == 8
    # the same size, a new content, the same mtime: still read afresh (nothing keyed on stat)
    st = cfg.stat()
    cfg.write_text("[threads]\nheavy_default = 9\n")
    os.utime(cfg, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert load_config(str(repo))["threads"]["heavy_default"] == 9
    cfg.write_text("[threads]\nheavy_default = 'x'\n")
    with pytest.raises(ConfigError):
        load_config(str(repo))
    assert not (repo / ".swarmgate").exists()  # nothing written beside it


def test_toml_outside_the_plain_subset_is_read_by_tomllib(repo):
    write_cfg(repo, "[threads]\nheavy_default = 0x1F  # hex: tomllib reads it\n")
    assert load_config(str(repo))["threads"]["heavy_default"] == 31
    write_cfg(repo, "[threads]\nheavy_default = = 3\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(str(repo))


def test_read_only_repository_still_loads(repo, tmp_path):
    write_cfg(repo, "[threads]\nheavy_default = 8\n")
    (repo / ".swarmgate").mkdir()
    os.chmod(repo / ".swarmgate", 0o500)
    try:
        if os.access(repo / ".swarmgate", os.W_OK):  # root ignores modes: plant a file instead
            os.chmod(repo / ".swarmgate", 0o700)
            (repo / ".swarmgate" / "cache").write_text("not a dir")
        assert load_config(str(repo))["threads"]["heavy_default"] == 8
    finally:
        os.chmod(repo / ".swarmgate", 0o700)
