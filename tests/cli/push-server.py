#!/usr/bin/env python3
# A test backend for `sfprof push` / `sfprof agent` (tests/cli/run-push.sh):
# speaks Pyroscope's Connect push (POST /push.v1.PusherService/Push,
# application/proto), its legacy POST /ingest, and OTLP/HTTP profiles
# (POST /v1development/profiles, gzip), saving every body it is sent.
#
# Written for the tests from the APIs' documentation; the protobuf of the
# push request is read by the few lines of wire-format decoding below, not
# by sfprof's code.  What each request got is logged to DIR/requests.log:
#   SEQ PATH STATUS key=value...
# a Connect push as "series=N samples=M id=UUID..." (every sample's id, in
# order), its files REQ.sJ.labels (series J's labels, one name=value a
# line) and REQ.sJ-K.pb.gz (series J's sample K); an /ingest body as
# REQ.s0-0.pb.gz beside REQ.query.
#
# Faults, to exercise the sink's retries:
#   --script 503,429   answer the first requests with these statuses
#   --die-after K      exit abruptly when request K+1 arrives (before its
#                      body is read: the client sees the connection drop)
#   --delay-first S    answer the first request only after S seconds
#   --blackhole        listen and never accept nor read anything
import argparse, base64, gzip, http.server, json, os, socket, socketserver
import sys, threading, time, urllib.parse


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(field number, value) of a protobuf message: ints or bytes."""
    i, out = 0, []
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            v = b[i:i + n]
            if len(v) != n:
                raise ValueError("truncated field %d" % f)
            i += n
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        out.append((f, v))
    return out


def push_request(body):
    """PushRequest -> [(labels [(name, value)], [(raw_profile, ID)])]."""
    series = []
    for f, s in fields(body):
        if f != 1:
            continue
        labels, samples = [], []
        for g, v in fields(s):
            if g == 1:
                d = dict(fields(v))
                labels.append((d.get(1, b"").decode(), d.get(2, b"").decode()))
            elif g == 2:
                d = dict(fields(v))
                samples.append((d.get(1, b""), d.get(2, b"").decode()))
        series.append((labels, samples))
    return series


class State:
    lock = threading.Lock()
    seq = 0
    script = []
    die_after = -1
    delay_first = 0.0
    out = "."


def log(line):
    with open(os.path.join(State.out, "requests.log"), "a") as f:
        f.write(line + "\n")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, status, body=b"", ctype="application/proto"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        with State.lock:
            n = State.seq
            State.seq += 1
            if n == State.die_after:
                log("%d %s died" % (n, self.path))
                os._exit(0)
            status = State.script[n] if n < len(State.script) else 200
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if n == 0 and State.delay_first:
            time.sleep(State.delay_first)
        url = urllib.parse.urlsplit(self.path)
        extra = []
        pre = os.path.join(State.out, "req-%03d" % n)
        with open(pre + ".body", "wb") as f:
            f.write(body)
        with open(pre + ".headers", "w") as f:
            for k, v in self.headers.items():
                f.write("%s: %s\n" % (k.lower(), v))
        try:
            if url.path == "/push.v1.PusherService/Push":
                if self.headers.get("Content-Type") != "application/proto":
                    status = 415
                series = push_request(body)
                # what the request carried, before any of it: a push with
                # an extra series or a second sample says so on its line
                extra.append("series=%d" % len(series))
                extra.append("samples=%d" % sum(len(s) for _, s in series))
                for j, (labels, samples) in enumerate(series):
                    with open("%s.s%d.labels" % (pre, j), "w") as f:
                        for k, v in labels:
                            f.write("%s=%s\n" % (k, v))
                    for m, (raw, pid) in enumerate(samples):
                        with open("%s.s%d-%d.pb.gz" % (pre, j, m), "wb") as f:
                            f.write(raw)
                        extra.append("id=%s" % pid)
            elif url.path == "/ingest":
                q = urllib.parse.parse_qs(url.query)
                with open(pre + ".query", "w") as f:
                    for k in sorted(q):
                        f.write("%s=%s\n" % (k, q[k][0]))
                with open(pre + ".s0-0.pb.gz", "wb") as f:
                    f.write(body)
            elif url.path == "/v1development/profiles":
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.headers.get("Content-Type") != "application/x-protobuf":
                    status = 415
                with open(pre + ".otlp", "wb") as f:
                    f.write(body)
            else:
                status = 404
        except Exception as e:  # a body that does not decode
            extra.append("error=%s" % str(e).replace(" ", "_"))
            status = 400
        log("%d %s %d %s" % (n, url.path, status, " ".join(extra)))
        if status == 200:
            # Connect: a unary response is the (empty) PushResponse.
            self.reply(200)
        else:
            self.reply(status, json.dumps({"code": "unavailable" if status >= 500
                                           else "resource_exhausted" if status == 429
                                           else "invalid_argument"}).encode(),
                       "application/json")


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--dir", default=".")
    ap.add_argument("--script", default="")
    ap.add_argument("--die-after", type=int, default=-1)
    ap.add_argument("--delay-first", type=float, default=0.0)
    ap.add_argument("--blackhole", action="store_true")
    a = ap.parse_args()
    State.out = a.dir
    State.script = [int(x) for x in a.script.split(",") if x]
    State.die_after = a.die_after
    State.delay_first = a.delay_first
    os.makedirs(a.dir, exist_ok=True)
    if a.blackhole:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", a.port))
        s.listen(64)
        port = s.getsockname()[1]
    else:
        srv = Server(("127.0.0.1", a.port), Handler)
        port = srv.server_address[1]
    if a.port_file:
        tmp = a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.rename(tmp, a.port_file)
    if a.blackhole:
        while True:
            time.sleep(3600)
    srv.serve_forever()


if __name__ == "__main__":
    main()
