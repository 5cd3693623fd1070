"""How a path or URL is shown in a repr or a message (docs/remote.md,
"Security"): the library's own rule (zt_redact_url, src/util/redact_url.h),
which every library message and every `zt` message and JSON field follows.
For an http(s):// URL, "user:password@" becomes "<credentials>@", a query
string becomes "?<redacted>" and a fragment is dropped; for s3:// only
"...@" in the bucket part goes (the key is literal and may hold '?' or '#');
anything else is shown as it is. tests/test_redaction.py checks this
against the library's messages."""
import os
from ctypes import byref, c_size_t, create_string_buffer

from ._lib import lib


def redact_url(path_or_url: str) -> str:
    """`path_or_url` with any credential a URL may carry replaced by a placeholder."""
    raw = os.fsencode(path_or_url)
    need = c_size_t()
    # Redaction grows a URL by at most its two placeholders: one call, so
    # that no size query replaces the thread's last error (this runs while
    # messages about another failure are being built).
    buf = create_string_buffer(len(raw) + 64)
    status = lib.zt_redact_url(raw, len(raw), buf, len(buf), byref(need))
    if status != 0:
        raise RuntimeError(f"zt_redact_url failed ({status})")
    return os.fsdecode(buf.raw[:need.value])
