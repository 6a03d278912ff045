#!/usr/bin/env python3
"""What encryption costs: a first save and a restore into a new directory of a generated
source-like tree, on a plain and an encrypted store, locally and on a moto S3 server on
loopback, each the median of a few runs, printed as times and encrypted/plain ratios.

    python3 bench/encryption.py [--cairn target/release/cairn] [--files 3000] [--runs 3]

Needs `moto_server` (scripts/deps/s3-server.sh). Standard library only.
"""

import argparse
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def make_tree(root, files, seed=7):
    rng = random.Random(seed)
    words = [f"ident{i}" for i in range(400)] + ["fn", "let", "return", "if", "else", "match", "{", "}", "(", ")"]
    for i in range(files):
        d = os.path.join(root, f"pkg{i % 60:02d}", f"mod{i % 7}")
        os.makedirs(d, exist_ok=True)
        lines = rng.randint(20, 200)
        text = "\n".join(" ".join(rng.choice(words) for _ in range(rng.randint(3, 12))) for _ in range(lines))
        with open(os.path.join(d, f"file{i}.rs"), "w") as f:
            f.write(text + "\n")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_moto():
    port = free_port()
    proc = subprocess.Popen(["moto_server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, port
        except OSError:
            time.sleep(0.1)
    proc.kill()
    sys.exit("moto_server did not start")


def create_bucket(port, bucket):
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(f"PUT /{bucket} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode())
        s.recv(1024)


def timed(cmd, env, cwd):
    start = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cairn", default="target/release/cairn")
    ap.add_argument("--files", type=int, default=3000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    cairn = os.path.abspath(args.cairn)
    work = tempfile.mkdtemp(prefix="cairn-enc-bench-")
    moto, port = start_moto()
    try:
        tree = os.path.join(work, "tree")
        make_tree(tree, args.files)
        env = {
            "PATH": os.environ.get("PATH", ""),
            "CAIRN_PASSWORD": "bench password",
            "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
            "AWS_ALLOW_HTTP": "true",
            "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_REGION": "us-east-1",
        }
        variants = [("local", "plain", []), ("local", "encrypted", ["--encrypt"]),
                    ("s3", "plain", ["--no-encrypt"]), ("s3", "encrypted", [])]
        results = {}
        for where, kind, init_flags in variants:
            saves, restores = [], []
            for run in range(args.runs):
                home = os.path.join(work, f"home-{where}-{kind}-{run}")
                os.makedirs(home)
                run_env = dict(env, HOME=home)
                if where == "local":
                    store = os.path.join(work, f"store-{kind}-{run}")
                else:
                    bucket = f"bench-{kind}-{run}"
                    create_bucket(port, bucket)
                    store = f"s3://{bucket}/cairn"
                subprocess.run([cairn, "--store", store, "init", *init_flags], env=run_env, check=True,
                               stdout=subprocess.DEVNULL)
                saves.append(timed([cairn, "--store", store, "save", tree, "--name", "one"], run_env, work))
                out = os.path.join(work, f"out-{where}-{kind}-{run}")
                restores.append(timed([cairn, "--store", store, "restore", "one", "--to", out], run_env, work))
                shutil.rmtree(out)
            results[(where, kind)] = (statistics.median(saves), statistics.median(restores))
        print(f"{args.files} files, median of {args.runs} runs, {cairn}")
        print(f"{'store':<8}{'save plain':>12}{'encrypted':>11}{'ratio':>7}{'restore plain':>15}{'encrypted':>11}{'ratio':>7}")
        for where in ("local", "s3"):
            (ps, pr), (es, er) = results[(where, "plain")], results[(where, "encrypted")]
            print(f"{where:<8}{ps:>11.2f}s{es:>10.2f}s{es / ps:>7.2f}{pr:>14.2f}s{er:>10.2f}s{er / pr:>7.2f}")
    finally:
        moto.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
