"""`edgefarm serve`: the farm as an OpenAI-compatible endpoint (docs/serve.md). The flags, checked; the
rest (devices, engines, the HTTP server, the drain on Ctrl-C) is serve/run.py."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

import click

from android_runner.backend import BACKENDS
from android_runner.status import DEFAULT_MAX_OUTPUT_TOKENS, DEFAULT_SAMPLE_TIMEOUT_S

from ..errors import ConfigError
from .options import BackendList, devices_option, inventory_option, model_option

MB = 2**20
# What one request may hold: flag, its range, Bounds field (serve/api.py: its default), scale, help
BOUND_FLAGS = (
    ("--body-max-mb", click.FloatRange(0.001, 1024), "body_max_bytes", MB, "largest request body (MB; over it: 413)"),
    ("--media-max-mb", click.FloatRange(0.001, 1024), "media_max_bytes", MB,
     "largest image or audio clip of a request, decoded (MB; over it: 413)"),
    ("--media-max", click.IntRange(0, 256), "media_max", 1, "images and audio clips in one request"),
    ("--messages-max", click.IntRange(1, 4096), "messages_max", 1, "messages in one request"),
    ("--max-tokens-max", click.IntRange(1, 1_048_576), "max_tokens_max", 1, "the largest max_tokens a request may ask"),
    ("--text-max-chars", click.IntRange(1, 100_000_000), "text_max_chars", 1, "all text of one request (characters)"),
)  # fmt: skip


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bound_options(f):
    from ..serve.api import Bounds

    for flag, kind, field, scale, help_text in reversed(BOUND_FLAGS):
        default = getattr(Bounds(), field) / scale
        f = click.option(flag, field, type=kind, default=default if scale != 1 else int(default),
                         show_default=True, help=help_text)(f)  # fmt: skip
    return f


@click.command("serve")
@devices_option("all | local | NAME[,NAME...]: each device is a model id DEVICE/BACKEND")
@inventory_option
@model_option(".litertlm model file, loaded once per device for the server's life")
@click.option("--backend", type=BackendList(), default=None,
              help="backend for every device (default: each device's devices.yaml backends/backend, else cpu); "
              f"several, comma-separated ({','.join(BACKENDS)}): each device is a model per backend, DEVICE/BACKEND")
@click.option("--threads", type=click.IntRange(1, 256), default=None, help="runtime CPU threads")
@click.option("--max-num-tokens", type=click.IntRange(16, 1_048_576), default=None,
              help="the runtime's token limit (KV cache; default: the model's)")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="address to listen on; anything but loopback needs --api-key")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@click.option("--api-key", default=lambda: os.environ.get("EDGEFARM_API_KEY"),
              help="clients send `Authorization: Bearer KEY` (default: $EDGEFARM_API_KEY)")
@click.option("--allow-http-images", "allow_http", is_flag=True,
              help="fetch image_url http(s) URLs (default: data: URLs only)")
@click.option("--out", type=click.Path(path_type=Path), default=Path("runs"), show_default=True,
              help="folder that receives the session's run folder")
@click.option("--db", default=None, help="results database (default: history's; `none`: not recorded)")
@click.option("--sample-timeout-s", type=click.FloatRange(1, 86400), default=DEFAULT_SAMPLE_TIMEOUT_S,
              show_default=True, help="one request's longest answer on a device; then 504 and the runner restarts")
@click.option("--queue-max", type=click.IntRange(1, 10_000), default=64, show_default=True,
              help="requests waiting for one device; more are refused with 503")
@bound_options
def serve(host: str, api_key: str | None, **flags) -> None:
    """Serve every selected device as an OpenAI-compatible endpoint: GET /v1/models, POST
    /v1/chat/completions and /v1/completions; each answer says which device answered and how fast."""
    from ..serve.api import Bounds
    from ..serve.run import ServeRequest, run_server

    if not _loopback(host) and not api_key:
        raise ConfigError(f"--host {host} would open the farm to the network without a key", where="--host",
                          fix="pass --api-key KEY (or set EDGEFARM_API_KEY), or keep --host 127.0.0.1")  # fmt: skip
    sizes = {field: round(flags.pop(field) * scale) for _, _, field, scale, _ in BOUND_FLAGS}
    bounds = Bounds(**sizes, default_max_tokens=min(DEFAULT_MAX_OUTPUT_TOKENS, sizes["max_tokens_max"]))
    raise SystemExit(run_server(ServeRequest(host=host, api_key=api_key or "", bounds=bounds, **flags)))
