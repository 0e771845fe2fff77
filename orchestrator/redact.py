"""Secrets never written: the one redaction applied wherever a flag, URL or setting is written or shown.

`redact("http://user:PW@host/v1?api_key=KEY")` -> `http://user:***@host/v1?api_key=***`: the password
of a URL's userinfo, and the value of every query parameter or `name=value` setting whose name says
it is a secret (api_key, token, password, secret, ...). Pure; the redacted text keeps its shape, so a
reader still sees which URL and which parameter was used (issue 24).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

MASK = "***"
# names of settings that hold a secret, as whole words of a parameter name (api_key, x-api-key,
# access_token, client_secret, passwd, sig); matched case-insensitively
_SECRET_NAME = r"(?:[A-Za-z0-9_.-]*[_.-])?(?:api[_-]?key|apikey|key|token|access[_-]?token|secret|password|passwd|pwd|auth|authorization|sig|signature|credential|credentials)"
# scheme://user:password@  (the password is everything up to the last @ before the path)
_USERINFO = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^/?#\s:@]*:)(?P<secret>[^/?#\s]*)(?=@)")
# name=value in a query string, a cookie-like setting or an env-like line
_SETTING = re.compile(rf"(?P<head>(?:^|[?&;,\s]){_SECRET_NAME}=)(?P<secret>[^&#;,\s]+)", re.IGNORECASE)
# Authorization: Bearer xxx / Basic xxx
_BEARER = re.compile(r"(?P<head>\b(?:Bearer|Basic)\s+)(?P<secret>[A-Za-z0-9._~+/=-]{8,})")


def redact(text: str) -> str:
    """`text` with every secret replaced by `***` (see the module doc)."""
    if not text:
        return text
    out = _USERINFO.sub(lambda m: m["head"] + MASK, text)
    out = _SETTING.sub(lambda m: m["head"] + MASK, out)
    return _BEARER.sub(lambda m: m["head"] + MASK, out)


def redact_tree(value: Any) -> Any:
    """`redact` applied to every string in a JSON-like value (keys kept)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {k: redact_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_tree(v) for v in value]
    return value


def is_redacted(text: Any) -> bool:
    """True when `text` is a string `redact` changed (it held a secret)."""
    return isinstance(text, str) and redact(text) != text
