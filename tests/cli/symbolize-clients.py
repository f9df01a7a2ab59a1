#!/usr/bin/env python3
# Clients and fakes for run-symbolize-listen.sh (sfprof symbolize --listen),
# written for the test from the APIs' documentation, none of sfprof's code:
#
#   push-body PPROF.gz OUT [SERVICE]    a Pyroscope Connect PushRequest
#        (one series: __name__=process_cpu, service_name=SERVICE; one
#        sample whose rawProfile is the gzip pprof as given)
#   retag-build-id PPROF.gz OLD NEW OUT  the gzip pprof with build-id
#        string OLD replaced by NEW (same length): a file nobody has
#   post URL FILE CTYPE [ENCODING]   POST it, print "STATUS SECONDS BODY"
#   storm URL N PUSH OTLP            N POSTs at once (threads), even ones
#        the Push body, odd ones the OTLP body (gzip); print "OK/N
#        MAX_SECONDS" and each status other than 200 with its body
#   fake-debuginfod PORTFILE MODE    a debuginfod that answers every
#        request 500 (MODE 500) or holds it 60 s before a 500 (slow);
#        the number of requests it saw goes to PORTFILE.count
import gzip, http.server, socketserver, sys, threading, time
import urllib.request, urllib.error


def varint(v):
    out = b""
    while True:
        b = v & 0x7f
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(num, data):
    return varint(num << 3 | 2) + varint(len(data)) + data


def label(name, value):
    return field(1, name.encode()) + field(2, value.encode())


def post(url, body, ctype, enc=None, timeout=120):
    req = urllib.request.Request(url, data=body, method="POST")
    req.add_header("Content-Type", ctype)
    if enc:
        req.add_header("Content-Encoding", enc)
    t = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, time.monotonic() - t, r.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, time.monotonic() - t, e.read().decode(errors="replace")
    except Exception as e:
        return 0, time.monotonic() - t, str(e)


def main():
    cmd = sys.argv[1]
    if cmd == "push-body":
        raw = open(sys.argv[2], "rb").read()
        svc = sys.argv[4] if len(sys.argv) > 4 else "app"
        series = (field(1, label("__name__", "process_cpu")) +
                  field(1, label("service_name", svc)) +
                  field(2, field(1, raw) +
                        field(2, b"6d1c2f0e-9a7b-4c3d-8e5f-0a1b2c3d4e5f")))
        open(sys.argv[3], "wb").write(field(1, series))
    elif cmd == "retag-build-id":
        raw = gzip.decompress(open(sys.argv[2], "rb").read())
        old, new = sys.argv[3].encode(), sys.argv[4].encode()
        assert len(old) == len(new) and raw.count(old) == 1
        open(sys.argv[5], "wb").write(gzip.compress(raw.replace(old, new)))
    elif cmd == "post":
        body = open(sys.argv[3], "rb").read()
        st, secs, text = post(sys.argv[2], body, sys.argv[4],
                              sys.argv[5] if len(sys.argv) > 5 else None)
        print(st, "%.1f" % secs, text.strip().replace("\n", " | "))
    elif cmd == "storm":
        url, n = sys.argv[2], int(sys.argv[3])
        bodies = [open(sys.argv[4], "rb").read(),
                  gzip.compress(open(sys.argv[5], "rb").read())]
        res = [None] * n
        go = threading.Event()

        def one(i):
            go.wait()
            if i % 2 == 0:
                res[i] = post(url + "/push.v1.PusherService/Push", bodies[0],
                              "application/proto")
            else:
                res[i] = post(url + "/v1development/profiles", bodies[1],
                              "application/x-protobuf", "gzip")
        th = [threading.Thread(target=one, args=(i,)) for i in range(n)]
        for t in th:
            t.start()
        go.set()
        for t in th:
            t.join()
        ok = sum(1 for r in res if r[0] == 200)
        print("%d/%d %.1f" % (ok, n, max(r[1] for r in res)))
        for r in res:
            if r[0] != 200:
                print(r[0], r[2][:200])
    elif cmd == "fake-debuginfod":
        pfile, mode = sys.argv[2], sys.argv[3]
        seen = [0]
        lock = threading.Lock()

        class H(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                with lock:
                    seen[0] += 1
                    open(pfile + ".count", "w").write("%d\n" % seen[0])
                if mode == "slow":
                    time.sleep(60)
                try:
                    self.send_response(500)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                except OSError:
                    pass

            def log_message(self, *a):
                pass

        class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
        srv = S(("127.0.0.1", 0), H)
        open(pfile, "w").write("%d\n" % srv.server_address[1])
        srv.serve_forever()


main()
