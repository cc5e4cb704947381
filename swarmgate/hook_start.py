"""What Claude Code runs for every hook call: `PYTHON -I -S .../swarmgate/hook_start.py EVENT`.

A script is compiled from source at every start (only modules are read from .pyc files), so this
one stays a few lines; swarmgate/hook_entry.py does the work and says why the hook starts this way.
"""
import sys

if __name__ == "__main__":
    import gc
    # A hook process lives for milliseconds: the collector's passes over the ~50 modules it
    # imports cost more than the garbage they could find (collection is rarer, not off).
    gc.set_threshold(100_000, 50, 100)
    sys.path.append(__file__.rpartition("/")[0].rpartition("/")[0])   # the dir holding swarmgate/
    try:
        from swarmgate.hook_entry import start
    except BaseException as e:  # noqa: BLE001 - no package, no engine: refuse (exit 2 blocks in every client)
        sys.stderr.write(f"swarmgate hook: cannot load swarmgate beside {__file__} ({type(e).__name__}: {e}); "
                         "refusing to be safe. Reinstall swarmgate, then run `swarmgate install PATH` again "
                         "(docs/install.md).\n")
        sys.exit(2)
    code = start(__file__)
    # the answer is written (os.write); skip the interpreter's teardown of every module
    sys.stdout.flush()
    sys.stderr.flush()
    import posix   # not os: its import alone costs ~1.5 ms (swarmgate/lean_os.py)
    posix._exit(code)
