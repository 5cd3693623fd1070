"""How a path or URL is shown in a repr or a message (docs/remote.md,
"Security"): the rule of the library's src/util/redact_url.h, which every
library message and every `zt` message and JSON field follows. For an
http(s):// URL, "user:password@" becomes "<credentials>@", a query string
becomes "?<redacted>" and a fragment is dropped; for s3:// only "...@" in
the bucket part goes (the key is literal and may hold '?' or '#'); anything
else is shown as it is. Any scheme counts ("ftp://", "file://"), not only
the ones the library reads. tests/test_redaction.py checks this against the
library's own messages."""
import re

# "scheme://" of two or more characters (one letter is a Windows drive).
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]+://")


def redact_url(path_or_url: str) -> str:
    """`path_or_url` with any credential a URL may carry replaced by a placeholder."""
    if not _URL.match(path_or_url):
        return path_or_url
    u = path_or_url
    if not path_or_url[:5].lower() == "s3://":
        cut = [i for i in (u.find("?"), u.find("#")) if i >= 0]
        if cut:
            q = min(cut)
            u = u[:q] + ("?<redacted>" if u[q] == "?" else "")
    auth = u.find("://") + 3
    slash = u.find("/", auth)
    end = len(u) if slash < 0 else slash
    at = u.rfind("@", auth, end)  # the last '@' before the path ends the user information
    if at >= 0:
        u = u[:auth] + "<credentials>@" + u[at + 1:]
    return u
