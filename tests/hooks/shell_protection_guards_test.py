"""hooks/shell_protection_guards.py (G01 on shell calls): the parts that keep the tool list unloaded."""
from __future__ import annotations

from swarmgate import tool_table
from swarmgate.hooks import shell_protection_guards as P


def test_the_umbrella_name_is_the_tool_tables():
    assert P.UMBRELLA == tool_table.UMBRELLA
    assert P.UMBRELLA in P._tool_names()
