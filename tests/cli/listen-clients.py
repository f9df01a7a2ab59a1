#!/usr/bin/env python3
# Clients for tests/cli/run-agent-listen.sh: idle sockets, a slowloris,
# many pulls, a pull whose client leaves, connections past the limit;
# and a recorder backend that logs each request's target.  Real sockets
# on 127.0.0.1; every wait is bounded.
import http.server, os, select, socket, sys, time


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    return s


def get(port, path, timeout=10):
    """(status, body) of GET path, or (None, error)."""
    try:
        s = connect(port)
        s.settimeout(timeout)
        s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                   % path).encode())
        data = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
        s.close()
        head, _, body = data.partition(b"\r\n\r\n")
        return int(head.split()[1]), body
    except Exception as e:
        return None, str(e)


def metric(port, name):
    st, body = get(port, "/metrics")
    if st != 200:
        return None
    for line in body.decode().splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == name:
            return float(f[1])
    return None


def healthz(port, n=10):
    ok = 0
    for _ in range(n):
        st, body = get(port, "/healthz")
        ok += st == 200 and body == b"ok\n"
    return ok


def closed_by_peer(s):
    """True once the server closed s (EOF or reset); s is non-blocking."""
    try:
        b = s.recv(4096)
        return b == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def wait_closed(socks, limit):
    t0 = time.monotonic()
    open_ = list(socks)
    while open_ and time.monotonic() - t0 < limit:
        r, _, _ = select.select(open_, [], [], 0.5)
        for s in r:
            if closed_by_peer(s):
                open_.remove(s)
    return len(socks) - len(open_), time.monotonic() - t0


def idle(port, n, wait):
    socks = [connect(port) for _ in range(n)]
    for s in socks:
        s.setblocking(False)
    ok = healthz(port)
    print("healthz %d/10 with %d idle sockets held" % (ok, n))
    if wait:
        c, t = wait_closed(socks, wait)
        print("closed %d/%d by the agent in %.1f s" % (c, n, t))
    for s in socks:
        s.close()


def slowloris(port, n, limit):
    socks = []
    for _ in range(n):
        s = connect(port)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        s.setblocking(False)
        socks.append(s)
    t0 = time.monotonic()
    open_ = list(socks)
    ok = -1
    while open_ and time.monotonic() - t0 < limit:
        for s in list(open_):
            if closed_by_peer(s):
                open_.remove(s)
                continue
            try:
                s.send(b"X-a: b\r\n")
            except OSError:
                open_.remove(s)
        if ok < 0 and time.monotonic() - t0 >= 1:
            ok = healthz(port)      # while every socket trickles
        time.sleep(0.5)
    print("healthz %d/10 during the slowloris" % max(ok, 0))
    print("closed %d/%d by the agent in %.1f s" %
          (n - len(open_), n, time.monotonic() - t0))
    for s in socks:
        s.close()


def pulls(port, n, want_answers, seconds):
    socks = []
    for _ in range(n):
        s = connect(port)
        s.sendall(("GET /debug/pprof/profile?seconds=%d HTTP/1.1\r\nHost: x\r\n"
                   "Connection: close\r\n\r\n" % seconds).encode())
        s.setblocking(False)
        socks.append(s)
    status = {}
    reset = 0
    buf = {s: b"" for s in socks}
    t0 = time.monotonic()
    pending = list(socks)
    while len(status) + reset < want_answers and time.monotonic() - t0 < 60:
        r, _, _ = select.select(pending, [], [], 0.5)
        for s in r:
            try:
                b = s.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                reset += 1
                pending.remove(s)
                continue
            buf[s] += b
            if b"\r\n" in buf[s]:
                status[s] = int(buf[s].split()[1])
                pending.remove(s)
            elif not b:
                reset += 1
                pending.remove(s)
    n503 = sum(1 for v in status.values() if v == 503)
    print("answers: %d 503, %d other, %d reset, %d waiting" %
          (n503, len(status) - n503, reset, len(pending)))
    print("healthz %d/10 while the pulls wait" % healthz(port))
    print("metrics: pulls_waiting=%s pulls_refused=%s" %
          (metric(port, "sfprof_agent_pulls_waiting"),
           metric(port, "sfprof_agent_pulls_refused_total")))
    for s in pending:
        s.close()
    t0 = time.monotonic()
    while time.monotonic() - t0 < 60:
        if metric(port, "sfprof_agent_pulls_open") == 0 and \
           metric(port, "sfprof_agent_pulls_waiting") == 0:
            break
        time.sleep(0.2)
    print("after closing them: pulls_open=%s pulls_waiting=%s abandoned=%s"
          % (metric(port, "sfprof_agent_pulls_open"),
             metric(port, "sfprof_agent_pulls_waiting"),
             metric(port, "sfprof_agent_pulls_abandoned_total")))
    for s in socks:
        s.close()


def abandon(port, seconds):
    s = connect(port)
    s.sendall(("GET /debug/pprof/profile?seconds=%d HTTP/1.1\r\nHost: x\r\n\r\n"
               % seconds).encode())
    t0 = time.monotonic()
    while metric(port, "sfprof_agent_pulls_open") != 1 and \
            time.monotonic() - t0 < 60:
        time.sleep(0.2)
    print("pulls_open=%s before the client leaves" %
          metric(port, "sfprof_agent_pulls_open"))
    s.close()
    t0 = time.monotonic()
    while metric(port, "sfprof_agent_pulls_open") != 0 and \
            time.monotonic() - t0 < 30:
        time.sleep(0.2)
    print("pulls_open=%s abandoned=%s after it left" %
          (metric(port, "sfprof_agent_pulls_open"),
           metric(port, "sfprof_agent_pulls_abandoned_total")))


def refuse(port, n):
    socks = [connect(port) for _ in range(n)]
    for s in socks:
        s.setblocking(False)
    # the refused ones are closed at accept; the others stay open
    # until the agent's --listen-timeout (longer than this wait)
    c, _ = wait_closed(socks, 3)
    print("closed at once %d/%d" % (c, n))
    for s in socks:
        s.close()


def recorder(port_file, log):
    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with open(log, "a") as f:
                f.write("POST %s\n" % self.path)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    with open(port_file + ".tmp", "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(port_file + ".tmp", port_file)
    srv.serve_forever()


if __name__ == "__main__":
    cmd, a = sys.argv[1], sys.argv[2:]
    if cmd == "recorder":
        recorder(a[0], a[1])
    elif cmd == "idle":
        idle(int(a[0]), int(a[1]), float(a[2]))
    elif cmd == "slowloris":
        slowloris(int(a[0]), int(a[1]), float(a[2]))
    elif cmd == "pulls":
        pulls(int(a[0]), int(a[1]), int(a[2]), int(a[3]))
    elif cmd == "abandon":
        abandon(int(a[0]), int(a[1]))
    elif cmd == "refuse":
        refuse(int(a[0]), int(a[1]))
    elif cmd == "get":
        st, body = get(int(a[0]), a[1])
        sys.stdout.buffer.write(body)
        sys.stderr.write("status %s\n" % st)
        sys.exit(0 if st == 200 else 1)
