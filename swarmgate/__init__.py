"""swarmgate: policy hooks, a memory-capped runner and a commit gate for agent swarms."""
__version__ = "0.1.0"
