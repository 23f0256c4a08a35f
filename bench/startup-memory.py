#!/usr/bin/env python3
"""Start-up time and memory of `s2s train DIR -o M --steps 10` (docs/distributed.md).

usage: bench/startup-memory.py TAG=S2S:DIR [TAG=S2S:DIR ...]

Runs each TAG three times, alternating, and prints per run and as medians: start-up (the
time until the `train: N pairs` line), the peak resident set (VmHWM) and the peaks of
its anonymous and file-backed parts (RssAnon, RssFile of /proc/PID/status, sampled every
5 ms), and the anonymous memory at the `train:` line. Models go to /tmp/startup-TAG.s2s.
"""
def status(pid):
    d = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmHWM", "RssAnon", "RssFile"):
                    d[k] = int(v.split()[0])
    except (FileNotFoundError, ProcessLookupError, ValueError):
        pass
    return d
def run(binary, d, tag):
    m = f"/tmp/startup-{tag}.s2s"
    for suf in ["", ".last", ".state", ".log.jsonl", ".lock"]:
        try: os.unlink(m + suf)
        except FileNotFoundError: pass
    t0 = time.monotonic()
    p = subprocess.Popen([binary, "train", d, "-o", m, "--steps", "10"], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    got = {}
    lines = []
    def reader():
        for line in p.stderr:
            lines.append(line)
            if "start" not in got and line.startswith("train: "):
                got["start"] = time.monotonic() - t0
                got["anon0"] = status(p.pid).get("RssAnon", 0)
    th = threading.Thread(target=reader); th.start()
    hwm = anon = filem = 0
    while p.poll() is None:
        s = status(p.pid)
        hwm = max(hwm, s.get("VmHWM", 0)); anon = max(anon, s.get("RssAnon", 0)); filem = max(filem, s.get("RssFile", 0))
        time.sleep(0.005)
    th.join()
    start = got.get("start", -1)
    total = time.monotonic() - t0
    if p.returncode != 0: print("FAIL", "".join(lines)); sys.exit(1)
    return start, hwm, anon, filem, total, got.get("anon0", 0)
res = {}
for rnd in range(3):
    for spec in sys.argv[1:]:
        tag, rest = spec.split("=", 1); binary, d = rest.split(":", 1)
        r = run(binary, d, tag)
        res.setdefault(tag, []).append(r)
        print(f"run {rnd+1} {tag}: start-up {r[0]:.2f} s, peak RSS {r[1]/1024:.1f} MiB, peak anon {r[2]/1024:.1f} MiB, peak file {r[3]/1024:.1f} MiB, total {r[4]:.2f} s, anon at start-up {r[5]/1024:.1f} MiB", flush=True)
for tag, v in res.items():
    med = [statistics.median(x[i] for x in v) for i in range(6)]
    print(f"MEDIAN {tag}: start-up {med[0]:.2f} s, peak RSS {med[1]/1024:.1f} MiB, peak anon {med[2]/1024:.1f} MiB, peak file {med[3]/1024:.1f} MiB, total {med[4]:.2f} s, anon at start-up {med[5]/1024:.1f} MiB", flush=True)
