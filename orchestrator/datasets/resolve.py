"""Turn what the user typed (`--dataset D`) into a loaded Dataset: local path or hub id, any format."""

from __future__ import annotations

import dataclasses
import re
import shlex
from pathlib import Path

from ..errors import DatasetError
from .formats import FORMATS
from .types import Dataset

# `owner/name` as the Hugging Face Hub spells repository ids.
HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
HUB_ETAG_TIMEOUT_S = 10.0


def load_dataset(
    spec: str | Path,
    *,
    format: str | None = None,
    subset: str | None = None,
    hub_cache: Path | None = None,
) -> Dataset:
    """Load `spec` (a local file/folder, else a hub dataset id) with `format` or the first that detects it.

    The returned Dataset carries every problem found; use `require_valid` to refuse a broken one.
    """
    path = Path(spec).expanduser()
    hub_id = None
    if not path.exists():
        if not (isinstance(spec, str) and HUB_ID.match(spec)):
            raise DatasetError(
                f"no such file or folder: {spec}",
                fix="check the path, or give a hub dataset id like CortexSwarm/EdgeMMEval",
                where=str(spec),
            )
        hub_id = spec
        path = download(spec, cache_dir=hub_cache)
    dataset = _load_checked(path, format, subset)
    return dataclasses.replace(dataset, name=hub_id) if hub_id else dataset


def _load_checked(path: Path, format: str | None, subset: str | None) -> Dataset:
    return pick_format(path, format).load(path, subset)


def pick_format(path: Path, format: str | None = None):
    """The named format, or the first registered format whose `detect` accepts `path`."""
    if format is not None:
        return FORMATS.get(format)
    for name in FORMATS:
        if FORMATS.get(name).detect(path):
            return FORMATS.get(name)
    raise DatasetError(
        f"{path} is not in any known dataset format",
        fix=f"pass --format with one of: {', '.join(FORMATS.names())}, "
        "or point at the folder holding the rows (e.g. data/test/metadata.jsonl)",
        where=str(path),
    )


def download(repo_id: str, *, cache_dir: Path | None = None) -> Path:
    """Fetch a dataset snapshot from the Hugging Face Hub (or its local cache); fail fast offline."""
    fix = (
        f"download it where there is a network (`hf download {shlex.quote(repo_id)} --repo-type dataset "
        "--local-dir DIR`), copy DIR here and pass DIR; or check the id"
    )
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError, RepositoryNotFoundError
    except ImportError as e:
        raise DatasetError(
            f"{repo_id!r} is not a local path, and huggingface_hub is not installed to fetch it",
            fix="pip install 'edgefarm[hub]', or download the dataset elsewhere and pass its folder",
            where=repo_id,
        ) from e
    try:
        local = snapshot_download(
            repo_id,
            repo_type="dataset",
            cache_dir=str(cache_dir) if cache_dir else None,
            etag_timeout=HUB_ETAG_TIMEOUT_S,
        )
    except RepositoryNotFoundError as e:
        raise DatasetError(
            f"{repo_id!r} is neither a local path nor a dataset on the Hugging Face Hub "
            "(or it is private and no token is set)",
            fix="check the path or id; for a private dataset run `hf auth login` first",
            where=repo_id,
        ) from e
    except (HfHubHTTPError, OSError, ValueError) as e:
        # Offline: LocalEntryNotFoundError (an OSError) when nothing is cached; other HTTP trouble.
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        why = "no network and not in the local hub cache" if isinstance(e, LocalEntryNotFoundError) else first
        raise DatasetError(
            f"{repo_id!r} is not a local path, and it could not be fetched from the Hugging Face Hub ({why})",
            fix=fix,
            where=repo_id,
        ) from e
    return Path(local)
