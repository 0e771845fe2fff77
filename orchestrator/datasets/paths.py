"""Safe media path resolution, shared by every dataset format.

A dataset row names its media relative to the folder holding the rows. Such a name must never
reach outside that folder (`../x.png`, `/etc/passwd`, a symlink to elsewhere): the files are
pushed to devices, so an escaping name would ship arbitrary host files to a phone.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from .types import Problem

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")  # http:, data:, file:, C: (Windows drive)


def media_name_problem(name: object) -> str | None:
    """Why `name` is not an acceptable relative media name, or None if its shape is fine (pure)."""
    if not isinstance(name, str):
        return f"media name must be a string, got {type(name).__name__}"
    if not name.strip():
        return "media name is empty"
    if "\x00" in name:
        return "media name contains a NUL byte"
    if "\\" in name:
        return f"media name {name!r} uses backslashes; write it with '/' (e.g. images/x.png)"
    if name.startswith(("/", "~")):
        return f"media name {name!r} is absolute; write it relative to the dataset folder"
    if _URL.match(name):
        return f"media name {name!r} is a URL or drive path; give a file relative to the dataset folder"
    return None


def resolve_media(
    root: Path, name: object, *, where: str, test_id: str = "", field: str = ""
) -> Path | Problem:
    """Resolve a media `name` against `root`: an absolute path inside root, or a Problem saying why not.

    Symlinks are followed before the containment check, so a link that points outside `root`
    is refused just like `../x`.
    """

    def problem(message: str) -> Problem:
        return Problem(where=where, message=message, test_id=test_id, field=field)

    shape = media_name_problem(name)
    if shape:
        return problem(shape)
    name = str(name)  # media_name_problem accepted it, so it is a str
    root_abs = root.resolve()
    candidate = root_abs.joinpath(*PurePosixPath(name).parts)
    try:
        resolved = candidate.resolve(strict=False)
    except (OSError, RuntimeError) as e:  # symlink loop
        return problem(f"media {name!r} cannot be resolved: {e}")
    if not resolved.is_relative_to(root_abs):
        how = "" if ".." in PurePosixPath(name).parts else "through a symlink "
        return problem(
            f"media {name!r} points {how}outside the dataset folder {root_abs} (to {resolved}); "
            "copy the file into the dataset folder and name it relative to it"
        )
    if not resolved.exists():
        return problem(f"media file {name!r} not found (looked for {resolved})")
    if not resolved.is_file():
        return problem(f"media {name!r} is not a regular file ({resolved})")
    return resolved
