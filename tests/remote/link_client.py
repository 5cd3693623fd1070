"""Starting and reading tests/remote/link_sim.py from a test or a benchmark:
the proxy runs in its own process (its pacing must not wait on the
caller's GIL) and is stopped by stop(), or by itself after its lifetime."""
import json
import os
import subprocess
import sys
import time
import urllib.request

here = os.path.dirname(os.path.abspath(__file__))


class LinkSim:
    def __init__(self, upstream_port, rtt_ms, conn_mbit=0.0, total_mbit=0.0, lifetime=600.0):
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(here, "link_sim.py"), "--upstream", f"127.0.0.1:{upstream_port}",
             "--rtt-ms", str(rtt_ms), "--conn-mbit", str(conn_mbit), "--total-mbit", str(total_mbit),
             "--lifetime", str(lifetime)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = self.proc.stdout.readline().split()
        if len(line) != 2:
            raise RuntimeError("link_sim did not start: " + self.proc.stderr.read().decode(errors="replace"))
        self.port, self.stats_port = int(line[0]), int(line[1])
        self.rtt = rtt_ms / 1000.0

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    def _get(self, path):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.stats_port}{path}", timeout=10) as r:
            return json.loads(r.read())

    def stats(self):
        return self._get("/stats")

    def conns(self):
        """Each connection since the last reset (link_sim.py's /conns)."""
        return self._get("/conns")

    def reset(self):
        return self._get("/reset")

    def settle(self, timeout=5.0):
        """Waits until no connection is open (the counters are final)."""
        end = time.time() + timeout
        while time.time() < end and self.stats()["open"]:
            time.sleep(0.02)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
