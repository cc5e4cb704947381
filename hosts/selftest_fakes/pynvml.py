"""A fake of the NVML calls swarmgate makes (the thinnest layer; our logic stays real).

State comes from the JSON file named by FAKE_NVML_STATE:
{"cards": [{"name": "NVIDIA H200", "total_mib": 143771, "free_mib": 100000,
            "procs": [{"pid": 1234, "used_mib": 2048}]}]}
Without FAKE_NVML_STATE, nvmlInit fails like a machine without a driver.
"""
import json
import os


class NVMLError(Exception):
    pass


class NVMLError_LibraryNotFound(NVMLError):
    pass


def _state():
    path = os.environ.get("FAKE_NVML_STATE")
    if not path:
        raise NVMLError_LibraryNotFound("NVML Shared Library Not Found")
    with open(path) as f:
        return json.load(f)


class _Mem:
    def __init__(self, total, free):
        self.total, self.free, self.used = total, free, total - free


class _Proc:
    def __init__(self, pid, used):
        self.pid, self.usedGpuMemory = pid, used


def nvmlInit():
    _state()


def nvmlShutdown():
    pass


def nvmlDeviceGetCount():
    return len(_state()["cards"])


def nvmlDeviceGetHandleByIndex(i):
    return i


def nvmlDeviceGetName(h):
    return _state()["cards"][h]["name"]


def nvmlDeviceGetMemoryInfo(h):
    c = _state()["cards"][h]
    return _Mem(c["total_mib"] << 20, c["free_mib"] << 20)


def _running(pid):
    # like the driver: a process that has exited holds no GPU memory and is not listed
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return False
    return data[data.rfind(b")") + 2:].split()[0] not in (b"Z", b"X")


def nvmlDeviceGetComputeRunningProcesses(h):
    return [_Proc(p["pid"], p["used_mib"] << 20) for p in _state()["cards"][h].get("procs", [])
            if _running(p["pid"])]
