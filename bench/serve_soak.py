#!/usr/bin/env python3
"""The soak run of `s2s serve` (docs/cli/serve.md): SECONDS of mixed good and bad
requests from CLIENTS threads on the loopback address, then a report.

    bench/serve_soak.py MODEL [SECONDS] [CLIENTS]

Good requests translate sentences of ../shared/data/fra.txt (one, or an array of two or
three) and are checked against `s2s translate -i` on the same sentences. Bad ones:
malformed JSON, invalid UTF-8, an unknown language, a body over --max-body, an unknown
path, a wrong method, a form body with a repeated field, a wrong type; now and then a
client sends its body too slowly (closed after --request-timeout) or opens connections
and leaves them idle. The server's resident memory (VmRSS) is read every second. The
report: requests by kind, wrong answers (must be 0), whether the server still answers,
and its memory after the first minute, at its peak and at the end."""
import http.client
import json
import os
import random
import socket
import subprocess
import sys
import threading
import time

S2S = os.environ.get("S2S", "./s2s")


def main():
    model = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 600
    clients = int(sys.argv[3]) if len(sys.argv) > 3 else 64
    out = "bench/out/soak"
    os.makedirs(out, exist_ok=True)
    with open("../shared/data/fra.txt", encoding="utf-8") as f:
        sents = [line.split("\t")[0] for i, line in enumerate(f) if i % 400 == 7][:300]
    with open(f"{out}/sentences.txt", "w", encoding="utf-8") as f:
        f.write("\n".join(sents) + "\n")
    want = subprocess.run([S2S, "translate", model, "-i", f"{out}/sentences.txt"], check=True,
                          capture_output=True, text=True).stdout.split("\n")[:len(sents)]
    answer = dict(zip(sents, want))

    srv = subprocess.Popen([S2S, "serve", model, "--port", "0", "--max-body", "65536",
                            "--request-timeout", "2", "--timeout", "3", "--max-conns", "200",
                            "--max-conns-per-ip", "200",
                            "--log", f"{out}/serve.log"], stdout=subprocess.PIPE, text=True)
    port = int(srv.stdout.readline().rsplit(":", 1)[1].strip("/\n"))
    counts, wrong, lock = {}, [], threading.Lock()
    stop = time.time() + seconds

    def count(kind):
        with lock:
            counts[kind] = counts.get(kind, 0) + 1

    def post(conn, path, body, ctype="application/json"):
        conn.request("POST", path, body=body, headers={"Content-Type": ctype})
        r = conn.getresponse()
        return r.status, r.read()

    def client(seed):
        rnd = random.Random(seed)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        while time.time() < stop:
            k = rnd.random()
            try:
                if k < 0.70:
                    q = rnd.sample(sents, rnd.choice([1, 1, 2, 3]))
                    body = json.dumps({"q": q if len(q) > 1 else q[0], "source": "en", "target": "fr"})
                    st, data = post(conn, "/translate", body.encode())
                    got = json.loads(data).get("translatedText") if st == 200 else None
                    exp = [answer[s] for s in q] if len(q) > 1 else answer[q[0]]
                    if got != exp:
                        wrong.append((q, st, data[:200]))
                    count("good")
                elif k < 0.95:
                    bad = rnd.choice([
                        (b'{"q": "a", "source": "en"', 400),
                        (b'{"q": "\xff\xfe", "source": "en", "target": "fr"}', 400),
                        (b'{"q": "a", "source": "en", "target": "de"}', 400),
                        (b'{"q": 5, "source": "en", "target": "fr"}', 400),
                        (b"x" * 70000, 413),
                    ])
                    st, data = post(conn, "/translate", bad[0])
                    if st != bad[1] or b'"error"' not in data:
                        wrong.append(("bad", st, data[:200]))
                    if st == 413:
                        conn.close()
                    count("bad")
                elif k < 0.97:
                    conn.request("GET", "/nope")
                    r = conn.getresponse()
                    r.read()
                    conn.request("GET", "/translate")
                    r2 = conn.getresponse()
                    r2.read()
                    if r.status != 404 or r2.status != 405:
                        wrong.append(("route", r.status, r2.status))
                    conn.close()
                    count("bad")
                elif k < 0.985:
                    st, data = post(conn, "/translate", b"q=a&q=b&source=en&target=fr",
                                    "application/x-www-form-urlencoded")
                    if st != 400:
                        wrong.append(("form", st, data[:200]))
                    count("bad")
                elif k < 0.995:
                    s = socket.create_connection(("127.0.0.1", port))
                    s.sendall(b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{")
                    t0 = time.time()
                    s.settimeout(10)
                    while time.time() - t0 < 8:
                        try:
                            s.sendall(b" ")
                        except OSError:
                            break
                        time.sleep(0.5)
                    s.close()
                    count("slow")
                else:
                    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(20)]
                    time.sleep(1)
                    for s in idle:
                        s.close()
                    count("idle")
            except (OSError, http.client.HTTPException) as e:
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                count("connection error")

    rss = []

    def watch():
        t0 = time.time()
        while time.time() < stop:
            with open(f"/proc/{srv.pid}/status") as f:
                kb = next(int(l.split()[1]) for l in f if l.startswith("VmRSS"))
            rss.append((time.time() - t0, kb))
            time.sleep(1)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    threads.append(threading.Thread(target=watch))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    alive = post(conn, "/translate", json.dumps({"q": sents[0], "source": "en", "target": "fr"}).encode())
    srv.terminate()
    rc = srv.wait()
    first = max(kb for t, kb in rss if t <= 60)
    peak = max(kb for t, kb in rss)
    print(f"{seconds:.0f} s, {clients} clients: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print(f"wrong answers: {len(wrong)}" + (f" (first: {wrong[0]})" if wrong else ""))
    print(f"still answering at the end: {alive[0] == 200 and json.loads(alive[1])['translatedText'] == answer[sents[0]]}; "
          f"exit status after SIGTERM: {rc}")
    print(f"VmRSS: {first / 1024:.1f} MiB at most in the first minute, peak {peak / 1024:.1f} MiB "
          f"({100 * (peak - first) / first:+.1f} %), end {rss[-1][1] / 1024:.1f} MiB")


if __name__ == "__main__":
    main()
