"""zt convert stays O(n log n) in the number of metadata keys of its inputs:
growth from n to 8n keys is compared with an input of the same sizes whose
metadata is one key (same bytes), in the same run. Ratios, not seconds."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ztcli  # noqa: E402
from ztcli import GGUF_STRING, ZT, gguf_bytes, safetensors_bytes  # noqa: E402

# Process start-up flattens the one-key growth, so the bound is looser than
# the core suite's; a quadratic parser shows an excess of 15 or more.
MAX_EXCESS = 4.0


def best_seconds(args, reps=3):
    best = 1e30
    for _ in range(reps):
        t = time.perf_counter()
        subprocess.run([ZT, *args], check=True, capture_output=True)
        best = min(best, time.perf_counter() - t)
    return best


class ConvertMetadataComplexity(ztcli.TmpCase):
    def growth(self, make, n):
        times = []
        for count in (n, 8 * n):
            src = make(count)
            times.append(best_seconds(["convert", src, "-o", self.path("out.zt"), "--no-sync", "--quiet"]))
        return times[1] / times[0], times

    def check(self, what, hostile, benign, n):
        gh, th = self.growth(hostile, n)
        gb, tb = self.growth(benign, n)
        print("%s: many keys %.3fs -> %.3fs (x%.1f); one key %.3fs -> %.3fs (x%.1f); excess %.2f"
              % (what, th[0], th[1], gh, tb[0], tb[1], gb, gh / gb))
        self.assertLess(gh / gb, MAX_EXCESS, "%s: convert grows faster than n log n in metadata keys" % what)

    def test_safetensors_metadata_keys(self):
        def many(n):
            p = self.path("many%d.safetensors" % n)
            with open(p, "wb") as f:
                f.write(safetensors_bytes([], {"key%07d" % i: "v" for i in range(n)}))
            return p

        def one(n):
            p = self.path("one%d.safetensors" % n)
            with open(p, "wb") as f:
                f.write(safetensors_bytes([], {"key": "v" * (n * len('"key0000000": "v", '))}))
            return p

        self.check("safetensors __metadata__", many, one, 8192)

    def test_gguf_metadata_keys(self):
        def many(n):
            p = self.path("many%d.gguf" % n)
            with open(p, "wb") as f:
                f.write(gguf_bytes([("key%07d" % i, GGUF_STRING, "v") for i in range(n)], []))
            return p

        def one(n):
            p = self.path("one%d.gguf" % n)
            with open(p, "wb") as f:
                f.write(gguf_bytes([("key", GGUF_STRING, "v" * (n * 20))], []))
            return p

        self.check("GGUF key/values", many, one, 8192)


if __name__ == "__main__":
    import unittest
    unittest.main()
