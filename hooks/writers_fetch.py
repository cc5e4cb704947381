"""The writers' parsers for curl and wget (hooks/shell_writers.py dispatches here): the files named by
their options and the default output name taken from the URL (``curl -O``, ``wget URL``).

Imported on the first such command only. Parsing only: the guards judge the targets.
"""
from __future__ import annotations

from swarmgate.hooks.shell_writers import in_dir, parse_args
from swarmgate.hooks.writer_table import Target

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.hooks.bash_results import SimpleCommand


def _url_name(url: str) -> str:
    path = url.split("?", 1)[0].split("#", 1)[0]
    if "://" in path:
        path = path.split("://", 1)[1]
        path = path.split("/", 1)[1] if "/" in path else ""
    return path.rstrip("/").rsplit("/", 1)[-1] if path.strip("/") else ""


def curl(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    values = {"-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--output-dir", "--trace",
              "--trace-ascii", "--stderr", "--libcurl", "-K", "--config", "-d", "--data", "--data-binary",
              "--data-raw", "--data-urlencode", "-H", "--header", "-X", "--request", "-u", "--user", "-A",
              "--user-agent", "-e", "--referer", "-b", "--cookie", "-F", "--form", "-x", "--proxy", "--cert",
              "--key", "--cacert", "--resolve", "--connect-to", "-m", "--max-time", "--connect-timeout",
              "-w", "--write-out", "-T", "--upload-file", "--retry", "-r", "--range", "-Y", "-y", "-z",
              "--time-cond", "--limit-rate", "--url", "-E", "--interface", "--retry-delay", "--retry-max-time"}
    opts, ops = parse_args(args, values)
    names = {o for o, _ in opts}
    odir = next((v for o, v in opts if o == "--output-dir" and v), "")
    out = [Target(in_dir(odir, v), f"`curl {o} {v}`") for o, v in opts
           if o in ("-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii",
                    "--stderr", "--libcurl") and v and v != "-"]
    urls = ops + [v for o, v in opts if o == "--url" and v]
    if names & {"-O", "--remote-name", "--remote-name-all"}:
        for u in urls:
            n = _url_name(u)
            if n:
                out.append(Target(in_dir(odir, n), f"`curl -O {u}` writes {n}"))
    return out


def wget(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    values = {"-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "-P",
              "--directory-prefix", "-i", "--input-file", "-t", "--tries", "-T", "--timeout", "-w", "--wait",
              "-U", "--user-agent", "--user", "--password", "--header", "-e", "--execute", "-l", "--level",
              "--limit-rate", "-Q", "--quota", "-B", "--base", "--post-data", "--post-file", "--load-cookies",
              "--save-cookies", "--referer", "--accept", "-A", "-R", "--reject", "-D", "--domains",
              "--exclude-domains", "-I", "-X", "--cut-dirs", "--ca-certificate", "--certificate",
              "--private-key", "--bind-address"}
    opts, ops = parse_args(args, values)
    names = {o for o, _ in opts}
    if names & {"--spider"}:
        return []
    d = next((v for o, v in opts if o in ("-P", "--directory-prefix") and v), "")
    out = [Target(v, f"`wget {o} {v}`") for o, v in opts
           if o in ("-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "--save-cookies")
           and v and v != "-"]
    if names & {"-r", "--recursive", "-m", "--mirror", "-p", "--page-requisites"}:
        out.append(Target(d or ".", f"`wget` mirrors into {d or '.'}", tree=True))
    elif not any(o in ("-O", "--output-document") for o, _ in opts):
        for u in ops:
            n = _url_name(u) or "index.html"
            out.append(Target(in_dir(d, n), f"`wget {u}` writes {n}"))
    return out
