"""A wide-area link on loopback, for the remote tests and benchmarks: a TCP
proxy in front of a loopback server (nginx, s3rver) that delays and paces
what passes through it. The kernel here has no netem.

    python3 link_sim.py --upstream 127.0.0.1:8080 --rtt-ms 25 --conn-mbit 1000 \\
        --total-mbit 10000 [--lifetime 600] [--port-file PATH]

The model, per connection:
- client to server: each chunk is delivered one round trip after it was
  sent; the first one of a connection one round trip more (the TCP
  handshake a real connection costs before its first request);
- server to client: each chunk leaves at the connection's rate (and within
  the total rate over all connections, when set) and is delivered when its
  last byte has left.
So a small request on an open connection takes one RTT, on a new one two,
and n bytes take RTT + n / rate: the same as a link that spends half the
round trip each way, for a request and its answer. (The whole round trip
is spent on the way up so that the answer never waits in the proxy: its
bytes go from one socket to the other with splice(2), never copied
through Python, so the proxy moves GB/s on a busy machine instead of
~100 MB/s, and the client, not the proxy, is what a benchmark measures.)

Counters (connections, requests, bytes each way) are served as JSON at
http://HOST:STATS_PORT/stats; /reset zeroes them. /conns lists each
connection since the reset: when it was accepted, its requests, its bytes
down and when its first and last of them were delivered (seconds since
the reset), for tests that count what each connection carried. Requests are counted by
the ends of HTTP/1 headers (an HTTP/2 connection's requests are not: count
them at the server). Both ports are printed on the first line of stdout
("PORT STATS_PORT") and written to --port-file. Only loopback addresses
(127.0.0.1, ::1) are accepted, to listen on and to forward to. The proxy
ends by itself after --lifetime seconds, or when the process that started
it is gone."""
import argparse
import collections
import fcntl
import json
import os
import socket
import sys
import threading
import time

LOOPBACK = ("127.0.0.1", "::1")
F_SETPIPE_SZ = 1031
PIPE_BYTES = 1 << 20  # the most a pipe holds without privileges (pipe-max-size)
MIN_CHUNK = 64 << 10
# A chunk is what one connection sends in about this long at its rate: the
# pacing's granularity (4 ms at 1 Gbit/s is 500 KB), within 64 KiB..1 MiB.
CHUNK_SECONDS = 0.004
# A pacing thread woken late (a busy machine's run queue) sends its next
# chunks at once until it is back on schedule, if it is at most this late:
# the rate holds over a transfer instead of losing every late wakeup's
# time. A connection idle for longer starts afresh (no burst).
CATCH_UP_SECONDS = 0.020


class Link:
    def __init__(self, rtt_s, conn_rate, total_rate):
        self.rtt = rtt_s
        self.conn_rate = conn_rate    # bytes/s, 0 = unpaced
        self.total_rate = total_rate  # bytes/s, 0 = no cap
        self.total_free = 0.0         # when the shared link is next free
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        with self.lock:
            self.stats = {"connections": 0, "requests": 0, "bytes_down": 0, "bytes_up": 0, "open": 0}
            self.origin = time.monotonic()
            self.conns = []

    def record(self):
        """A new connection's record for /conns (kept until the next reset)."""
        with self.lock:
            rec = {"accepted": time.monotonic() - self.origin, "requests": 0, "bytes_down": 0,
                   "first_down": None, "last_down": None}
            self.conns.append(rec)
            return rec

    def note(self, rec, requests=0, bytes_down=0):
        with self.lock:
            rec["requests"] += requests
            if bytes_down:
                now = time.monotonic() - self.origin
                rec["bytes_down"] += bytes_down
                if rec["first_down"] is None:
                    rec["first_down"] = now
                rec["last_down"] = now

    def count(self, **kw):
        with self.lock:
            for k, v in kw.items():
                self.stats[k] += v

    def chunk(self):
        rate = self.conn_rate or self.total_rate
        if not rate:
            return PIPE_BYTES
        return max(MIN_CHUNK, min(PIPE_BYTES, int(rate * CHUNK_SECONDS)))

    def schedule(self, now, conn_free, n):
        """When n bytes offered at `now` on a connection free from
        `conn_free` on have left: the shared link's share taken under its
        lock. Each schedule continues from where the last left off when it
        is at most CATCH_UP_SECONDS in the past (a late wakeup, not idle
        time)."""
        start = caught_up(now, conn_free)
        done = start
        if self.conn_rate:
            done = start + n / self.conn_rate
        if self.total_rate:
            with self.lock:
                begin = max(start, caught_up(now, self.total_free))
                self.total_free = begin + n / self.total_rate
                done = max(done, self.total_free)
        return done


def caught_up(now, free):
    return free if free >= now - CATCH_UP_SECONDS else now


def sleep_until(when):
    wait = when - time.monotonic()
    if wait > 0:
        time.sleep(wait)


