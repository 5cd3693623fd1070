"""A wide-area link on loopback, for the remote tests and benchmarks: a TCP
proxy in front of a loopback server (nginx, s3rver) that delays and paces
what passes through it. The kernel here has no netem.

    python3 link_sim.py --upstream 127.0.0.1:8080 --rtt-ms 25 --conn-mbit 1000 \\
        --total-mbit 10000 [--lifetime 600] [--port-file PATH]

The model, per connection:
- client to server: each chunk is delivered half a round trip after it was
  sent; the first one of a connection one round trip more (the TCP
  handshake a real connection costs before its first request);
- server to client: each chunk leaves at the connection's rate (and within
  the total rate over all connections, when set), and arrives half a
  round trip later.
So a small request on an open connection takes one RTT, on a new one two,
and n bytes take RTT + n / rate.

Counters (connections, requests, bytes each way) are served as JSON at
http://HOST:STATS_PORT/stats; /reset zeroes them. Both ports are printed on
the first line of stdout ("PORT STATS_PORT") and written to --port-file.
Only loopback addresses (127.0.0.1, ::1) are accepted, to listen on and to
forward to. The proxy ends by itself after --lifetime seconds, or when the
process that started it is gone."""
import argparse
import asyncio
import json
import os
import sys
import time

LOOPBACK = ("127.0.0.1", "::1")
CHUNK = 64 << 10  # the pacing granularity: 0.5 ms at 1 Gbit/s


class Link:
    def __init__(self, rtt_s, conn_rate, total_rate):
        self.rtt = rtt_s
        self.conn_rate = conn_rate    # bytes/s, 0 = unpaced
        self.total_rate = total_rate  # bytes/s, 0 = no cap
        self.total_free = 0.0         # when the shared link is next free
        self.reset()

    def reset(self):
        self.stats = {"connections": 0, "requests": 0, "bytes_down": 0, "bytes_up": 0, "open": 0}


async def deliver(queue, writer):
    """Writes each queued chunk at its arrival time; None ends."""
    loop = asyncio.get_running_loop()
    try:
        while True:
            item = await queue.get()
            if item is None:
                break
            when, data = item
            wait = when - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        try:
            writer.close()
        except Exception:
            pass


async def pump_up(link, reader, queue, accepted):
    """Client to server: half an RTT late; the first bytes of a connection
    no earlier than 1.5 RTT after it was accepted (the handshake's round
    trip, counted from the accept, whatever connecting upstream took).
    Requests counted by their header ends (GET and HEAD have no body)."""
    loop = asyncio.get_running_loop()
    first, tail = True, b""
    try:
        while True:
            data = await reader.read(CHUNK)
            if not data:
                break
            link.stats["bytes_up"] += len(data)
            seen = tail + data
            link.stats["requests"] += seen.count(b"\r\n\r\n")
            tail = seen[-3:]
            when = loop.time() + link.rtt / 2
            if first:
                when = max(when, accepted + 1.5 * link.rtt)
            first = False
            await queue.put((when, data))
    except (ConnectionError, OSError):
        pass
    await queue.put(None)


async def pump_down(link, reader, queue):
    """Server to client: each chunk sent at the connection's rate (and the
    shared rate), arriving half an RTT after it left."""
    loop = asyncio.get_running_loop()
    conn_free = 0.0
    try:
        while True:
            data = await reader.read(CHUNK)
            if not data:
                break
            now = loop.time()
            start = max(now, conn_free)
            if link.total_rate:
                start = max(start, link.total_free)
            done = start
            if link.conn_rate:
                conn_free = start + len(data) / link.conn_rate
                done = conn_free
            if link.total_rate:
                link.total_free = start + len(data) / link.total_rate
                done = max(done, link.total_free)
            link.stats["bytes_down"] += len(data)
            await queue.put((done + link.rtt / 2, data))
    except (ConnectionError, OSError):
        pass
    await queue.put(None)


async def handle(link, upstream, client_reader, client_writer):
    accepted = asyncio.get_running_loop().time()
    link.stats["connections"] += 1
    link.stats["open"] += 1
    try:
        server_reader, server_writer = await asyncio.open_connection(upstream[0], upstream[1], limit=CHUNK * 4)
    except OSError:
        client_writer.close()
        link.stats["open"] -= 1
        return
    up, down = asyncio.Queue(maxsize=256), asyncio.Queue(maxsize=256)
    tasks = [asyncio.create_task(pump_up(link, client_reader, up, accepted)),
             asyncio.create_task(deliver(up, server_writer)),
             asyncio.create_task(pump_down(link, server_reader, down)),
             asyncio.create_task(deliver(down, client_writer))]
    # Either side closing ends the connection.
    await asyncio.wait([tasks[1], tasks[3]], return_when=asyncio.FIRST_COMPLETED)
    for t in tasks:
        t.cancel()
    for w in (server_writer, client_writer):
        try:
            w.close()
        except Exception:
            pass
    link.stats["open"] -= 1


async def stats_server(link, reader, writer):
    try:
        line = await reader.readline()
        while (await reader.readline()) not in (b"\r\n", b"\n", b""):
            pass
        path = line.split()[1] if len(line.split()) > 1 else b"/"
        if path == b"/reset":
            link.reset()
        body = json.dumps(link.stats).encode()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        await writer.drain()
    finally:
        writer.close()


def loopback(host):
    if host not in LOOPBACK:
        raise SystemExit(f"link_sim: {host} is not a loopback address (127.0.0.1 or ::1)")
    return host


def parse_hostport(text):
    host, _, port = text.rpartition(":")
    return loopback(host.strip("[]")), int(port)


async def main(args):
    link = Link(args.rtt_ms / 1000.0, args.conn_mbit * 1e6 / 8, args.total_mbit * 1e6 / 8)
    upstream = parse_hostport(args.upstream)
    host = loopback(args.listen)
    proxy = await asyncio.start_server(lambda r, w: handle(link, upstream, r, w), host, 0, limit=CHUNK * 4)
    stats = await asyncio.start_server(lambda r, w: stats_server(link, r, w), host, 0)
    port = proxy.sockets[0].getsockname()[1]
    stats_port = stats.sockets[0].getsockname()[1]
    print(f"{port} {stats_port}", flush=True)
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write(f"{port} {stats_port}\n")
        os.replace(args.port_file + ".tmp", args.port_file)
    parent = os.getppid()
    end = time.monotonic() + args.lifetime
    while time.monotonic() < end and os.getppid() == parent:
        await asyncio.sleep(0.2)
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
        asyncio.run(main(ap.parse_args()))
    except KeyboardInterrupt:
        sys.exit(0)
