"""zt verify decodes a zstd frame shared by many objects once, even when
each object declares a different decoded size: from n to 8n such objects
the time may not grow with n (a decode per object grew it ~8x; 200 objects
on one 155 KB file took over a minute). Ratios within one run, not seconds."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rawzt  # noqa: E402
import ztcli  # noqa: E402
from ztcli import ZT  # noqa: E402

FRAME = 256 << 20  # decoded bytes of the shared frame: its decode dominates
N = 16
# One decode for any n gives ~1; one per object gives ~8.
MAX_GROWTH = 3.0


def best_seconds(args, reps=3):
    best = 1e30
    for _ in range(reps):
        t = time.perf_counter()
        p = subprocess.run([ZT, *args], capture_output=True)
        best = min(best, time.perf_counter() - t)
        assert p.returncode >= 0, p.stderr
    return best


class SharedFrameDeclaredSizes(ztcli.TmpCase):
    def test_verify_decodes_the_frame_once(self):
        frame = rawzt.zstd_zeros(FRAME)
        times = []
        for n in (N, 8 * N):
            f = self.path("shared%d.zt" % n)
            # Object i declares FRAME + 64 i bytes: only o0 is right; the
            # others are each reported.
            rawzt.build(f, [frame], {
                "o%d" % i: {"shape": [FRAME + 64 * i], "format": "dense", "components": {
                    "data": {"dtype": "u8", "encoding": "zstd", "uncompressed_length": FRAME + 64 * i, "blob": 0}}}
                for i in range(n)})
            p = subprocess.run([ZT, "verify", f], capture_output=True, text=True)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertEqual(p.stdout.count("FAIL"), n - 1)
            self.assertIn("object 'o%d', component 'data': zstd data decodes to %d bytes, but %d are declared"
                          % (n - 1, FRAME, FRAME + 64 * (n - 1)), p.stdout)
            times.append(best_seconds(["verify", "--quiet", f]))
        print("zt verify, one %d MiB frame shared by %d / %d objects of different declared sizes: %.3fs -> %.3fs (x%.1f)"
              % (FRAME >> 20, N, 8 * N, times[0], times[1], times[1] / times[0]))
        self.assertLess(times[1] / times[0], MAX_GROWTH, "verify decodes a shared frame once per object")


if __name__ == "__main__":
    import unittest
    unittest.main(verbosity=2)