def shut(*socks):
    for s in socks:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class Connection:
    """One client connection and its upstream one; three threads: the
    client's bytes read (timestamped), the same delivered upstream a round
    trip later, and the server's bytes paced back by splice."""

    def __init__(self, link, client, upstream):
        self.link = link
        self.client = client
        self.accepted = time.monotonic()
        self.server = socket.create_connection(upstream)
        for s in (self.client, self.server):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.up = collections.deque()
        self.up_ready = threading.Condition()
        self.up_done = False
        self.finished = 0
        self.finish_lock = threading.Lock()

    def start(self):
        self.link.count(connections=1, open=1)
        self.rec = self.link.record()
        for target in (self.read_up, self.write_up, self.pump_down):
            threading.Thread(target=target, daemon=True).start()

    def finish(self):
        """Either side closing ends the connection; the last thread out
        closes the sockets."""
        shut(self.client, self.server)
        with self.up_ready:
            self.up_done = True
            self.up_ready.notify()
        with self.finish_lock:
            self.finished += 1
            last = self.finished == 3
        if last:
            self.client.close()
            self.server.close()
            self.link.count(open=-1)

    def read_up(self):
        """Client to server: each chunk due one RTT after it came; the first
        of the connection no earlier than 2 RTT after the accept (the
        handshake's round trip). Requests counted by their header ends."""
        first, tail = True, b""
        try:
            while True:
                data = self.client.recv(1 << 16)
                if not data:
                    break
                seen = tail + data
                self.link.count(bytes_up=len(data), requests=seen.count(b"\r\n\r\n"))
                self.link.note(self.rec, requests=seen.count(b"\r\n\r\n"))
                tail = seen[-3:]
                when = time.monotonic() + self.link.rtt
                if first:
                    when = max(when, self.accepted + 2 * self.link.rtt)
                first = False
                with self.up_ready:
                    self.up.append((when, data))
                    self.up_ready.notify()
        except OSError:
            pass
        self.finish()

    def write_up(self):
        try:
            while True:
                with self.up_ready:
                    while not self.up and not self.up_done:
                        self.up_ready.wait()
                    if not self.up:
                        break
                    when, data = self.up.popleft()
                sleep_until(when)
                self.server.sendall(data)
        except OSError:
            pass
        self.finish()

    def pump_down(self):
        """Server to client: each chunk taken into a pipe (no copy), held
        until the connection's rate (and the shared one) has let it leave,
        then spliced to the client."""
        link = self.link
        chunk = link.chunk()
        pr, pw = os.pipe()
        try:
            try:
                fcntl.fcntl(pw, F_SETPIPE_SZ, PIPE_BYTES)
            except OSError:
                chunk = min(chunk, MIN_CHUNK)
            src, dst = self.server.fileno(), self.client.fileno()
            conn_free = 0.0
            while True:
                n = os.splice(src, pw, chunk)
                if n == 0:
                    break
                now = time.monotonic()
                done = link.schedule(now, conn_free, n)
                conn_free = done if link.conn_rate else now
                link.count(bytes_down=n)
                sleep_until(done)
                sent = n
                while n:
                    n -= os.splice(pr, dst, n)
                link.note(self.rec, bytes_down=sent)
        except OSError:
            pass
        finally:
            os.close(pr)
            os.close(pw)
            self.finish()


def accept_loop(link, listener, upstream):
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        try:
            Connection(link, client, upstream).start()
        except OSError:
            client.close()


def stats_loop(link, listener):
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        try:
            conn.settimeout(5)
            f = conn.makefile("rb")
            line = f.readline()
            while f.readline() not in (b"\r\n", b"\n", b""):
                pass
            path = line.split()[1] if len(line.split()) > 1 else b"/"
            if path == b"/reset":
                link.reset()
            with link.lock:
                body = json.dumps(link.conns if path == b"/conns" else link.stats).encode()
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                         b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        except OSError:
            pass
        finally:
            conn.close()


def loopback(host):
    if host not in LOOPBACK:
        raise SystemExit(f"link_sim: {host} is not a loopback address (127.0.0.1 or ::1)")
    return host


def parse_hostport(text):
    host, _, port = text.rpartition(":")
    return loopback(host.strip("[]")), int(port)


def listen(host):
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, 0))
    s.listen(256)
    return s


def main(args):
    link = Link(args.rtt_ms / 1000.0, args.conn_mbit * 1e6 / 8, args.total_mbit * 1e6 / 8)
    upstream = parse_hostport(args.upstream)
    host = loopback(args.listen)
    proxy, stats = listen(host), listen(host)
    port, stats_port = proxy.getsockname()[1], stats.getsockname()[1]
    threading.Thread(target=accept_loop, args=(link, proxy, upstream), daemon=True).start()
    threading.Thread(target=stats_loop, args=(link, stats), daemon=True).start()
    print(f"{port} {stats_port}", flush=True)
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write(f"{port} {stats_port}\n")
        os.replace(args.port_file + ".tmp", args.port_file)
    parent = os.getppid()
    end = time.monotonic() + args.lifetime
    while time.monotonic() < end and os.getppid() == parent:
        time.sleep(0.2)
    proxy.close()
    stats.close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--upstream", required=True, help="HOST:PORT of the loopback server")
    ap.add_argument("--listen", default="127.0.0.1")
    ap.add_argument("--rtt-ms", type=float, default=25.0)
    ap.add_argument("--conn-mbit", type=float, default=0.0, help="per-connection rate, Mbit/s (0 = unpaced)")
    ap.add_argument("--total-mbit", type=float, default=0.0, help="cap over all connections, Mbit/s (0 = none)")
    ap.add_argument("--lifetime", type=float, default=600.0, help="seconds before the proxy ends by itself")
    ap.add_argument("--port-file")
    try:
        main(ap.parse_args())
    except KeyboardInterrupt:
        pass
    sys.stdout.flush()
    os._exit(0)  # connection threads are daemons: nothing to wait for
