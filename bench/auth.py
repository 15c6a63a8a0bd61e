"""Sign-in and authenticated GET throughput next to a bare FastAPI endpoint, in the same run.

.venv/bin/python bench/auth.py [--seconds 5] [--threads 4]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import running_server, throughput  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()

    with running_server() as server:
        base = server.base
        server.cli("users", "create", "bench-user", "--password", "bench-pw")
        form = {"grant_type": "password", "username": "bench-user", "password": "bench-pw"}
        token = httpx.post(f"{base}/auth/signin", data=form).json()["access_token"]
        headers = {"Authorization": f"Bearer {token}"}

        def bare(c: httpx.Client) -> None:
            assert c.get(f"{base}/bench/bare").status_code == 200

        def user_info(c: httpx.Client) -> None:
            assert c.get(f"{base}/auth/userInfo", headers=headers).status_code == 200

        def sign_in(c: httpx.Client) -> None:
            assert c.post(f"{base}/auth/signin", data=form).status_code == 200

        rates = {
            "bare FastAPI GET": throughput(bare, seconds=args.seconds, threads=args.threads),
            "GET /auth/userInfo (bearer)": throughput(user_info, seconds=args.seconds, threads=args.threads),
            "POST /auth/signin (argon2)": throughput(sign_in, seconds=args.seconds, threads=args.threads),
        }
    baseline = rates["bare FastAPI GET"]
    print(f"{'endpoint':32} {'req/s':>10} {'vs bare':>8}")
    for name, rate in rates.items():
        print(f"{name:32} {rate:10.1f} {rate / baseline:8.2f}")


if __name__ == "__main__":
    main()
